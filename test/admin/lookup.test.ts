import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { lagosDate } from '../../src/lagos-time.ts';
import { BOUNDED, chargeSuccess, createIntent, processed, sendWebhook } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { type Buyer, bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The operators' look-ups of issue 40 ("every incident without SQL") over HTTP: adminGetUser finds a
// person by id or by their phone as people write it, with the account's freeze (its reason is the
// operator's to see) and the wallet's latest movements as the person's own history gives them;
// adminListPurchases lists everyone's purchases by status, provider, person and date, with the
// counts by provider, status and failure reason that BillrailPurchasesFailing asks for.

type Movement = { id: string; kind: string; direction: string; amount: number; reference: string };
type Person = {
  id: string;
  phone: string;
  firstName: string | null;
  lastName: string | null;
  kycTier: number;
  roles: string[];
  frozen: boolean;
  frozenAt: string | null;
  frozenReason: string | null;
  frozenBy: string | null;
  createdAt: string;
  wallet: { balance: number; lockedSavings: number; lockedBonus: number; currency: string };
  movements: Movement[];
  movementsTotal: number;
};
type Purchase = {
  id: string;
  reference: string;
  userId: string;
  service: string;
  provider: string;
  amount: number;
  status: string;
  failureReason: string | null;
  createdAt: string;
  completedAt: string | null;
};
type Count = { provider: string; status: string; failureReason: string | null; count: number };
type PurchasePage = { items: Purchase[]; limit: number; offset: number; total: number; counts: Count[] };

const e164 = (phone: string) => `+234${phone.slice(1)}`;

describe(`the operators' look-ups (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhone = uniquePhone();
  let world: World;
  let admin: SignedIn;
  /** Topped up, then one airtime delivered and one refused by the provider (refunded). */
  let alice: Buyer;
  /** One airtime delivered, two minutes after alice's purchases. */
  let bob: Buyer;
  let aliceBought: { delivered: Purchase; refused: Purchase };
  let bobBought: Purchase;
  /** An instant between alice's purchases and bob's. */
  let between: string;

  const lookUp = (input: Record<string, unknown>, as: SignedIn = admin) =>
    get<Person>(world, 'adminGetUser', input, { token: as.accessToken });
  const purchases = (input: Record<string, unknown>, as: SignedIn = admin) =>
    get<PurchasePage>(world, 'adminListPurchases', input, { token: as.accessToken });

  async function topUp(who: SignedIn, naira: number): Promise<void> {
    const intent = await createIntent(world, who, naira);
    const body = chargeSuccess(intent.reference, naira * 100);
    assert.equal((await sendWebhook(world, body)).status, 200);
    assert.equal((await processed(world, body)).outcome, 'credited');
  }

  const airtime = async (user: Buyer, last: string): Promise<Purchase> => {
    const record = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn(last), amount: 100 });
    return { ...record, userId: user.userId } as unknown as Purchase;
  };

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: e164(adminPhone) } });
    admin = await signIn(world, adminPhone);
    alice = await buyer(world, 0);
    await topUp(alice, 5_000);
    // The sandbox's provider delivers to a number ending in 5 and refuses one ending in 1 (API.md 8).
    aliceBought = { delivered: await airtime(alice, '5'), refused: await airtime(alice, '1') };
    world.ctx.sandboxClock!.advance(60);
    between = world.ctx.clock.now().toISOString();
    world.ctx.sandboxClock!.advance(60);
    bob = await buyer(world, 1_000);
    bobBought = await airtime(bob, '5');
  });
  after(() => world?.close());

  it(
    'finds a person by id and by their phone in every spelling, with the wallet as their history gives it',
    BOUNDED,
    async () => {
      const byId = ok(await lookUp({ userId: alice.userId }));
      for (const phone of [alice.phone, e164(alice.phone), e164(alice.phone).slice(1)]) {
        assert.deepEqual(ok(await lookUp({ phone })), byId, `by phone as ${phone}`);
      }
      assert.equal(byId.id, alice.userId);
      assert.equal(byId.phone, e164(alice.phone));
      assert.equal(byId.kycTier, 1);
      assert.deepEqual(byId.roles, ['user']);
      assert.deepEqual(
        [byId.frozen, byId.frozenAt, byId.frozenReason, byId.frozenBy],
        [false, null, null, null],
      );
      assert.ok(Date.parse(byId.createdAt) <= world.ctx.clock.now().getTime());

      assert.deepEqual(aliceBought.delivered.status, 'success');
      assert.deepEqual(aliceBought.refused.status, 'failed');
      // Newest first: the refused purchase's refund and debit, the delivered one's debit, the top-up.
      assert.deepEqual(
        byId.movements.map((m) => [m.kind, m.direction]),
        [
          ['refund', 'credit'],
          ['purchase', 'debit'],
          ['purchase', 'debit'],
          ['topup', 'credit'],
        ],
      );
      assert.equal(byId.movementsTotal, 4);
      const own = ok(
        await get<{ items: Movement[] }>(
          world,
          'listTransactions',
          { limit: 50 },
          { token: alice.accessToken },
        ),
      );
      assert.deepEqual(byId.movements, own.items, "the person's own history, entry for entry");
      const wallet = ok(await get<Person['wallet']>(world, 'getWallet', {}, { token: alice.accessToken }));
      assert.deepEqual(byId.wallet, wallet);
      assert.equal(byId.wallet.balance, 5_000 - aliceBought.delivered.amount);

      const self = ok(await lookUp({ phone: adminPhone }));
      assert.deepEqual([self.id, self.roles], [admin.userId, ['user', 'admin']]);
    },
  );

  it("shows the operator the freeze's reason, which the person never sees", BOUNDED, async () => {
    const reason = 'SIM swap reported by the carrier, case 8812';
    ok(await post(world, 'adminFreezeUser', { userId: bob.userId, reason }, { token: admin.accessToken }));
    const seen = ok(await lookUp({ phone: bob.phone }));
    assert.deepEqual([seen.frozen, seen.frozenReason, seen.frozenBy], [true, reason, admin.userId]);
    assert.ok(seen.frozenAt !== null && Date.parse(seen.frozenAt) <= world.ctx.clock.now().getTime());
    const me = ok(await get<Record<string, unknown>>(world, 'getMe', {}, { token: bob.accessToken }));
    assert.equal(me.frozen, true);
    assert.doesNotMatch(JSON.stringify(me), /8812|SIM swap/, "getMe never carries the operator's reason");

    ok(
      await post(
        world,
        'adminUnfreezeUser',
        { userId: bob.userId, reason: 'line back' },
        { token: admin.accessToken },
      ),
    );
    const thawed = ok(await lookUp({ userId: bob.userId }));
    assert.deepEqual(
      [thawed.frozen, thawed.frozenAt, thawed.frozenReason, thawed.frozenBy],
      [false, null, null, null],
    );
  });

  it('answers nobody 404, a person 403, and neither or both fields 400', BOUNDED, async () => {
    for (const input of [{ userId: randomUUID() }, { phone: uniquePhone() }]) {
      const nobody = failure(await lookUp(input));
      assert.deepEqual([nobody.status, nobody.code], [404, 'NOT_FOUND'], JSON.stringify(input));
    }
    const person = failure(await lookUp({ userId: bob.userId }, alice));
    assert.deepEqual([person.status, person.code], [403, 'FORBIDDEN']);
    const theirs = failure(await purchases({}, alice));
    assert.deepEqual([theirs.status, theirs.code], [403, 'FORBIDDEN']);
    for (const input of [{}, { userId: alice.userId, phone: alice.phone }, { phone: '12345' }]) {
      const refused = failure(await lookUp(input));
      assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR'], JSON.stringify(input));
    }
  });

  it('lists the purchases by status, provider, person and date, with their counts', BOUNDED, async () => {
    const all = ok(await purchases({}));
    assert.equal(all.total, 3);
    assert.deepEqual(
      all.items.map((p) => p.id),
      [bobBought.id, aliceBought.refused.id, aliceBought.delivered.id],
      'newest first',
    );
    const refused = all.items[1]!;
    assert.equal(refused.userId, alice.userId);
    assert.equal(refused.reference, aliceBought.refused.reference);
    assert.deepEqual([refused.service, refused.provider, refused.status], ['airtime', 'bills', 'failed']);
    assert.ok(refused.failureReason !== null && refused.failureReason.length > 0, 'the provider’s reason');
    assert.equal(refused.failureReason, aliceBought.refused.failureReason);
    assert.ok(refused.completedAt !== null);
    assert.deepEqual(all.counts, [
      { provider: 'bills', status: 'success', failureReason: null, count: 2 },
      { provider: 'bills', status: 'failed', failureReason: refused.failureReason, count: 1 },
    ]);

    const failed = ok(await purchases({ status: 'failed', provider: 'bills' }));
    assert.deepEqual(
      failed.items.map((p) => p.id),
      [aliceBought.refused.id],
    );
    assert.deepEqual(failed.counts, [
      { provider: 'bills', status: 'failed', failureReason: refused.failureReason, count: 1 },
    ]);
    const elsewhere = ok(await purchases({ provider: 'data' }));
    assert.deepEqual([elsewhere.total, elsewhere.items, elsewhere.counts], [0, [], []]);

    const bobs = ok(await purchases({ userId: bob.userId }));
    assert.deepEqual(
      bobs.items.map((p) => p.id),
      [bobBought.id],
    );
    assert.deepEqual(bobs.counts, [{ provider: 'bills', status: 'success', failureReason: null, count: 1 }]);

    const today = lagosDate(world.ctx.clock.now());
    assert.equal(ok(await purchases({ from: today, to: today })).total, 3, 'a date is the whole Lagos day');
    const dayBefore = lagosDate(new Date(world.ctx.clock.now().getTime() - 2 * 24 * 3600 * 1000));
    assert.equal(ok(await purchases({ to: dayBefore })).total, 0);
    const later = ok(await purchases({ from: between }));
    assert.deepEqual(
      later.items.map((p) => p.id),
      [bobBought.id],
      'an instant is taken as given',
    );
    const earlier = ok(await purchases({ to: between }));
    assert.deepEqual(
      earlier.items.map((p) => p.id),
      [aliceBought.refused.id, aliceBought.delivered.id],
    );
    const backwards = failure(await purchases({ from: today, to: dayBefore }));
    assert.deepEqual([backwards.status, backwards.code], [400, 'VALIDATION_ERROR']);
  });

  it('pages the purchases, with the counts over every page', BOUNDED, async () => {
    const pages = [0, 1, 2, 3].map((offset) => purchases({ limit: 1, offset }));
    const answered = (await Promise.all(pages)).map(ok);
    assert.deepEqual(
      answered.map((p) => p.items.map((i) => i.id)),
      [[bobBought.id], [aliceBought.refused.id], [aliceBought.delivered.id], []],
    );
    for (const page of answered) {
      assert.equal(page.total, 3);
      assert.equal(page.limit, 1);
      assert.equal(
        page.counts.reduce((n, c) => n + c.count, 0),
        3,
      );
    }
    const tooMany = failure(await purchases({ limit: 101 }));
    assert.deepEqual([tooMany.status, tooMany.code], [400, 'VALIDATION_ERROR']);
  });
});
