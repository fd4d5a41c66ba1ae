import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkOrderLink } from '../../src/vtu/social-links.ts';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { until } from '../helpers/until.ts';
import { createWorld, get, ok, type World } from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { advanceClock, type Buyer, buyCall, buyer, current } from './purchase-support.ts';

// Social orders end to end (API.md section 14): the catalogue at retail rates, the checks before the
// debit, the sandbox panel's outcomes by the quantity's last digit, and the partial refund to the kobo.

/** Resolves `<IPv6 address, colons as dashes>.rebind.example` to that address; nothing else resolves. */
const rebindResolver = async (host: string): Promise<string[]> => {
  const spelled = /^([0-9a-f-]+)\.rebind\.example$/.exec(host);
  if (spelled === null)
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return [spelled[1]!.replaceAll('-', ':')];
};

type SocialService = { id: string; name: string; category: string; rate: number; min: number; max: number };

describe('social orders', () => {
  let world: World;
  let services: SocialService[];
  before(async () => {
    // Names under rebind.example answer with the IPv6 address their first label spells (colons
    // written as dashes); any other name does not resolve, which the sandbox allows.
    world = await createWorld({ resolveHost: rebindResolver });
  });
  after(() => world.close());

  const listed = async (user: Buyer, query: Record<string, string> = {}) =>
    ok(await get<{ items: SocialService[] }>(world, 'listSocialServices', query, { token: user.accessToken }))
      .items;
  /** rate × quantity / 1000 in naira, rounded up to the kobo. */
  const priceOf = (rate: number, quantity: number) =>
    Number((BigInt(Math.round(rate * 100)) * BigInt(quantity) + 999n) / 1000n) / 100;
  const order = (
    user: Buyer,
    service: SocialService,
    quantity: number,
    extra: Record<string, unknown> = {},
  ) =>
    buyCall(world, user, 'buySocialService', {
      serviceId: service.id,
      link: 'https://instagram.com/p/billrail',
      quantity,
      amount: priceOf(service.rate, quantity),
      ...extra,
    });
  const placed = async (user: Buyer, service: SocialService, quantity: number) => {
    const accepted = ok(await order(user, service, quantity));
    assert.equal(accepted.status, 'processing');
    assert.equal(accepted.direction, 'debit');
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    return current(world, user, accepted.id);
  };

  it('lists the panel services at retail rates, filtered by category', async () => {
    const user = await buyer(world, 0);
    services = await listed(user);
    const likes = services.find((s) => s.name === 'Instagram Likes [Instant]');
    assert.deepEqual(likes, {
      id: '1002',
      name: 'Instagram Likes [Instant]',
      category: 'Instagram Likes',
      rate: 320.5,
      min: 10,
      max: 50_000,
    });
    assert.ok(
      !services.some((s) => s.name.includes('Custom Comments')),
      'only services ordered by link and quantity',
    );
    const tiktok = await listed(user, { category: 'tiktok views' });
    assert.deepEqual(
      tiktok.map((s) => s.id),
      ['2001'],
    );
  });

  it('completes an order at once (quantity ending 0): charged the price, nothing refunded', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    const done = await placed(user, likes, 100);
    assert.equal(done.status, 'success');
    assert.equal(done.amount, 32.05);
    assert.equal(done.refunded, undefined);
    assert.equal(await walletKobo(world, user.userId), 100_000n - 3_205n);
  });

  it('cancels (quantity ending 1): failed and refunded in full', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    const done = await placed(user, likes, 101);
    assert.equal(done.status, 'failed');
    assert.equal(await walletKobo(world, user.userId), 100_000n);
  });

  it('fills in part (quantity ending 2): success with the unfilled half refunded to the kobo', async () => {
    const user = await buyer(world, 1_000);
    // TikTok likes at the panel's ₦12.345 per 1,000, which the catalogue rounds up to ₦12.35.
    const likes = { ...services.find((s) => s.id === '2002')! };
    assert.equal(likes.rate, 12.35, 'the retail rate is rounded up to the kobo');
    const done = await placed(user, likes, 52);
    // 52 at ₦12.35 per 1,000 = 64.22 kobo → 65 kobo; 26 undelivered → 65 × 26 / 52 = 32.5 → 32 kobo
    // back (rounded down: the buyer pays for what was delivered rounded up, as for the price).
    assert.equal(done.status, 'success');
    assert.equal(done.amount, 0.65);
    assert.equal(done.refunded, 0.32);
    assert.equal(done.units, '26 of 52 delivered');
    assert.equal(await walletKobo(world, user.userId), 100_000n - 65n + 32n);
    await assertLedgerOk(world);
  });

  it('stays processing while in progress (quantity ending 3), then completes on requery', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    const first = await placed(user, likes, 103);
    assert.equal(first.status, 'processing');
    await advanceClock(world, 61);
    const later = await current(world, user, first.id);
    assert.equal(later.status, 'success');
    assert.equal(await walletKobo(world, user.userId), 100_000n - 3_302n);
  });

  it('refuses quantities outside the service bounds, a wrong price and unknown services before any debit', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    const low = expectError(await order(user, likes, 9), 422, 'BELOW_MINIMUM');
    assert.deepEqual(low.details, { limit: 10, unit: 'count' }, 'a quantity, not naira');
    const high = expectError(await order(user, likes, 50_001), 422, 'ABOVE_MAXIMUM');
    assert.deepEqual(high.details, { limit: 50_000, unit: 'count' });
    const changed = expectError(await order(user, likes, 100, { amount: 32 }), 409, 'PRICE_CHANGED');
    assert.equal(changed.details?.amount, 32.05);
    expectValidationAt(await order(user, { ...likes, id: '999999' }, 100), 'data.serviceId');
    expectValidationAt(await order(user, likes, 100, { quantity: 10.5 }), 'data.quantity');
    assert.equal(await walletKobo(world, user.userId), 100_000n);
  });

  it('refuses links that are not https URLs of a public host', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    for (const link of [
      'http://instagram.com/p/x',
      'not a link',
      'https://user:pw@instagram.com/p/x',
      'https://localhost/p/x',
      'https://127.0.0.1/p/x',
      'https://10.1.2.3/p/x',
      'https://192.168.0.10/p/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/p/x',
      'https://[fd00:ec2::254]/p/x',
      'https://metadata.google.internal/computeMetadata',
      'https://metadata/computeMetadata',
      'https://printer.local/x',
      // IPv6 forms that carry an internal IPv4 address (169.254.169.254, 127.0.0.1, 10.1.2.3).
      'https://[64:ff9b::a9fe:a9fe]/latest/meta-data', // NAT64
      'https://[64:ff9b::169.254.169.254]/latest/meta-data',
      'https://[64:ff9b:1::808:808]/p/x', // NAT64 local-use: refused whatever it carries
      'https://[2002:a9fe:a9fe::1]/latest/meta-data', // 6to4
      'https://[::a9fe:a9fe]/latest/meta-data', // IPv4-compatible
      'https://[::ffff:169.254.169.254]/latest/meta-data', // IPv4-mapped
      'https://[2001:0:808:808:0:0:5601:5601]/latest/meta-data', // Teredo, client 169.254.169.254
      'https://[2001:0:7f00:1:0:0:f7f7:f7f7]/p/x', // Teredo, server 127.0.0.1
      'https://[2002:a01:203::1]/p/x',
    ]) {
      expectValidationAt(await order(user, likes, 100, { link }), 'data.link');
    }
    assert.equal(await walletKobo(world, user.userId), 100_000n);
  });

  it('judges a link in an IPv6 form carrying a public IPv4 as that public address', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    // 8.8.8.8 as 6to4, NAT64 and Teredo: public IP literals are links like any other.
    for (const link of [
      'https://[2002:808:808::1]/p/x',
      'https://[64:ff9b::808:808]/p/x',
      'https://[2001:0:808:808:0:0:f7f7:f7f7]/p/x',
    ]) {
      const accepted = ok(await order(user, likes, 100, { link }));
      assert.equal(accepted.status, 'processing', link);
      await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    }
    assert.equal(await walletKobo(world, user.userId), 100_000n - 3n * 3_205n);
  });

  it('refuses a link whose host resolves to an IPv6 form carrying an internal IPv4, nothing debited', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    for (const address of [
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::808:808',
      '2002:a9fe:a9fe::',
      '::a9fe:a9fe',
      '::ffff:a9fe:a9fe',
      '2001:0:808:808:0:0:5601:5601',
    ]) {
      const link = `https://${address.replaceAll(':', '-')}.rebind.example/p/x`;
      const refused = expectValidationAt(await order(user, likes, 100, { link }), 'data.link');
      assert.match(refused.message, /internal address/, address);
    }
    assert.equal(await walletKobo(world, user.userId), 100_000n);
    // The same host answering 8.8.8.8 in the NAT64 form is public.
    const accepted = ok(await order(user, likes, 100, { link: 'https://64-ff9b--808-808.rebind.example/p' }));
    assert.equal(accepted.status, 'processing');
  });

  it('resolves a link host and refuses one that points inside (outside the sandbox, an unknown host too)', async () => {
    const resolvingTo =
      (...addresses: string[]) =>
      async () =>
        addresses;
    await checkOrderLink('https://instagram.com/p/x', {
      allowUnresolved: false,
      resolve: resolvingTo('157.240.1.174'),
    });
    for (const addresses of [
      ['127.0.0.1'],
      ['157.240.1.174', '10.0.0.5'],
      ['::ffff:169.254.169.254'],
      ['157.240.1.174', '64:ff9b::a9fe:a9fe'],
      ['2002:a9fe:a9fe::1'],
      ['2001:0:808:808:0:0:5601:5601'],
    ]) {
      await assert.rejects(
        checkOrderLink('https://evil.example/p', {
          allowUnresolved: false,
          resolve: resolvingTo(...addresses),
        }),
        /internal address/,
      );
    }
    const missing = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await assert.rejects(
      checkOrderLink('https://nowhere.example/p', { allowUnresolved: false, resolve: missing }),
      /does not exist/,
    );
    await checkOrderLink('https://nowhere.example/p', { allowUnresolved: true, resolve: missing });
    const dnsDown = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    await assert.rejects(
      checkOrderLink('https://instagram.com/p', { allowUnresolved: false, resolve: dnsDown }),
      (error: { code?: string }) => error.code === 'UPSTREAM_UNAVAILABLE',
    );
  });

  it('tops up the panel float just in time when it would not cover the order, then sends it', async () => {
    const user = await buyer(world, 1_000);
    const setPanelBalance = await fetch(`${world.baseUrl}/__sandbox/providers/social/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 10 }),
    });
    assert.equal(setPanelBalance.status, 200);
    const likes = services.find((s) => s.id === '1002')!;
    const accepted = ok(await order(user, likes, 100));
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    const transfers = await world.ctx.db
      .selectFrom('float_top_ups')
      .select(['reference', 'amount'])
      .where('provider', '=', 'social')
      .execute();
    assert.equal(transfers.length, 1, 'one float top-up of the panel');
    assert.equal((await current(world, user, accepted.id)).status, 'processing', 'waiting, unsent');
    // The sandbox settles the transfer and tells the service by its signed webhook; its event sends
    // the waiting order, which completes.
    await until(async () => {
      const [transfer] = await world.ctx.db
        .selectFrom('float_top_ups')
        .select('status')
        .where('reference', '=', transfers[0]!.reference)
        .execute();
      return transfer?.status === 'success';
    }, 'the top-up settled');
    await runDomainEvents(world);
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    assert.equal((await current(world, user, accepted.id)).status, 'success');
    assert.equal(await walletKobo(world, user.userId), 100_000n - 3_205n);
    await assertLedgerOk(world);
  });

  it('needs Tier 1 and the PIN before anything about the order is looked at', async () => {
    const user = await buyer(world, 1_000);
    const likes = services.find((s) => s.id === '1002')!;
    expectError(await order(user, likes, 100, { pin: '1111' }), 403, 'INVALID_PIN');
    assert.equal(await walletKobo(world, user.userId), 100_000n);
  });
});
