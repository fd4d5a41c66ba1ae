import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { checkLedger } from '../../src/ledger/check.ts';
import { lockFloatReservations, releaseFloat, reserveFloat } from '../../src/vtu/float-reservations.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { sandboxPayments, startWebhookReceiver, type WebhookReceiver } from '../payments/helpers.ts';
import { advanceClock, bought, buyCall, buyer, current, mtn } from './purchase-support.ts';

// What the purchases sent to a provider hold of its float, in the database (float-reservations.ts,
// decision 0051): reserved by the claim that sends a purchase, released by the settlement that ends
// it (an unknown answer holds it until the requery settles it), and counted by a float decision even
// when released between the balance read and the decision, for that balance may predate the send.

describe(`the provider float's reservations (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let receiver: WebhookReceiver;
  before(async () => {
    world = await createWorld({
      env: { VTU_TIMEOUT_MS: '300', BILLS_FUNDING_ACCOUNT: '058:9900000020:Sandbox Bills Aggregator' },
    });
    // Float top-ups stay pending: their transfer webhooks are caught here and left alone.
    receiver = await startWebhookReceiver();
    sandboxPayments(world).webhookUrlOverride = receiver.url;
  });
  afterEach(async () => {
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });
  after(async () => {
    await receiver?.close();
    await world?.close();
  });

  const reserved = () => world.ctx.modules.vtu.api.floatReservedKobo('bills');
  const released = async () =>
    (
      await world.ctx.db
        .selectFrom('vtu_float_reservations')
        .select('released_kobo')
        .where('provider', '=', 'bills')
        .executeTakeFirst()
    )?.released_kobo ?? 0n;

  it('an unknown answer holds the float until the requery settles it; then it is released', async () => {
    world.ctx.sandbox!.state.bills.balanceKobo = 10_000_000n;
    const releasedBefore = await released();
    const user = await buyer(world, 5_000);
    // The timeout digit (4): taken by the provider, unanswered within VTU_TIMEOUT_MS.
    const unknown = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('4'), amount: 200 });
    assert.equal(unknown.status, 'processing');
    assert.equal(await reserved(), 20_000n, 'held while the answer is unknown');
    const row = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('float_reserved_kobo')
      .where('id', '=', unknown.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.float_reserved_kobo, 20_000n, 'the purchase says what it holds');

    await advanceClock(world, 61);
    assert.equal((await current(world, user, unknown.id)).status, 'success', 'settled by the requery');
    assert.equal(await reserved(), 0n, 'released by the settlement');
    assert.equal((await released()) - releasedBefore, 20_000n);
  });

  it('a definite failure releases what it held, and so does a delivery', async () => {
    world.ctx.sandbox!.state.bills.balanceKobo = 10_000_000n;
    const releasedBefore = await released();
    const user = await buyer(world, 5_000);
    // Digit 1: refused by the provider; digit 5: delivered.
    assert.equal(
      (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 100 })).status,
      'failed',
    );
    assert.equal(
      (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 300 })).status,
      'success',
    );
    assert.equal(await reserved(), 0n);
    assert.equal((await released()) - releasedBefore, 40_000n);
  });

  // On PGlite the claims run one batch at a time (its one connection), so no purchase can be sent
  // while another's claim is deciding: the interleaving needs PostgreSQL.
  const interleaves = onPostgres() ? {} : { skip: 'PGlite runs one claim batch at a time' };
  it(
    'a purchase released after the balance was read still counts: the float it took is not sent twice',
    interleaves,
    async () => {
      // Float for one ₦200 purchase. The balance read for `late` is taken before `early` is sent, and
      // `early` is sent, answered and settled (so released) before `late` is decided: that balance
      // still shows early's ₦200, which the provider no longer has.
      const bills = world.ctx.sandbox!.state.bills;
      bills.balanceKobo = 20_000n;
      const user = await buyer(world, 5_000);
      const adapter = world.ctx.vtuProviders.bills;
      const read = adapter.balance.bind(adapter);
      let early: Promise<string> | undefined;
      adapter.balance = async () => {
        const balance = await read();
        if (early === undefined) {
          early = bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 200 }).then(
            (p) => p.status,
          );
          assert.equal(await early, 'success', 'early: sent and delivered on the float');
        }
        return balance;
      };
      try {
        const late = ok(
          await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 200 }),
        );
        await world.ctx.modules.vtu.api.sendEnded(late.id);
        const row = await world.ctx.db
          .selectFrom('vtu_transactions')
          .select(['status', 'sent_at', 'funding_reference'])
          .where('id', '=', late.id)
          .executeTakeFirstOrThrow();
        assert.equal(row.status, 'processing', 'late: not failed at the provider for want of float');
        assert.equal(row.sent_at, null, 'late: never sent');
        assert.notEqual(row.funding_reference, null, 'late: waiting for a float top-up');
        assert.equal(bills.balanceKobo, 0n, 'the provider took early alone');
      } finally {
        adapter.balance = read;
      }
    },
  );

  it('a release of more than was reserved is refused by the database, and changes nothing', async () => {
    const now = world.ctx.clock.now();
    const before = await reserved();
    await assert.rejects(
      world.ctx.db.transaction().execute(async (trx) => {
        await lockFloatReservations(trx, ['bills'], now);
        await releaseFloat(trx, new Map([['bills', before + 1n]]), now);
      }),
      /vtu_float_reservations_reserved_kobo_check/,
    );
    assert.equal(await reserved(), before);
    // And a reserve then its release leave the row as it was, but for the total released.
    const releasedBefore = await released();
    await world.ctx.db.transaction().execute(async (trx) => {
      await lockFloatReservations(trx, ['bills'], now);
      await reserveFloat(trx, new Map([['bills', 7n]]), now);
    });
    assert.equal(await reserved(), before + 7n);
    await world.ctx.db.transaction().execute(async (trx) => {
      await lockFloatReservations(trx, ['bills'], now);
      await releaseFloat(trx, new Map([['bills', 7n]]), now);
    });
    assert.equal(await reserved(), before);
    assert.equal((await released()) - releasedBefore, 7n);
  });
});
