import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { airtimeCashCallbackPath } from '../../src/http/airtime-cash-callback-route.ts';
import type { VtuTransactionView } from '../../src/vtu/purchases.ts';
import { settlePurchases } from '../../src/vtu/settlement.ts';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { createWorld, get, ok, post, signInAgain, type World } from '../helpers/world.ts';
import { expectError, kycUser } from '../kyc/kyc-support.ts';
import { advanceClock, type Buyer, buyCall, buyer, current, mtn } from './purchase-support.ts';

// Airtime-to-cash end to end (API.md section 14): a credit on the purchase path. Nothing is debited
// when it is accepted; the wallet is credited the payout once when the provider confirms (at once,
// on a requery or on its callback), and nothing moves when the confirmation never comes in time.
// The sandbox decides by the sending phone's last digit: 1 never arrives, 2 on requery, 3 half of the
// declared amount arrives, else all of it at once. The payout follows the amount the provider
// confirms, never more than the amount declared.

type Quote = { amount: number; payout: number; ratePercent: number; sendTo: string };

const MINUTE = 60;

describe('airtime to cash', () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { AIRTIME_TO_CASH_RATES: 'glo=75' } });
  });
  after(() => world.close());

  const sell = (user: Buyer, phone: string, amount = 1_000, network = 'mtn') =>
    buyCall(world, user, 'sellAirtime', { network, phone, amount });
  const sold = async (user: Buyer, phone: string, amount = 1_000) => {
    const accepted = ok(await sell(user, phone, amount));
    assert.equal(accepted.status, 'processing');
    assert.equal(accepted.direction, 'credit');
    assert.equal(await walletKobo(world, user.userId), 0n, 'nothing is debited, nothing credited yet');
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    return current(world, user, accepted.id);
  };
  /** The wallet history as [direction, naira] pairs, newest first. */
  const walletHistory = async (user: Buyer) =>
    ok(
      await get<{ items: Array<{ direction: string; amount: number }> }>(
        world,
        'listTransactions',
        {},
        { token: user.accessToken },
      ),
    ).items.map((h) => [h.direction, h.amount]);
  /** The caller signed in again: access tokens last 15 minutes of sandbox time. */
  const fresh = async (user: Buyer): Promise<Buyer> => ({
    ...user,
    ...(await signInAgain(world, user.phone)),
  });

  it('quotes the payout at the network rate, rounded down, and the line to share to', async () => {
    const user = await buyer(world, 0);
    const quote = (network: string, amount: number) =>
      get<Quote>(
        world,
        'quoteAirtimeToCash',
        { network, amount: String(amount) },
        { token: user.accessToken },
      );
    assert.deepEqual(ok(await quote('mtn', 1_000)), {
      amount: 1_000,
      payout: 800,
      ratePercent: 80,
      sendTo: '08034417262',
      available: true,
    });
    // 75 % of ₦333.33 is ₦249.9975: rounded down to the kobo.
    assert.deepEqual(ok(await quote('glo', 333.33)), {
      amount: 333.33,
      payout: 249.99,
      ratePercent: 75,
      sendTo: '08057731940',
      available: true,
    });
    assert.equal(expectError(await quote('mtn', 99.99), 422, 'BELOW_MINIMUM').details?.limit, 100);
    assert.equal(expectError(await quote('mtn', 50_000.01), 422, 'ABOVE_MAXIMUM').details?.limit, 50_000);
  });

  it('credits the payout once when the airtime arrives at once, in both histories', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('5'));
    assert.equal(sale.status, 'success');
    assert.equal(sale.amount, 800);
    assert.equal(await walletKobo(world, user.userId), 80_000n);

    const listed = ok(
      await get<{ items: VtuTransactionView[] }>(
        world,
        'listMyVtuTransactions',
        { service: 'airtime_to_cash' },
        { token: user.accessToken },
      ),
    ).items;
    assert.deepEqual(
      listed.map((t) => [t.id, t.direction, t.amount]),
      [[sale.id, 'credit', 800]],
    );
    assert.deepEqual(await walletHistory(user), [['credit', 800]]);

    // The provider's callback (and a second one) for a sale already settled changes nothing.
    for (let i = 0; i < 2; i += 1) await callback(sale.reference);
    assert.equal(await walletKobo(world, user.userId), 80_000n);
    await assertLedgerOk(world);
  });

  it('stays processing until a requery finds the airtime arrived (last digit 2)', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('2'));
    assert.equal(sale.status, 'processing');
    await advanceClock(world, MINUTE + 1);
    const settled = await current(world, await fresh(user), sale.id);
    assert.equal(settled.status, 'success');
    assert.equal(await walletKobo(world, user.userId), 80_000n);
  });

  it('pays on the airtime the provider confirms: half of ₦1,000 arrived (last digit 3) pays ₦400 at 80 %', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('3'));
    assert.equal(sale.status, 'success');
    assert.equal(sale.amount, 400, 'the payout is 80 % of the ₦500 that arrived');
    assert.equal(sale.units, '₦500.00 of ₦1,000.00 airtime received');
    assert.equal(await walletKobo(world, user.userId), 40_000n);
    assert.deepEqual(await walletHistory(user), [['credit', 400]]);
    // The callback's body names the declared ₦1,000: it is not believed, the provider is asked again.
    await callback(sale.reference);
    assert.equal(await walletKobo(world, user.userId), 40_000n);
    await assertLedgerOk(world);
  });

  it('pays no more than the declared amount earns when the provider confirms more, and alerts', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('2'));
    assert.equal(sale.status, 'processing');
    // The provider will confirm ₦1,500 of airtime for the ₦1,000 declared.
    const order = world.ctx.sandbox!.state.airtimeCash.orders.get(sale.reference)!;
    order.receivedKobo = 150_000n;
    await callback(sale.reference);
    const settled = await current(world, user, sale.id);
    assert.equal(settled.status, 'success');
    assert.equal(settled.amount, 800);
    assert.equal(settled.units, '₦1,500.00 airtime received, paid on the ₦1,000.00 declared');
    assert.equal(await walletKobo(world, user.userId), 80_000n);
    const alerts = await world.ctx.db
      .selectFrom('ops_alerts')
      .select(['kind', 'details'])
      .where('kind', '=', 'airtime_cash_over_confirmed')
      .execute();
    assert.equal(alerts.length, 1);
    assert.deepEqual(
      (typeof alerts[0]!.details === 'string'
        ? JSON.parse(alerts[0]!.details)
        : alerts[0]!.details) as object,
      {
        reference: sale.reference,
        purchaseId: sale.id,
        userId: user.userId,
        provider: 'bills',
        declaredKobo: '100000',
        confirmedKobo: '150000',
        payoutKobo: '80000',
      },
    );
    await assertLedgerOk(world);
  });

  it('pays nothing on a confirmation without a readable amount: it stays processing for a person', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('1'));
    const [settled] = await settlePurchases(
      {
        db: world.ctx.db,
        clock: world.ctx.clock,
        jobs: world.ctx.jobs,
        raiseAlert: world.ctx.modules.alerts.api.raiseAlert,
        giveBackRoom: world.ctx.modules.limits.api.giveBackRoom,
        ledgerShards: world.ctx.config.database.ledgerShards,
      },
      [{ id: sale.id, outcome: { status: 'success', providerReference: sale.reference } }],
    );
    assert.deepEqual(settled, { status: 'fulfilled', value: 'processing' });
    assert.equal((await current(world, user, sale.id)).status, 'processing');
    assert.equal(await walletKobo(world, user.userId), 0n);
  });

  it('fails with nothing moved when the airtime confirmed pays less than a kobo', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('1'));
    // One kobo of airtime at 80 % pays 0.8 kobo: rounded down, nothing to pay and no record of ₦0.
    const [settled] = await settlePurchases(
      {
        db: world.ctx.db,
        clock: world.ctx.clock,
        jobs: world.ctx.jobs,
        raiseAlert: world.ctx.modules.alerts.api.raiseAlert,
        giveBackRoom: world.ctx.modules.limits.api.giveBackRoom,
        ledgerShards: world.ctx.config.database.ledgerShards,
      },
      [{ id: sale.id, outcome: { status: 'success', providerReference: sale.reference, receivedKobo: 1n } }],
    );
    assert.deepEqual(settled, { status: 'fulfilled', value: 'failed' });
    const record = await current(world, user, sale.id);
    assert.equal(record.status, 'failed');
    assert.equal(record.units, '₦0.01 of ₦1,000.00 airtime received');
    assert.equal(await walletKobo(world, user.userId), 0n);
    await assertLedgerOk(world);
  });

  it('settles on the provider callback, by asking the provider, not by believing the body', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('2'));
    // A callback naming another sale, or a made-up one, moves nothing.
    await callback('202611241200deadbeef');
    assert.equal((await current(world, user, sale.id)).status, 'processing');
    // The callback of this sale makes the service ask the provider, which reports it arrived.
    await callback(sale.reference);
    assert.equal((await current(world, user, sale.id)).status, 'success');
    assert.equal(await walletKobo(world, user.userId), 80_000n);
  });

  it('fails with nothing moved when the airtime never arrives within 30 minutes (last digit 1)', async () => {
    const user = await buyer(world, 0);
    const sale = await sold(user, mtn('1'));
    assert.equal(sale.status, 'processing');
    await advanceClock(world, 29 * MINUTE);
    assert.equal((await current(world, await fresh(user), sale.id)).status, 'processing');
    await advanceClock(world, 2 * MINUTE);
    const failed = await current(world, await fresh(user), sale.id);
    assert.equal(failed.status, 'failed');
    assert.match(failed.failureReason ?? '', /within 30 minutes/);
    assert.equal(await walletKobo(world, user.userId), 0n);
    await assertLedgerOk(world);
  });

  it('refuses a phone of another network, Tier 0, a wrong PIN and out-of-range amounts', async () => {
    const user = await buyer(world, 0);
    const mismatch = expectError(await sell(user, '08051234567'), 422, 'NETWORK_MISMATCH');
    assert.equal(mismatch.details?.detected, 'glo');
    expectError(await sell(user, mtn('5'), 99), 422, 'BELOW_MINIMUM');
    expectError(await sell(user, mtn('5'), 50_001), 422, 'ABOVE_MAXIMUM');
    expectError(
      await post(
        world,
        'sellAirtime',
        { network: 'mtn', phone: mtn('5'), amount: 1_000, pin: '1111' },
        { token: user.accessToken },
      ),
      403,
      'INVALID_PIN',
    );
    const unverified = await kycUser(world);
    expectError(
      await post(
        world,
        'sellAirtime',
        { network: 'mtn', phone: mtn('5'), amount: 1_000, pin: '2580' },
        { token: unverified.accessToken },
      ),
      403,
      'KYC_TIER_REQUIRED',
    );
    const recorded = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('id')
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(recorded.length, 0);
  });

  async function callback(ref: string): Promise<void> {
    const response = await fetch(`${world.baseUrl}${airtimeCashCallbackPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ref,
        service: 'Airtime2Cash',
        network: 'mtn',
        amount: '1000',
        status: 'Completed',
      }),
    });
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { response: 'success' });
  }
});
