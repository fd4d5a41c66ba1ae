import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { usableBanks } from '../../src/catalogue/banks.ts';
import { PaymentProviderError, type ProviderBank } from '../../src/providers/payments/payment-provider.ts';
import { createWorld, get, ok, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';

// listBanks (API.md section 16): the payment provider's bank list as a person picks from it (active
// Nigerian NUBAN banks, one per code, by name), read through the catalogue cache: one provider call
// per 30 minutes, the stale list while the provider is down, 502 with nothing cached.

type Bank = { code: string; name: string };

const nuban = (code: string, name: string, extra: Partial<ProviderBank> = {}): ProviderBank => ({
  code,
  name,
  active: true,
  type: 'nuban',
  country: 'Nigeria',
  currency: 'NGN',
  ...extra,
});

describe('usableBanks', () => {
  it('keeps active Nigerian NUBAN banks, the first of each code, sorted by name whatever the case', () => {
    assert.deepEqual(
      usableBanks([
        nuban('057', 'Zenith Bank'),
        nuban('063', 'Diamond Bank', { active: false }),
        nuban('063', 'Access Bank (Diamond)'),
        nuban('044', 'access bank'),
        nuban('044', 'Access Bank plc'),
        nuban('GH01', 'Ghana Commercial Bank', { country: 'Ghana', currency: 'GHS', type: 'ghipss' }),
        nuban('MM1', 'M-Pesa', { type: 'mobile_money' }),
        nuban('ZA1', 'Rand Bank', { currency: 'ZAR' }),
        nuban('50211', 'Kuda Bank'),
      ]),
      [
        { code: '044', name: 'access bank' },
        { code: '063', name: 'Access Bank (Diamond)' },
        { code: '50211', name: 'Kuda Bank' },
        { code: '057', name: 'Zenith Bank' },
      ],
    );
  });
});

describe('listBanks', () => {
  let world: World;
  let user: SignedIn;
  let providerCalls = 0;
  let failing = false;

  before(async () => {
    world = await createWorld();
    user = await signIn(world);
    const payments = world.ctx.payments;
    const original = payments.listBanks.bind(payments);
    payments.listBanks = async () => {
      providerCalls += 1;
      if (failing) throw new PaymentProviderError('did not answer (test)', { definite: false });
      return original();
    };
  });
  after(() => world.close());

  const banks = async (who: SignedIn = user) =>
    ok(await get<{ items: Bank[] }>(world, 'listBanks', {}, { token: who.accessToken })).items;

  it("lists the sandbox provider's banks by name, without the retired one or the second name of one", async () => {
    const items = await banks();
    const names = items.map((b) => b.name);
    assert.deepEqual(
      names,
      names.toSorted((a, b) => a.localeCompare(b, 'en', { sensitivity: 'base' })),
    );
    assert.equal(new Set(items.map((b) => b.code)).size, items.length, 'one bank per code');
    assert.deepEqual(items.slice(0, 3), [
      { code: '120001', name: '9mobile 9Payment Service Bank' },
      { code: '044', name: 'Access Bank' },
      { code: '063', name: 'Access Bank (Diamond)' },
    ]);
    assert.ok(!names.includes('Diamond Bank'), 'a retired bank is not offered');
    assert.deepEqual(
      items.filter((b) => b.code === '50211'),
      [{ code: '50211', name: 'Kuda Bank' }],
    );
    assert.ok(items.some((b) => b.code === '058' && b.name === 'Guaranty Trust Bank'));
  });

  it('asks the provider once per 30 minutes, and answers from the stale list while it is down', async () => {
    const first = await banks();
    const before = providerCalls;
    assert.deepEqual(await banks(), first);
    assert.equal(providerCalls, before, 'the second read is the cached list');

    world.ctx.sandboxClock!.advance(31 * 60);
    failing = true;
    try {
      const fresh = await signIn(world);
      assert.deepEqual(await banks(fresh), first);
      assert.equal(providerCalls, before + 1, 'the stale list was refreshed once, and failed');
    } finally {
      failing = false;
    }
  });

  it('answers 502 UPSTREAM_UNAVAILABLE with nothing cached, also for a list with no usable bank', async () => {
    const empty = await createWorld();
    try {
      const someone = await signIn(empty);
      empty.ctx.payments.listBanks = async () => {
        throw new PaymentProviderError('did not answer (test)', { definite: false });
      };
      expectError(
        await get(empty, 'listBanks', {}, { token: someone.accessToken }),
        502,
        'UPSTREAM_UNAVAILABLE',
      );
      empty.ctx.payments.listBanks = async () => [nuban('063', 'Diamond Bank', { active: false })];
      expectError(
        await get(empty, 'listBanks', {}, { token: someone.accessToken }),
        502,
        'UPSTREAM_UNAVAILABLE',
      );
    } finally {
      await empty.close();
    }
  });

  it('needs a signed-in caller and takes no parameters', async () => {
    expectError(await get(world, 'listBanks'), 401, 'UNAUTHENTICATED');
    const someone = await signIn(world);
    expectError(
      await get(world, 'listBanks', { country: 'ghana' }, { token: someone.accessToken }),
      400,
      'VALIDATION_ERROR',
    );
  });
});
