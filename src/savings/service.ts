import { type Kysely, sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB, SavingsLocksTable } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { type DomainEvent, publishEvents } from '../events/domain-events.ts';
import type { GrowthApi } from '../growth/module.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { InsufficientBalanceError, type PostingRequest, postBatch } from '../ledger/postings.ts';
import { requireWithin } from '../limits.ts';
import { formatNaira, koboToNaira, nairaToKobo } from '../money.ts';

// Savings locks (SPEC.md item 7, API.md section 9). A lock moves money from the wallet into the
// user's savings account and leaves `active` exactly once: matured (the whole amount back, by the
// maturity job) or broken (the amount less the penalty back, the penalty to revenue). The status
// change and its posting are one transaction, and the UPDATE that leaves `active` is conditional, so
// a break and the maturity racing for one lock settle it one way only.

export type SavingsDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  config: Config['savings'];
  /** Growth's: records the savings milestones a lock reached, in the lock's transaction. */
  reachMilestones: GrowthApi['reachMilestones'];
};

type LockRow = {
  id: string;
  user_id: string;
  amount: bigint;
  days: number;
  status: SavingsLocksTable['status'];
  penalty: bigint;
  created_at: Date;
  matures_at: Date;
  closed_at: Date | null;
};

export type SavingsLockView = {
  id: string;
  amount: number;
  days: number;
  status: LockRow['status'];
  penalty: number;
  createdAt: string;
  maturesAt: string;
  closedAt: string | null;
};

export const toLockView = (row: LockRow): SavingsLockView => ({
  id: row.id,
  amount: koboToNaira(row.amount),
  days: row.days,
  status: row.status,
  penalty: koboToNaira(row.penalty),
  createdAt: row.created_at.toISOString(),
  maturesAt: row.matures_at.toISOString(),
  closedAt: row.closed_at?.toISOString() ?? null,
});

const DAY_MS = 86_400_000;

/** Posts the one movement of a savings transaction; a refusal for want of funds is the client's 409. */
async function postOne(trx: Transaction<DB>, request: PostingRequest, now: Date): Promise<void> {
  const [result] = await postBatch(trx, [request], now, { referencesUnposted: true });
  if (result!.status === 'fulfilled') return;
  if (result!.reason instanceof InsufficientBalanceError) {
    throw new AppError('INSUFFICIENT_FUNDS', 'the wallet balance is below the amount to lock');
  }
  throw result!.reason;
}

/**
 * Locks `amountNaira` for `days`: the wallet is debited into savings in the transaction that writes
 * the lock, its milestones and its events, or nothing happens at all.
 */
export async function createLock(
  deps: SavingsDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  amountNaira: number,
  days: number,
): Promise<SavingsLockView> {
  const { config } = deps;
  requireWithin(amountNaira, 'savings lock', {
    min: koboToNaira(config.lockMinKobo),
    max: koboToNaira(config.lockMaxKobo),
  });
  requireWithin(days, 'lock period', { min: config.daysMin, max: config.daysMax }, 'days');
  const amount = nairaToKobo(amountNaira);
  const now = deps.clock.now();
  const lock: LockRow = {
    id: newId(),
    user_id: userId,
    amount,
    days,
    status: 'active',
    penalty: 0n,
    created_at: now,
    matures_at: new Date(now.getTime() + days * DAY_MS),
    closed_at: null,
  };
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    // The posting first: it locks the wallet, so one user's locks are written one after the other
    // and the total below counts every lock committed before this one.
    await postOne(
      trx,
      {
        reference: savingsPostings.lock(lock.id),
        description: `Savings lock for ${days} days`,
        entries: [
          { account: userAccount('wallet', userId), amount: -amount },
          { account: userAccount('savings', userId), amount },
        ],
        metadata: { lockId: lock.id },
      },
      now,
    );
    await trx.insertInto('savings_locks').values(lock).execute();
    const total = await trx
      .selectFrom('savings_locks')
      .select((eb) => eb.fn.sum<string>('amount').as('total'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    const reached = await deps.reachMilestones(trx, userId, BigInt(total.total), config.milestonesKobo, now);
    const occurredAt = now.toISOString();
    await publishEvents(deps.jobs, trx, [
      {
        type: 'savings.lock_created',
        userId,
        lockId: lock.id,
        amountKobo: amount.toString(),
        days,
        maturesAt: lock.matures_at.toISOString(),
        occurredAt,
      },
      ...reached.map(
        (threshold): DomainEvent => ({
          type: 'growth.milestone_reached',
          userId,
          thresholdKobo: threshold.toString(),
          occurredAt,
        }),
      ),
    ]);
    return toLockView(lock);
  });
}

export async function listLocks(
  db: Kysely<DB>,
  userId: string,
  query: { limit: number; offset: number; status?: LockRow['status'] | undefined },
): Promise<{ items: SavingsLockView[]; total: number }> {
  let mine = db.selectFrom('savings_locks').where('user_id', '=', userId);
  if (query.status !== undefined) mine = mine.where('status', '=', query.status);
  const rows = await mine
    .selectAll()
    // Ids are UUIDv7, in creation order: they order the locks of one instant too.
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(query.limit)
    .offset(query.offset)
    .execute();
  const counted = await mine
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return { items: rows.map(toLockView), total: Number(counted.n) };
}

/**
 * Breaks an active lock early: the amount less the penalty (rounded down to the kobo) back to the
 * wallet, the penalty to revenue. Another user's lock, or none, is 404; a lock that is no longer
 * active (broken, matured: also by the maturity job an instant ago) is 409. A lock already due that
 * the maturity job has not reached yet is not early: it matures here, whole, with no penalty, as the
 * job would have (the same reference, so the two can never both credit it).
 */
export async function breakLock(
  deps: SavingsDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  lockId: string,
): Promise<{ lock: SavingsLockView; refunded: number; penalty: number }> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const due = sql<boolean>`matures_at <= ${now}`;
    const closed = await trx
      .updateTable('savings_locks')
      .set({
        status: sql`case when ${due} then 'matured' else 'broken' end`,
        // Integer division of positive numbers: rounded down to the kobo.
        penalty: sql<bigint>`case when ${due} then 0 else amount * ${deps.config.breakPenaltyBp}::bigint / 10000 end`,
        closed_at: now,
      })
      .where('id', '=', lockId)
      .where('user_id', '=', userId)
      .where('status', '=', 'active')
      .returningAll()
      .executeTakeFirst();
    if (closed === undefined) {
      const existing = await trx
        .selectFrom('savings_locks')
        .select('status')
        .where('id', '=', lockId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (existing === undefined) throw notFound('savings lock');
      throw new AppError('CONFLICT', `the lock is already ${existing.status}`);
    }
    if (closed.status === 'matured') {
      await postOne(trx, maturityPosting(closed), now);
      await publishEvents(deps.jobs, trx, [maturedEvent(closed, now)]);
      return { lock: toLockView(closed), refunded: koboToNaira(closed.amount), penalty: 0 };
    }
    const refunded = closed.amount - closed.penalty;
    await postOne(
      trx,
      {
        reference: savingsPostings.break(lockId),
        description:
          closed.penalty > 0n
            ? `Savings lock broken early: ${formatNaira(closed.penalty)} penalty`
            : 'Savings lock broken early',
        // A penalty of 0 % (or 100 %) leaves one side empty: a ledger entry always moves something.
        entries: [
          { account: userAccount('savings', userId), amount: -closed.amount },
          { account: userAccount('wallet', userId), amount: refunded },
          { account: systemAccounts.revenuePenalty, amount: closed.penalty },
        ].filter((entry) => entry.amount !== 0n),
        metadata: { lockId },
      },
      now,
    );
    await publishEvents(deps.jobs, trx, [
      {
        type: 'savings.lock_broken',
        userId,
        lockId,
        refundedKobo: refunded.toString(),
        penaltyKobo: closed.penalty.toString(),
        occurredAt: now.toISOString(),
      },
    ]);
    return {
      lock: toLockView(closed),
      refunded: koboToNaira(refunded),
      penalty: koboToNaira(closed.penalty),
    };
  });
}

/** The ledger references of a lock's movements: locked, broken early, matured. */
export const savingsPostings = {
  lock: (lockId: string) => `savings-lock:${lockId}`,
  break: (lockId: string) => `savings-break:${lockId}`,
  mature: (lockId: string) => `savings-mature:${lockId}`,
};

/** A matured lock's movement: the whole amount from savings back to the wallet, under the lock's maturity reference. */
export const maturityPosting = (lock: { id: string; user_id: string; amount: bigint }): PostingRequest => ({
  reference: savingsPostings.mature(lock.id),
  description: 'Savings lock matured',
  entries: [
    { account: userAccount('savings', lock.user_id), amount: -lock.amount },
    { account: userAccount('wallet', lock.user_id), amount: lock.amount },
  ],
  metadata: { lockId: lock.id },
});

export const maturedEvent = (
  lock: { id: string; user_id: string; amount: bigint },
  now: Date,
): DomainEvent => ({
  type: 'savings.lock_matured',
  userId: lock.user_id,
  lockId: lock.id,
  amountKobo: lock.amount.toString(),
  occurredAt: now.toISOString(),
});
