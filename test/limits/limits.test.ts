import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type PendingCredit, writeCredits } from '../../src/funding/credits.ts';
import { newId } from '../../src/ids.ts';
import { nextLagosMidnight } from '../../src/lagos-time.ts';
import {
  lockUserAccounts,
  peopleWithHeldBalance,
  systemAccounts,
  userAccount,
  userBalances,
} from '../../src/ledger/accounts.ts';
import { post as postLedger, ReferenceConflictError } from '../../src/ledger/postings.ts';
import { createReleaseSweep } from '../../src/limits/held-balance.ts';
import { heldReleaseSweepJob } from '../../src/limits/module.ts';
import { order as bulkOrder } from '../bulk-orders/support.ts';
import { assertLedgerOk, chargeSuccess, createIntent, processed, sendWebhook } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents, runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { expectError, submitTier2 } from '../kyc/kyc-support.ts';
import { skippedDailyRun } from '../schedules/support.ts';
import { transferCall } from '../transfers/support.ts';
import { advanceClock, buyCall, buyer, mtn, PIN } from '../vtu/purchase-support.ts';

// The CBN tier limits of API.md 17.2 with the default (CBN) figures: Tier 1 ₦50,000 a day and
// ₦300,000 held, Tier 2 ₦200,000 and ₦500,000.

type Limits = {
  tier: number;
  dailyDebitLimit: number | null;
  dailyDebitUsed: number;
  dailyDebitRemaining: number | null;
  maxBalance: number | null;
  heldBalance: number;
  dayResetsAt: string;
  personalDailyLimit: number | null;
  pendingPersonalDailyLimit?: { amount: number | null; from: string };
  nextTier?: { tier: number; dailyDebitLimit: number | null; maxBalance: number | null };
};

const limitsOf = async (world: World, user: SignedIn) =>
  ok(await get<Limits>(world, 'getAccountLimits', {}, { token: user.accessToken }));
const walletOf = async (world: World, user: SignedIn) =>
  ok(
    await get<{ balance: number; heldBalance: number }>(world, 'getWallet', {}, { token: user.accessToken }),
  );

/** A person at the tier with a PIN and that much in the wallet. */
const person = (world: World, tier: 1 | 2, walletNaira = 0) => buyer(world, walletNaira, tier);

/** Tops the person up through the checkout's signed webhook, as a real top-up is credited. */
async function topUp(world: World, user: SignedIn, naira: number): Promise<void> {
  const intent = await createIntent(world, user, naira);
  const body = chargeSuccess(intent.reference, naira * 100);
  assert.equal((await sendWebhook(world, body)).status, 200);
  await processed(world, body);
}

/** The next Africa/Lagos day, a minute in; the person signs in again (their token has expired). */
async function nextLagosDay(world: World, user: SignedIn): Promise<SignedIn> {
  const now = world.ctx.clock.now();
  await advanceClock(world, Math.ceil((nextLagosMidnight(now).getTime() - now.getTime()) / 1000) + 60);
  return { ...user, ...(await signInAgain(world, user.phone)) };
}

const airtime = (world: World, user: SignedIn, amount: number) =>
  buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('0'), amount });

describe(`account limits (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('tells a Tier 1 person the CBN figures, what is used today and the next tier', async () => {
    const user = await person(world, 1);
    const limits = await limitsOf(world, user);
    assert.equal(limits.tier, 1);
    assert.equal(limits.dailyDebitLimit, 50_000);
    assert.equal(limits.dailyDebitUsed, 0);
    assert.equal(limits.dailyDebitRemaining, 50_000);
    assert.equal(limits.maxBalance, 300_000);
    assert.equal(limits.heldBalance, 0);
    assert.equal(limits.personalDailyLimit, null);
    assert.deepEqual(limits.nextTier, { tier: 2, dailyDebitLimit: 200_000, maxBalance: 500_000 });
    assert.ok(new Date(limits.dayResetsAt) > world.ctx.clock.now());
  });

  it('refuses a purchase over the day with 403 LIMIT_EXCEEDED, what remains and the tier that lifts it; nothing debited', async () => {
    const user = await person(world, 1, 100_000);
    ok(await airtime(world, user, 30_000));
    ok(await airtime(world, user, 15_000));
    const refused = await airtime(world, user, 10_000);
    assert.deepEqual(expectError(refused, 403, 'LIMIT_EXCEEDED').details, {
      limit: 'daily_debit',
      limitAmount: 50_000,
      remaining: 5_000,
      upgradeTier: 2,
    });
    assert.equal((await walletOf(world, user)).balance, 55_000);
    // What remains still goes through, to the kobo.
    ok(await airtime(world, user, 5_000));
    const limits = await limitsOf(world, user);
    assert.equal(limits.dailyDebitUsed, 50_000);
    assert.equal(limits.dailyDebitRemaining, 0);
    // The next Lagos day starts again.
    const tomorrow = await nextLagosDay(world, user);
    assert.equal((await limitsOf(world, tomorrow)).dailyDebitUsed, 0);
    ok(await airtime(world, tomorrow, 10_000));
  });

  it('gives a failed purchase its room back once refunded', async () => {
    const user = await person(world, 1, 60_000);
    // Digit 1: the provider refuses it at once, and the purchase is refunded.
    const failed = ok(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 40_000 }),
    );
    await world.ctx.modules.vtu.api.sendEnded((failed as { id: string }).id);
    assert.equal((await limitsOf(world, user)).dailyDebitUsed, 0);
    ok(await airtime(world, user, 50_000));
  });

  it('refuses a bulk order over the day whole, and a scheduled run over it is skipped with the reason', async () => {
    const user = await person(world, 1, 100_000);
    ok(await airtime(world, user, 45_000));
    const lines = (count: number) =>
      Array.from({ length: count }, () => ({ network: 'mtn', phone: mtn('5'), amount: 200 }));
    const refused = await bulkOrder(world, user, { lines: lines(30), total: 6_000 });
    assert.equal(expectError(refused, 403, 'LIMIT_EXCEEDED').details?.remaining, 5_000);
    assert.equal((await walletOf(world, user)).balance, 55_000, 'no line of it debited');
    ok(await bulkOrder(world, user, { lines: lines(20), total: 4_000 }));
    assert.equal((await limitsOf(world, user)).dailyDebitUsed, 49_000);

    // A scheduled run over the day: the person's own limit set to nothing today (no purchase on
    // record, which the helper checks), the run is skipped with the reason and comes again tomorrow.
    const scheduler = await person(world, 1, 10_000);
    const { told } = await skippedDailyRun(world, scheduler, () =>
      post(world, 'setPersonalDailyLimit', { amount: 0, pin: PIN }, { token: scheduler.accessToken }),
    );
    assert.match(told.body, /left today of your own daily limit/);
  });

  it('counts transfers out, beside the purchases, for the sender only', async () => {
    const sender = await person(world, 2, 400_000);
    const recipient = await person(world, 2);
    for (let i = 0; i < 3; i++) ok(await airtime(world, sender, 50_000));
    const refused = await transferCall(world, sender, recipient, 60_000);
    const details = expectError(refused, 403, 'LIMIT_EXCEEDED').details;
    assert.equal(details?.remaining, 50_000);
    assert.equal(details?.upgradeTier, 3);
    ok(await transferCall(world, sender, recipient, 50_000));
    assert.equal((await limitsOf(world, sender)).dailyDebitUsed, 200_000);
    assert.equal((await limitsOf(world, recipient)).dailyDebitUsed, 0);
  });

  it('lowers the personal limit at once, and raises it only from the next Lagos day', async () => {
    const user = await person(world, 1, 100_000);
    const setLimit = (amount: number | null, pin = PIN) =>
      post<Limits>(world, 'setPersonalDailyLimit', { amount, pin }, { token: user.accessToken });
    expectError(await setLimit(1_000, '9999'), 403, 'INVALID_PIN');
    const lowered = ok(await setLimit(10_000));
    assert.equal(lowered.personalDailyLimit, 10_000);
    assert.equal(lowered.dailyDebitLimit, 10_000);
    const refused = expectError(await airtime(world, user, 12_000), 403, 'LIMIT_EXCEEDED');
    // The person's own limit binds, not the tier's: no tier would lift it.
    assert.equal(refused.details?.upgradeTier, undefined);

    const raised = ok(await setLimit(null));
    assert.equal(raised.personalDailyLimit, 10_000, 'a raise waits for the next day');
    assert.equal(raised.pendingPersonalDailyLimit?.amount, null);
    expectError(await airtime(world, user, 12_000), 403, 'LIMIT_EXCEEDED');
    const tomorrow = await nextLagosDay(world, user);
    const next = await limitsOf(world, tomorrow);
    assert.equal(next.personalDailyLimit, null);
    assert.equal(next.dailyDebitLimit, 50_000);
    ok(await airtime(world, tomorrow, 12_000));
  });

  it('holds a top-up over the maximum, tells the person, and releases it when Tier 2 is approved', async () => {
    const user = await person(world, 1);
    await topUp(world, user, 400_000);
    assert.deepEqual(
      { ...(await walletOf(world, user)) },
      { ...(await walletOf(world, user)), balance: 300_000, heldBalance: 100_000 },
    );
    assert.equal((await limitsOf(world, user)).heldBalance, 100_000);
    const held = await publishedEvents(world, 'limits.balance_held');
    assert.ok(held.some((e) => e.userId === user.userId && e.heldKobo === '10000000'));
    // Held money is not spendable.
    assert.equal((await walletOf(world, user)).balance, 300_000);

    assert.equal(ok(await submitTier2(world, user)).status, 'approved');
    await runDomainEvents(world);
    assert.equal((await walletOf(world, user)).balance, 400_000);
    assert.equal((await walletOf(world, user)).heldBalance, 0);
    const released = await publishedEvents(world, 'limits.held_released');
    assert.ok(released.some((e) => e.userId === user.userId && e.releasedKobo === '10000000'));
    await runDomainEvents(world);
    const inbox = ok(
      await get<{ items: Array<{ kind: string }> }>(
        world,
        'listNotifications',
        {},
        { token: user.accessToken },
      ),
    );
    const kinds = inbox.items.map((item) => item.kind);
    assert.ok(kinds.includes('balance_held') && kinds.includes('held_released'), kinds.join());
    await assertLedgerOk(world);
  });

  it('releases what the balance has room for once it falls, each kobo once', async () => {
    const user = await person(world, 1);
    await topUp(world, user, 320_000);
    assert.equal((await walletOf(world, user)).heldBalance, 20_000);
    ok(await airtime(world, user, 15_000));
    await Promise.all([
      world.ctx.jobs.runNow(heldReleaseSweepJob),
      world.ctx.jobs.runNow(heldReleaseSweepJob),
    ]);
    assert.deepEqual(await walletOf(world, user), {
      ...(await walletOf(world, user)),
      balance: 300_000,
      heldBalance: 5_000,
    });
    await assertLedgerOk(world);
  });

  it('holds the part of a transfer in over the recipient maximum; the sender pays it all', async () => {
    const sender = await person(world, 2, 150_000);
    const recipient = await person(world, 1, 280_000);
    ok(await transferCall(world, sender, recipient, 50_000));
    const balances = await userBalances(world.ctx.db, recipient.userId);
    assert.equal(balances.wallet, 30_000_000n);
    assert.equal(balances.wallet_held, 3_000_000n);
    assert.equal((await userBalances(world.ctx.db, sender.userId)).wallet, 10_000_000n);
    await assertLedgerOk(world);
  });

  it('opens a held balance for every person, locked after their wallet', async () => {
    const user = await person(world, 1);
    await world.ctx.db.transaction().execute(async (trx) => {
      const locked = await lockUserAccounts(trx, [
        userAccount('wallet_held', user.userId),
        userAccount('wallet', user.userId),
      ]);
      assert.deepEqual(
        [...locked.keys()],
        [userAccount('wallet', user.userId), userAccount('wallet_held', user.userId)],
      );
    });
  });

  it("splits a credit heard twice in one batch once: the person's other credit keeps its room", async () => {
    // ₦290,000 of the Tier 1 maximum of ₦300,000: room for ₦10,000. One ₦5,000 charge delivered
    // twice and another ₦5,000 charge, credited in one transaction as a webhook batch is.
    const user = await person(world, 1, 290_000);
    const pending = (reference: string, amountKobo = 500_000n): PendingCredit => ({
      credit: { userId: user.userId, amountKobo },
      posting: {
        reference,
        description: 'Wallet top-up',
        entries: [{ account: systemAccounts.collectionsPool, amount: -amountKobo }],
      },
      async finish(posted) {
        // As a bank deposit's credit answers: the reference already credited with other content.
        if (posted.status === 'rejected') {
          if (posted.reason instanceof ReferenceConflictError) return 'already_credited';
          throw posted.reason;
        }
        return posted.value.created ? 'credited' : 'already_credited';
      },
    });
    const [first, second] = [`test-credit:${newId()}`, `test-credit:${newId()}`];
    const outcomes = await world.ctx.db.transaction().execute((trx) =>
      writeCredits(
        world.ctx.modules.limits.api,
        trx,
        // The same charge twice, then a copy of it with another amount (refused for its reference).
        [pending(first), pending(first), pending(first, 600_000n), pending(second)],
        world.ctx.clock.now(),
        { shards: world.ctx.config.database.ledgerShards },
      ),
    );
    assert.deepEqual(outcomes, ['credited', 'already_credited', 'already_credited', 'credited']);
    const balances = await userBalances(world.ctx.db, user.userId);
    assert.deepEqual(
      [balances.wallet, balances.wallet_held],
      [30_000_000n, 0n],
      'nothing held: the room was there',
    );
    await assertLedgerOk(world);
  });

  it('sweeps past people with no room: everyone held is looked at in turn, a page a run', async () => {
    const hold = (userId: string) =>
      postLedger(
        world.ctx.db,
        {
          reference: `test-held:${newId()}`,
          description: 'Test held balance',
          entries: [
            { account: systemAccounts.collectionsPool, amount: -100_000n },
            { account: userAccount('wallet_held', userId), amount: 100_000n },
          ],
        },
        world.ctx.clock.now(),
      );
    // Full, so nothing of theirs can move; made first, so their account comes first in the sweep's order.
    const full = await person(world, 1, 300_000);
    const roomy = await person(world, 1);
    await hold(full.userId);
    await hold(roomy.userId);
    const heldPeople = (await peopleWithHeldBalance(world.ctx.db, 10_000)).length;
    const sweep = createReleaseSweep(
      {
        db: world.ctx.db,
        jobs: world.ctx.jobs,
        limits: world.ctx.config.limits,
        tiersAmong: world.ctx.modules.auth.api.tiersAmong,
      },
      () => world.ctx.clock.now(),
      1,
    );
    for (let run = 0; run < heldPeople; run++) await sweep();
    const [fullNow, roomyNow] = await Promise.all([
      userBalances(world.ctx.db, full.userId),
      userBalances(world.ctx.db, roomy.userId),
    ]);
    assert.deepEqual([roomyNow.wallet, roomyNow.wallet_held], [100_000n, 0n], 'released, once its turn came');
    assert.deepEqual([fullNow.wallet, fullNow.wallet_held], [30_000_000n, 100_000n]);
    await assertLedgerOk(world);
  });
});
