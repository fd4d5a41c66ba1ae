import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { sql } from 'kysely';
import { userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { koboToNaira } from '../../src/money.ts';
import type { SavingsLockView } from '../../src/savings/service.ts';
import { advanceClock } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  type ApiResponse,
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
import { userAtTier } from '../kyc/kyc-support.ts';
import { bought, buyCall, buyer, mtn } from '../vtu/purchase-support.ts';

// Model-based property of savings locks, the check-in and purchases (API.md sections 2, 5, 9, 12):
// random sequences of commands (locks of every kind of amount and period, breaks of active, due and
// closed locks, the sandbox clock moved across maturities and Lagos midnights, or just past a
// maturity before the job's next run, check-in claims and withdrawals, airtime that succeeds, fails
// and refunds, or stays pending) run against the service and against a few lines of bookkeeping.
// Every sequence ends a little past the last maturity. After every command the wallet the service answers
// (balance, lockedSavings, checkinAccrued, lockedBonus) is the model's, the ledger check is ok, no
// user account is below zero, and the locked referral bonus the user holds from the start has
// never moved: a wrong penalty, a double credit, a lock that matures twice or a bonus that leaks
// into the wallet shows as a difference. fast-check prints the seed and the shortest failing
// sequence. SAVINGS_PROPERTY_RUNS sets the number of sequences (default 25).

const runs = Number(process.env.SAVINGS_PROPERTY_RUNS ?? 25);
const commandsMax = 12;

const DAY_MS = 86_400_000;
const LAGOS_OFFSET_MS = 3_600_000;
/** The contract's numbers (API.md section 9), written out rather than read from the configuration. */
const lockMinKobo = 10_000n;
const daysMin = 7;
const daysMax = 365;
const penaltyPercent = 5n;
const milestonesNaira = [10_000, 50_000, 100_000, 500_000, 1_000_000];
/** A bigger check-in reward than the default ₦10, so that two claims reach the ₦100 withdrawal minimum. */
const checkinRewardNaira = 50;
const checkinWithdrawMinKobo = 10_000n;
const referralBonusKobo = 20_000n;
const airtimeMinNaira = 50;
const airtimeMaxNaira = 50_000;

/** The Africa/Lagos calendar day (UTC+1 all year) of an instant, computed apart from the service's. */
const lagosDay = (ms: number): string => new Date(ms + LAGOS_OFFSET_MS).toISOString().slice(0, 10);
const previousDay = (day: string): string => new Date(Date.parse(day) - DAY_MS).toISOString().slice(0, 10);
const nextLagosMidnight = (ms: number): number =>
  Math.floor((ms + LAGOS_OFFSET_MS) / DAY_MS) * DAY_MS + DAY_MS - LAGOS_OFFSET_MS;

type Amount = { how: 'belowMin' | 'share' | 'aboveWallet' | 'all' | 'huge'; n: number };

type Command =
  | { kind: 'lock'; amount: Amount; days: number }
  | { kind: 'break'; which: 'active' | 'any' | 'unknown'; pick: number }
  | { kind: 'advance'; to: 'seconds' | 'midnight' | 'maturity' | 'days' | 'dueQuietly'; n: number }
  | { kind: 'claim'; nextDay: boolean }
  | { kind: 'withdraw' }
  | { kind: 'buy'; amount: Amount; digit: '5' | '1' | '2' };

const amount: fc.Arbitrary<Amount> = fc.record({
  how: fc.constantFrom(
    'belowMin',
    'share',
    'share',
    'share',
    'share',
    'aboveWallet',
    'aboveWallet',
    'all',
    'huge',
  ),
  n: fc.nat({ max: 1_000_000 }),
});

const command: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('lock' as const),
      amount,
      days: fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: daysMin, max: 40 }) },
        { weight: 2, arbitrary: fc.integer({ min: daysMin, max: daysMax }) },
        { weight: 1, arbitrary: fc.constantFrom(0, 1, daysMin - 1, daysMax + 1, 1000) },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('break' as const),
      // Mostly an active lock of the user's; also any of them (closed ones too), or one that does not exist.
      which: fc.constantFrom('active', 'active', 'active', 'any', 'any', 'unknown'),
      pick: fc.nat(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      to: fc.constantFrom('seconds', 'midnight', 'maturity', 'maturity', 'days', 'dueQuietly'),
      n: fc.nat({ max: 1_000_000 }),
    }),
  },
  {
    weight: 3,
    // Today's claim, or (half the time) the next Lagos day's: the sandbox clock just past midnight first.
    arbitrary: fc.record({ kind: fc.constant('claim' as const), nextDay: fc.boolean() }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'withdraw' as const }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('buy' as const),
      amount,
      digit: fc.constantFrom('5', '1', '2'),
    }),
  },
);

type LockModel = { id: string; amount: bigint; maturesAtMs: number; status: SavingsLockView['status'] };

type Model = {
  wallet: bigint;
  savings: bigint;
  accrued: bigint;
  bonus: bigint;
  totalLocked: bigint;
  locks: LockModel[];
  /** Lagos day → the streak of its claim. */
  claims: Map<string, number>;
};

/** A session's access token lives 15 minutes, and the session itself 30 days from its sign-in. */
type Session = SignedIn & { accessAtMs: number; sessionAtMs: number };

type Wallet = { balance: number; lockedSavings: number; lockedBonus: number; checkinAccrued: number };

/** The refusal's code, checked against the one the model expects (with the response for the message). */
function expectRefusal(response: ApiResponse, code: string, what: string): void {
  const error = failure(response);
  assert.equal(error.code, code, `${what}: ${JSON.stringify(error)}`);
}

describe(`savings, check-in and purchases against a model (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;

  before(async () => {
    world = await createWorld({
      env: {
        CHECKIN_REWARD: String(checkinRewardNaira),
        REFERRAL_BONUS: String(koboToNaira(referralBonusKobo)),
      },
    });
    // The contract's defaults, which the model writes out itself.
    assert.equal(world.ctx.config.savings.breakPenaltyBp, penaltyPercent * 100n);
    assert.equal(world.ctx.config.savings.lockMinKobo, lockMinKobo);
    assert.equal(world.ctx.config.growth.checkinWithdrawMinKobo, checkinWithdrawMinKobo);
  });
  after(() => world?.close());

  const nowMs = () => world.ctx.clock.now().getTime();

  /** An access token that has not expired: refreshed (no clock move) when it is 10 minutes old. */
  async function fresh(session: Session): Promise<string> {
    const now = nowMs();
    if (now - session.accessAtMs < 10 * 60_000) return session.accessToken;
    if (now - session.sessionAtMs < 29 * DAY_MS) {
      const pair = ok(
        await post<{ accessToken: string; refreshToken: string }>(world, 'refreshSession', {
          refreshToken: session.refreshToken,
        }),
      );
      Object.assign(session, { ...pair, accessAtMs: now });
    } else {
      // The session is near its 30 days: a new sign-in (the last code was asked for long ago).
      const signedIn = await signIn(world, session.phone);
      Object.assign(session, { ...signedIn, accessAtMs: now, sessionAtMs: now });
    }
    return session.accessToken;
  }

  /**
   * Moves the sandbox clock about `seconds` forward, never onto an instant where the model could not
   * tell what happened: the last seconds before a lock's maturity (the job runs an instant after the
   * target) or the last five minutes before a Lagos midnight (the commands that follow take real
   * time). The maturity job runs before the answer; the model matures what was due by the target,
   * and asks the service only about a lock due between the target and the answer. `quietly` moves
   * the clock without running the jobs: the up to a minute a due lock waits for the job's next run.
   */
  async function advance(model: Model, seconds: number, quietly = false): Promise<void> {
    const before = nowMs();
    let target = before + seconds * 1000;
    for (let moved = true; moved; ) {
      moved = false;
      const midnight = nextLagosMidnight(target);
      if (midnight - target < 5 * 60_000) {
        target = midnight + 10_000;
        moved = true;
      }
      for (const lock of model.locks) {
        if (lock.status === 'active' && lock.maturesAtMs > target && lock.maturesAtMs - target < 5_000) {
          target = lock.maturesAtMs + 10_000;
          moved = true;
        }
      }
    }
    const advanceSeconds = Math.ceil((target - before) / 1000);
    if (quietly) {
      world.ctx.sandboxClock!.advance(advanceSeconds);
      return;
    }
    await advanceClock(world, advanceSeconds);
    const surely = before + advanceSeconds * 1000;
    const atMost = nowMs();
    const unsure: LockModel[] = [];
    for (const lock of model.locks) {
      if (lock.status !== 'active') continue;
      if (lock.maturesAtMs <= surely) mature(model, lock);
      else if (lock.maturesAtMs <= atMost) unsure.push(lock);
    }
    for (const lock of unsure) {
      const { rows } = await sql<{ status: LockModel['status'] }>`
        select status from savings_locks where id = ${lock.id}`.execute(world.ctx.db);
      if (rows[0]?.status === 'matured') mature(model, lock);
    }
  }

  function mature(model: Model, lock: LockModel): void {
    lock.status = 'matured';
    model.wallet += lock.amount;
    model.savings -= lock.amount;
  }

  /** Kobo for an amount choice, from the wallet and bonus the model holds now. */
  function koboOf(choice: Amount, model: Model, step: bigint): bigint {
    const n = BigInt(choice.n);
    const round = (kobo: bigint) => (kobo / step) * step;
    switch (choice.how) {
      case 'belowMin':
        return round(1n + (n % 9_999n)) || step;
      case 'share':
        return round((model.wallet * (1n + (n % 100n))) / 100n) || step;
      case 'aboveWallet':
        // More than the wallet, no more than the wallet and the locked bonus together.
        return round(model.wallet + step + (n % model.bonus));
      case 'all':
        return round(model.wallet) || step;
      case 'huge':
        return round(10_000_000_000n + n * 100n);
    }
  }

  async function run(session: Session, model: Model, cmd: Command): Promise<void> {
    const token = await fresh(session);
    switch (cmd.kind) {
      case 'lock': {
        const kobo = koboOf(cmd.amount, model, 1n);
        const response = await post<SavingsLockView>(
          world,
          'createSavingsLock',
          { amount: koboToNaira(kobo), days: cmd.days },
          { token },
        );
        const what = `lock of ${kobo} kobo for ${cmd.days} days with ${model.wallet} in the wallet`;
        if (kobo < lockMinKobo) return expectRefusal(response, 'BELOW_MINIMUM', what);
        if (kobo > world.ctx.config.savings.lockMaxKobo)
          return expectRefusal(response, 'ABOVE_MAXIMUM', what);
        if (cmd.days < daysMin) return expectRefusal(response, 'BELOW_MINIMUM', what);
        if (cmd.days > daysMax) return expectRefusal(response, 'ABOVE_MAXIMUM', what);
        if (kobo > model.wallet) return expectRefusal(response, 'INSUFFICIENT_FUNDS', what);
        const lock = ok(response);
        assert.equal(lock.status, 'active', what);
        assert.equal(lock.amount, koboToNaira(kobo), what);
        assert.equal(lock.penalty, 0, what);
        assert.equal(lock.closedAt, null, what);
        assert.equal(Date.parse(lock.maturesAt) - Date.parse(lock.createdAt), cmd.days * DAY_MS, what);
        model.locks.push({
          id: lock.id,
          amount: kobo,
          maturesAtMs: Date.parse(lock.maturesAt),
          status: 'active',
        });
        model.wallet -= kobo;
        model.savings += kobo;
        model.totalLocked += kobo;
        return;
      }
      case 'break': {
        const candidates =
          cmd.which === 'unknown'
            ? []
            : model.locks.filter((l) => cmd.which === 'any' || l.status === 'active');
        if (candidates.length === 0) {
          const response = await post(world, 'breakSavingsLock', { lockId: randomUUID() }, { token });
          return expectRefusal(response, 'NOT_FOUND', 'break of a lock that does not exist');
        }
        const lock = candidates[cmd.pick % candidates.length]!;
        const before = nowMs();
        const response = await post<{ lock: SavingsLockView; refunded: number; penalty: number }>(
          world,
          'breakSavingsLock',
          { lockId: lock.id },
          { token },
        );
        const what = `break of a ${lock.status} lock of ${lock.amount} kobo due at ${new Date(lock.maturesAtMs).toISOString()}, at ${new Date(before).toISOString()}`;
        if (lock.status !== 'active') return expectRefusal(response, 'CONFLICT', what);
        const broken = ok(response);
        // A lock already due (the job has not run since) is not broken early: it matures, whole.
        const due =
          lock.maturesAtMs <= before || (lock.maturesAtMs <= nowMs() && broken.lock.status === 'matured');
        if (due) {
          assert.deepEqual(
            { status: broken.lock.status, penalty: broken.penalty, refunded: broken.refunded },
            { status: 'matured', penalty: 0, refunded: koboToNaira(lock.amount) },
            what,
          );
          return mature(model, lock);
        }
        const penalty = (lock.amount * penaltyPercent) / 100n;
        assert.equal(broken.penalty, koboToNaira(penalty), what);
        assert.equal(broken.refunded, koboToNaira(lock.amount - penalty), what);
        assert.equal(broken.lock.status, 'broken', what);
        assert.equal(broken.lock.penalty, koboToNaira(penalty), what);
        lock.status = 'broken';
        model.wallet += lock.amount - penalty;
        model.savings -= lock.amount;
        return;
      }
      case 'advance': {
        const now = nowMs();
        let seconds: number;
        switch (cmd.to) {
          case 'seconds':
            seconds = 1 + (cmd.n % 900);
            break;
          case 'midnight':
            // Just past the next Lagos midnight: a new check-in day.
            seconds = Math.ceil((nextLagosMidnight(now) - now) / 1000) + 1 + (cmd.n % 600);
            break;
          case 'maturity': {
            const due = model.locks.filter((l) => l.status === 'active').map((l) => l.maturesAtMs);
            const first = due.length === 0 ? now + daysMin * DAY_MS : Math.min(...due);
            // Just past the first maturity, or, one time in three, just before it.
            const offset = cmd.n % 3 === 0 ? -(60 + (cmd.n % 3_600)) : 1 + (cmd.n % 600);
            seconds = Math.max(1, Math.ceil((first - now) / 1000) + offset);
            break;
          }
          case 'days':
            seconds = (1 + (cmd.n % 60)) * 86_400 + (cmd.n % 86_400);
            break;
          case 'dueQuietly': {
            // Just past the first maturity, before the job's next run: the lock is due and active.
            const due = model.locks.filter((l) => l.status === 'active').map((l) => l.maturesAtMs);
            const first = due.length === 0 ? now : Math.min(...due);
            return advance(model, Math.max(1, Math.ceil((first - now) / 1000)) + 1 + (cmd.n % 50), true);
          }
        }
        return advance(model, seconds);
      }
      case 'claim': {
        if (cmd.nextDay) {
          const now = nowMs();
          await advance(model, Math.ceil((nextLagosMidnight(now) - now) / 1000) + 1);
        }
        const day = lagosDay(nowMs());
        const response = await post<{ claimedToday: boolean; streak: number; accrued: number }>(
          world,
          'claimCheckin',
          {},
          { token: await fresh(session) },
        );
        assert.equal(lagosDay(nowMs()), day, 'the command stayed within one Lagos day');
        if (model.claims.has(day)) return expectRefusal(response, 'CONFLICT', `second claim on ${day}`);
        const claimed = ok(response);
        const streak = (model.claims.get(previousDay(day)) ?? 0) + 1;
        model.claims.set(day, streak);
        model.accrued += BigInt(checkinRewardNaira * 100);
        assert.equal(claimed.claimedToday, true);
        assert.equal(claimed.streak, streak, `streak on ${day}`);
        assert.equal(claimed.accrued, koboToNaira(model.accrued));
        return;
      }
      case 'withdraw': {
        const response = await post<{ withdrawn: number; balance: number }>(
          world,
          'withdrawCheckin',
          {},
          { token },
        );
        const what = `withdrawal of ${model.accrued} kobo accrued`;
        if (model.accrued < checkinWithdrawMinKobo) return expectRefusal(response, 'BELOW_MINIMUM', what);
        const withdrawn = ok(response);
        model.wallet += model.accrued;
        assert.equal(withdrawn.withdrawn, koboToNaira(model.accrued), what);
        assert.equal(withdrawn.balance, koboToNaira(model.wallet), what);
        model.accrued = 0n;
        return;
      }
      case 'buy': {
        // Whole naira: the airtime face values a provider sells.
        const kobo = koboOf(cmd.amount, model, 100n);
        const naira = koboToNaira(kobo);
        const input = { network: 'mtn', phone: mtn(cmd.digit), amount: naira };
        const what = `airtime of ₦${naira} (digit ${cmd.digit}) with ${model.wallet} kobo in the wallet`;
        // No markup is configured: the retail price is the face value.
        if (naira < airtimeMinNaira || naira > airtimeMaxNaira || kobo > model.wallet) {
          const code =
            naira < airtimeMinNaira
              ? 'BELOW_MINIMUM'
              : naira > airtimeMaxNaira
                ? 'ABOVE_MAXIMUM'
                : 'INSUFFICIENT_FUNDS';
          return expectRefusal(
            await buyCall(world, { ...session, accessToken: token }, 'buyAirtime', input),
            code,
            what,
          );
        }
        const done = await bought(world, { ...session, accessToken: token }, 'buyAirtime', input);
        assert.equal(done.amount, naira, what);
        const status = { '5': 'success', '1': 'failed', '2': 'processing' }[cmd.digit];
        assert.equal(done.status, status, what);
        // Charged on acceptance; the provider's failure refunds it whole.
        if (cmd.digit !== '1') model.wallet -= kobo;
        return;
      }
    }
  }

  async function checkAgainstModel(session: Session, model: Model, label: string): Promise<void> {
    const wallet = ok(await get<Wallet>(world, 'getWallet', {}, { token: await fresh(session) }));
    assert.deepEqual(
      {
        balance: wallet.balance,
        lockedSavings: wallet.lockedSavings,
        checkinAccrued: wallet.checkinAccrued,
        lockedBonus: wallet.lockedBonus,
      },
      {
        balance: koboToNaira(model.wallet),
        lockedSavings: koboToNaira(model.savings),
        checkinAccrued: koboToNaira(model.accrued),
        lockedBonus: koboToNaira(model.bonus),
      },
      `the wallet after ${label}`,
    );
    assert.equal((await userBalances(world.ctx.db, session.userId)).bonus_locked, model.bonus);
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, `ledger after ${label}: ${JSON.stringify(check.imbalances)}`);
    const { rows } = await sql<{ negative: string | number; bonus_out: string | number }>`
      select
        (select count(*) from ledger_accounts where kind = 'user' and balance < 0) as negative,
        (select count(*) from ledger_entries e join ledger_accounts a on a.id = e.account_id
          where a.code like 'bonus\\_locked:%' and e.amount < 0) as bonus_out`.execute(world.ctx.db);
    assert.equal(Number(rows[0]!.negative), 0, `a user account below zero after ${label}`);
    assert.equal(Number(rows[0]!.bonus_out), 0, `a locked bonus moved out after ${label}`);
  }

  async function checkRecords(session: Session, model: Model): Promise<void> {
    const token = await fresh(session);
    const locks = ok(
      await get<{ items: SavingsLockView[]; total: number }>(
        world,
        'listSavingsLocks',
        { limit: 100 },
        { token },
      ),
    );
    assert.equal(locks.total, model.locks.length);
    assert.deepEqual(
      new Map(locks.items.map((l) => [l.id, l.status])),
      new Map(model.locks.map((l) => [l.id, l.status])),
      'the locks and their statuses',
    );
    const milestones = ok(
      await get<Array<{ threshold: number }>>(world, 'getPendingMilestones', {}, { token }),
    );
    assert.deepEqual(
      milestones.map((m) => m.threshold),
      milestonesNaira.filter((naira) => BigInt(naira) * 100n <= model.totalLocked),
      'the milestones of the total ever locked',
    );
    const status = ok(
      await get<{ claimedToday: boolean; accrued: number }>(world, 'getCheckinStatus', {}, { token }),
    );
    assert.equal(status.accrued, koboToNaira(model.accrued));
    assert.equal(status.claimedToday, model.claims.has(lagosDay(nowMs())));
  }

  /** A user at Tier 1 with a PIN, `walletNaira`, and a locked referral bonus from one invitee. */
  async function referrer(walletNaira: number): Promise<Session> {
    const user = await buyer(world, walletNaira);
    const { referralCode } = ok(
      await get<{ referralCode: string }>(world, 'getMe', {}, { token: user.accessToken }),
    );
    const invitee = await signIn(world, uniquePhone(), { referralCode });
    await userAtTier(world, 1, invitee);
    await runDomainEvents(world);
    const now = nowMs();
    return { ...user, accessAtMs: now, sessionAtMs: now };
  }

  it('keeps the wallet the model says, the ledger balanced, no balance negative and the bonus locked', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(0, 120, 2_000, 2_000, 12_000, 12_000),
        fc.array(command, { minLength: 1, maxLength: commandsMax }),
        async (walletNaira, commands) => {
          const session = await referrer(walletNaira);
          const model: Model = {
            wallet: BigInt(walletNaira) * 100n,
            savings: 0n,
            accrued: 0n,
            bonus: referralBonusKobo,
            totalLocked: 0n,
            locks: [],
            claims: new Map(),
          };
          // Out of the last minutes of a Lagos day, if the clock is there, before a claim can be made.
          await advance(model, 0);
          await checkAgainstModel(session, model, 'the start');
          for (const [i, cmd] of commands.entries()) {
            await run(session, model, cmd);
            await checkAgainstModel(session, model, `command ${i} ${JSON.stringify(cmd)}`);
          }
          await checkRecords(session, model);
          // Then past every maturity: each lock still active comes back whole, once.
          const due = model.locks.filter((l) => l.status === 'active').map((l) => l.maturesAtMs);
          if (due.length > 0) {
            await advance(model, Math.ceil((Math.max(...due) - nowMs()) / 1000) + 60);
            assert.deepEqual(
              model.locks.filter((l) => l.status === 'active'),
              [],
              'every lock matured',
            );
            await checkAgainstModel(session, model, 'every maturity');
            await checkRecords(session, model);
          }
        },
      ),
      { numRuns: runs },
    );
  });
});
