import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { userBalances } from '../../src/ledger/accounts.ts';
import { heldReleaseSweepJob } from '../../src/limits/module.ts';
import { nairaToKobo } from '../../src/money.ts';
import { assertLedgerOk, chargeSuccess, createIntent, processed, sendWebhook } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, get, ok, type World } from '../helpers/world.ts';
import { transferCall } from '../transfers/support.ts';
import { buyCall, buyer, mtn } from '../vtu/purchase-support.ts';

// The CBN limits under racing requests (API.md 17.2). On PostgreSQL, two services on one database
// take them, so only the wallet's lock orders them. PGlite (one connection) would run them in turn,
// proving nothing: the file is skipped there, without starting a service.

const skip = !onPostgres() && 'needs PostgreSQL (DATABASE_URL): two services cannot share a PGlite';

/** A person at the tier with a PIN and that much in the wallet. */
const person = (world: World, tier: 1 | 2, walletNaira = 0) => buyer(world, walletNaira, tier);

describe(`the CBN limits under racing requests (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, { skip }, () => {
  let worlds: World[];
  before(async () => {
    const first = await createWorld();
    worlds = [first, await createWorld({ sameDatabaseAs: first })];
  });
  after(async () => {
    for (const world of [...worlds].reverse()) await world.close();
  });

  it('50 purchases at once whose sum is twice the day: the accepted ones never pass the limit', async () => {
    const [world] = worlds;
    const user = await person(world!, 1, 200_000);
    // ₦2,000 each, ₦100,000 in all: twice the Tier 1 day of ₦50,000.
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        buyCall(worlds[i % worlds.length]!, user, 'buyAirtime', {
          network: 'mtn',
          phone: mtn('5'),
          amount: 2_000,
        }),
      ),
    );
    const accepted = answers.filter((a) => a.status === 200).map((a) => ok(a));
    const charged = accepted.reduce((sum, a) => sum + nairaToKobo(a.amount), 0n);
    assert.equal(charged, 5_000_000n, 'exactly the day, not a kobo more');
    assert.equal(accepted.length, 25);
    for (const refused of answers.filter((a) => a.status !== 200)) {
      const error = failure(refused);
      assert.equal(error.code, 'LIMIT_EXCEEDED', JSON.stringify(error));
      assert.equal(error.details?.remaining, 0);
    }
    for (const world of worlds) await world.ctx.modules.vtu.api.drained();
    assert.equal((await userBalances(world!.ctx.db, user.userId)).wallet, 20_000_000n - 5_000_000n);
    const limits = ok(
      await get<{ dailyDebitUsed: number }>(world!, 'getAccountLimits', {}, { token: user.accessToken }),
    );
    assert.equal(limits.dailyDebitUsed, 50_000);
  });

  it('credits and purchases at once around the maximum: nothing lost, balance + held is what came in less what went out', async () => {
    const [world] = worlds;
    const user = await person(world!, 1, 290_000);
    const sender = await person(world!, 2, 100_000);
    const intents = await Promise.all(Array.from({ length: 8 }, () => createIntent(world!, user, 5_000)));
    const bodies = intents.map((intent) => chargeSuccess(intent.reference, 500_000));
    const results = await Promise.all([
      ...bodies.map(async (body, i) => {
        assert.equal((await sendWebhook(worlds[i % worlds.length]!, body)).status, 200);
        return 'credit';
      }),
      ...Array.from({ length: 6 }, (_, i) =>
        transferCall(worlds[i % worlds.length]!, sender, user, 2_000).then((a) =>
          a.status === 200 ? 'in' : a,
        ),
      ),
      ...Array.from({ length: 10 }, (_, i) =>
        buyCall(worlds[i % worlds.length]!, user, 'buyAirtime', {
          network: 'mtn',
          phone: mtn('5'),
          amount: 1_000,
        }),
      ),
      ...worlds.map((w) => w.ctx.jobs.runNow(heldReleaseSweepJob).then(() => 'sweep')),
    ]);
    const purchases = results.filter(
      (r): r is Awaited<ReturnType<typeof buyCall>> => typeof r === 'object' && r !== null && 'status' in r,
    );
    const spentKobo = purchases
      .filter((a) => a.status === 200)
      .reduce((sum, a) => sum + nairaToKobo(ok(a).amount), 0n);
    for (const refused of purchases.filter((a) => a.status !== 200)) {
      assert.equal(failure(refused).code, 'INSUFFICIENT_FUNDS');
    }
    assert.equal(
      results.filter((r) => r === 'in').length,
      6,
      'a transfer in is never refused for the maximum',
    );
    for (const w of worlds) await w.ctx.modules.vtu.api.drained();
    // Every top-up credited: each process drains what it stored, and its own sweep waits for that
    // drain (another process's events it skips while that process holds them), then takes the rest.
    for (const w of worlds) await w.ctx.jobs.runNow(paymentWebhookSweepJob);
    for (const body of bodies) await processed(world!, body);
    // Once the sweep has had its turn after everything settled, the wallet is as full as the maximum allows.
    await world!.ctx.jobs.runNow(heldReleaseSweepJob);
    const balances = await userBalances(world!.ctx.db, user.userId);
    const cameIn = 29_000_000n + 8n * 500_000n + 6n * 200_000n;
    assert.equal(balances.wallet + balances.wallet_held, cameIn - spentKobo);
    assert.ok(balances.wallet <= 30_000_000n, `the wallet never passes the maximum: ${balances.wallet}`);
    if (balances.wallet_held > 0n)
      assert.equal(balances.wallet, 30_000_000n, 'held only while the wallet is full');
    await assertLedgerOk(world!);
  });
});
