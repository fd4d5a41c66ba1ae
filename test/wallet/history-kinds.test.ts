import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { matureDueLocks } from '../../src/savings/maturity.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import type { WalletTransactionView } from '../../src/wallet/history.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  processed,
  sendWebhook,
} from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signInAgain,
  type World,
} from '../helpers/world.ts';
import { member, transferCall } from '../transfers/support.ts';
import { bought, buyCall, buyer, current, mtn } from '../vtu/purchase-support.ts';

// One wallet history of every movement (API.md section 6, issue 26): each entry says what kind of
// movement it is, the other person of a transfer and the purchase of a purchase or refund; the list
// filters by kind and by date, where a date is a whole Africa/Lagos day (API.md section 5), in the
// wallet history and the purchase history alike.

type Item = WalletTransactionView;
type Page<T = Item> = { items: T[]; limit: number; offset: number; total: number };

const DAY = 86_400;
const database = onPostgres() ? 'PostgreSQL' : 'PGlite';

const history = async (world: World, user: SignedIn, query: Record<string, unknown> = {}) =>
  ok(await get<Page>(world, 'listTransactions', { limit: 100, ...query }, { token: user.accessToken }));

describe(`wallet history: the kind of every movement (${database})`, () => {
  let world: World;
  let alice: SignedIn;
  let bob: SignedIn;
  const purchases: { bought?: VtuTransactionView; failed?: VtuTransactionView; sold?: VtuTransactionView } =
    {};

  before(async () => {
    world = await createWorld({ env: { CHECKIN_WITHDRAW_MINIMUM: '10' } });
    alice = await member(world, 2);
    bob = await member(world, 2);

    // A card top-up, through the provider's signed webhook.
    const intent = await createIntent(world, alice, 5_000);
    const charge = chargeSuccess(intent.reference, 500_000);
    assert.equal((await sendWebhook(world, charge)).status, 200);
    assert.equal((await processed(world, charge)).outcome, 'credited');

    // A bank transfer into the dedicated account, sent by the sandbox provider.
    const account = ok(
      await post<{ accountNumber: string }>(
        world,
        'requestDedicatedAccount',
        {},
        { token: alice.accessToken },
      ),
    );
    const paid = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber: account.accountNumber, amount: 2_000 }),
    });
    assert.equal(paid.status, 200);
    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
    await until(
      async () => (await history(world, alice)).items.some((i) => i.reference.startsWith('dva:')),
      'the bank transfer is credited',
    );

    ok(await transferCall(world, alice, bob, 1_000, { narration: 'rent' }));

    const broken = ok(
      await post<{ id: string }>(
        world,
        'createSavingsLock',
        { amount: 500, days: 30 },
        { token: alice.accessToken },
      ),
    );
    ok(await post(world, 'breakSavingsLock', { lockId: broken.id }, { token: alice.accessToken }));
    ok(await post(world, 'createSavingsLock', { amount: 300, days: 7 }, { token: alice.accessToken }));

    ok(await post(world, 'claimCheckin', {}, { token: alice.accessToken }));
    ok(await post(world, 'withdrawCheckin', {}, { token: alice.accessToken }));

    purchases.bought = await bought(world, alice, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 150,
    });
    // Last digit 1: the provider fails it, and what was charged comes back.
    purchases.failed = await bought(world, alice, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('1'),
      amount: 200,
    });
    const sale = ok(
      await buyCall(world, alice, 'sellAirtime', { network: 'mtn', phone: mtn('5'), amount: 1_000 }),
    );
    await world.ctx.modules.vtu.api.sendEnded(sale.id);
    purchases.sold = await current(world, alice, sale.id);

    // A week on, the 7-day lock matures.
    world.ctx.sandboxClock!.advance(7 * DAY);
    assert.deepEqual(await matureDueLocks(world.ctx), { matured: 1 });
    alice = { ...alice, ...(await signInAgain(world, alice.phone)) };
    bob = { ...bob, ...(await signInAgain(world, bob.phone)) };
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  it('names each movement a person can cause, newest first', BOUNDED, async () => {
    const page = await history(world, alice);
    assert.deepEqual(
      page.items.map((i) => [i.kind, i.direction, i.amount]),
      [
        ['savings_release', 'credit', 300],
        ['airtime_cash', 'credit', 800],
        ['refund', 'credit', 200],
        ['purchase', 'debit', 200],
        ['purchase', 'debit', 150],
        ['reward', 'credit', 10],
        ['savings_lock', 'debit', 300],
        ['savings_release', 'credit', 475],
        ['savings_lock', 'debit', 500],
        ['transfer_out', 'debit', 1_000],
        ['bank_transfer', 'credit', 2_000],
        ['topup', 'credit', 5_000],
      ],
    );
    assert.equal(page.total, 12);
  });

  it('gives a transfer the other person’s name, on both sides', BOUNDED, async () => {
    const sent = (await history(world, alice)).items.find((i) => i.kind === 'transfer_out')!;
    const received = (await history(world, bob)).items.find((i) => i.kind === 'transfer_in')!;
    assert.equal(sent.counterparty, 'Adebayo O.');
    assert.equal(received.counterparty, 'Adebayo O.');
    assert.deepEqual([received.direction, received.amount], ['credit', 1_000]);
    assert.equal(received.reference, sent.reference);
  });

  it('links purchases, their refunds and sales to the purchase, and nothing else', BOUNDED, async () => {
    const items = (await history(world, alice)).items;
    const linked = items.filter((i) => i.purchaseId !== undefined).map((i) => [i.kind, i.purchaseId]);
    assert.deepEqual(linked, [
      ['airtime_cash', purchases.sold!.id],
      ['refund', purchases.failed!.id],
      ['purchase', purchases.failed!.id],
      ['purchase', purchases.bought!.id],
    ]);
    assert.equal(purchases.failed!.status, 'failed');
  });

  it('writes money and names as a person reads them', BOUNDED, async () => {
    const items = (await history(world, alice)).items;
    const of = (kind: string) => items.filter((i) => i.kind === kind).map((i) => i.description);
    assert.match(of('purchase').at(-1)!, /^₦150\.00 MTN airtime to 0803\d{7}$/);
    assert.match(of('refund')[0]!, /^₦200\.00 MTN airtime to 0803\d{7}: refunded$/);
    assert.match(
      of('airtime_cash')[0]!,
      /^₦1,000\.00 MTN airtime from 0803\d{7} to cash at 80%: airtime received$/,
    );
    assert.deepEqual(of('savings_release'), [
      'Savings lock matured',
      'Savings lock broken early: ₦25.00 penalty',
    ]);
    assert.equal(purchases.bought!.description, of('purchase').at(-1));
  });

  it(
    'lists one kind with its own total, and getTransaction shows an entry the same way',
    BOUNDED,
    async () => {
      const purchasesOnly = await history(world, alice, { kind: 'purchase', limit: 1 });
      assert.equal(purchasesOnly.total, 2);
      assert.deepEqual(
        purchasesOnly.items.map((i) => [i.kind, i.purchaseId]),
        [['purchase', purchases.failed!.id]],
      );
      const releases = await history(world, alice, { kind: 'savings_release' });
      assert.deepEqual(
        releases.items.map((i) => i.amount),
        [300, 475],
      );
      assert.equal((await history(world, alice, { kind: 'dispute_refund' })).total, 0);
      for (const item of (await history(world, alice)).items) {
        assert.deepEqual(
          ok(await post<Item>(world, 'getTransaction', { id: item.id }, { token: alice.accessToken })),
          item,
        );
      }
      const refused = failure(
        await get(world, 'listTransactions', { kind: 'gift' }, { token: alice.accessToken }),
      );
      assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR']);
    },
  );
});

describe(`history dates are whole days in Lagos (${database})`, () => {
  // The service clock starts at 23:30 in Lagos (22:30 UTC) on 25 November 2026.
  const start = Date.parse('2026-11-25T22:30:00.000Z');
  let world: World;
  let user: SignedIn;
  const ids: { late?: string; early?: string } = {};

  before(async () => {
    const offset = start - Date.now();
    world = await createWorld({ clock: { now: () => new Date(Date.now() + offset) } });
    user = await buyer(world, 1_000);
    ids.late = (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 })).id;
    // An hour on it is 00:30 on the 26th in Lagos, still the 25th in UTC.
    world.ctx.sandboxClock!.advance(3_600);
    user = { ...user, ...(await signInAgain(world, user.phone)) };
    ids.early = (
      await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 200 })
    ).id;
    assert.equal(world.ctx.clock.now().toISOString().slice(0, 10), '2026-11-25');
  });
  after(() => world.close());

  const purchasesOn = async (query: Record<string, unknown>) =>
    ok(
      await get<Page<VtuTransactionView>>(world, 'listMyVtuTransactions', query, { token: user.accessToken }),
    ).items.map((t) => t.id);
  const walletOn = async (query: Record<string, unknown>) =>
    (await history(world, user, { kind: 'purchase', ...query })).items.map((i) => i.purchaseId);

  for (const [name, list] of [
    ['listMyVtuTransactions', purchasesOn],
    ['listTransactions', walletOn],
  ] as const) {
    it(`${name}: from=D&to=D is the whole of day D in Lagos`, BOUNDED, async () => {
      assert.deepEqual(await list({ from: '2026-11-25', to: '2026-11-25' }), [ids.late]);
      assert.deepEqual(await list({ from: '2026-11-26', to: '2026-11-26' }), [ids.early]);
      assert.deepEqual(await list({ to: '2026-11-25' }), [ids.late]);
      assert.deepEqual(await list({ from: '2026-11-26' }), [ids.early]);
      assert.deepEqual(await list({ from: '2026-11-24', to: '2026-11-27' }), [ids.early, ids.late]);
      assert.deepEqual(await list({ from: '2026-11-27' }), []);
    });

    it(`${name}: a full instant is taken as given, its end included`, BOUNDED, async () => {
      assert.deepEqual(await list({ to: '2026-11-26T00:00:00+01:00' }), [ids.late]);
      assert.deepEqual(await list({ from: '2026-11-25T23:00:00Z' }), [ids.early]);
      assert.deepEqual(await list({ from: '2026-11-25T22:00:00Z', to: '2026-11-25T23:00:00Z' }), [ids.late]);
    });

    it(`${name}: a bad date, or from after to, is 400 VALIDATION_ERROR`, BOUNDED, async () => {
      for (const query of [
        { from: '2026-13-01' },
        { from: '2026-02-30' },
        { to: '25-11-2026' },
        { to: 'yesterday' },
        { from: '2026-11-25T10:00:00' },
        { from: '1969-12-31' },
        { from: '2026-11-26', to: '2026-11-25' },
        { from: '2026-11-25T12:00:00Z', to: '2026-11-25T11:59:59Z' },
      ]) {
        const refused = failure(await get(world, name, query, { token: user.accessToken }));
        assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR'], JSON.stringify(query));
      }
    });
  }
});
