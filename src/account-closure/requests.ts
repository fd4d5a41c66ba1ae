import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { AccountClosureModuleDeps } from './deps.ts';
import { currentReasons, lockedReasons } from './reasons.ts';
import type { AccountDeletionView, ClosureReason } from './schemas.ts';

// A person's request to close their account and its cancellation (API.md 17.3, decision 0047). The
// transaction PIN first, as a transfer asks it; then the reasons, decided under the wallet's lock
// (reasons.ts), and the request recorded with its effective time in the same transaction. While it
// waits the account is used as before: signing in, paying and being paid cancel nothing, and the
// closing job decides again at the effective time.

export type RequestDeps = Pick<
  AccountClosureModuleDeps,
  | 'db'
  | 'clock'
  | 'jobs'
  | 'config'
  | 'verifyTransactionPin'
  | 'processingPurchasesOf'
  | 'openDisputesOf'
  | 'activeLocksOf'
  | 'openSchedulesOf'
>;

const dayMs = 24 * 60 * 60 * 1000;

/** 409 CONFLICT with every reason that applies, in the contract's order. */
export const closureRefused = (reasons: readonly ClosureReason[]) =>
  new AppError('CONFLICT', `your account cannot be closed yet: ${reasons.join(', ')}`, {
    details: { reasons },
  });

async function pendingRequestOf(db: Kysely<DB> | Transaction<DB>, userId: string) {
  return db
    .selectFrom('account_closures')
    .select(['id', 'requested_at', 'effective_at'])
    .where('user_id', '=', userId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

/**
 * Asks to close the caller's account: its effective time, or 409 CONFLICT with the reasons. A
 * request already pending is answered as it stands (its grace period does not start again).
 */
export async function requestAccountDeletion(
  deps: RequestDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  pin: string,
): Promise<{ effectiveAt: string }> {
  await deps.verifyTransactionPin(userId, pin);
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const reasons = await lockedReasons(deps, trx, userId);
    if (reasons.length > 0) throw closureRefused(reasons);
    // Under the wallet's lock, which every request of this person takes first: one at a time.
    const pending = await pendingRequestOf(trx, userId);
    if (pending !== undefined) return { effectiveAt: pending.effective_at.toISOString() };
    const now = deps.clock.now();
    const effectiveAt = new Date(now.getTime() + deps.config.graceDays * dayMs);
    const id = newId();
    await trx
      .insertInto('account_closures')
      .values({ id, user_id: userId, status: 'pending', requested_at: now, effective_at: effectiveAt })
      .execute();
    await publishEvent(deps.jobs, trx, {
      type: 'account_closure.requested',
      userId,
      requestId: id,
      effectiveAt: effectiveAt.toISOString(),
      occurredAt: now.toISOString(),
    });
    return { effectiveAt: effectiveAt.toISOString() };
  });
}

/**
 * Cancels the caller's pending request before its effective time: 409 CONFLICT when none is pending,
 * or once the time has come (the closing job decides it then, under the request's row lock).
 */
export async function cancelAccountDeletion(
  deps: Pick<RequestDeps, 'db' | 'clock' | 'jobs'>,
  withCommit: WithCommit | undefined,
  userId: string,
): Promise<{ cancelledAt: string }> {
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const now = deps.clock.now();
    const cancelled = await trx
      .updateTable('account_closures')
      .set({ status: 'cancelled', cancelled_at: now, cancelled_by: 'person' })
      .where('user_id', '=', userId)
      .where('status', '=', 'pending')
      .where('effective_at', '>', now)
      .returning('id')
      .executeTakeFirst();
    if (cancelled === undefined) {
      throw new AppError('CONFLICT', 'no closing of your account is waiting to be cancelled');
    }
    await publishEvent(deps.jobs, trx, {
      type: 'account_closure.cancelled',
      userId,
      requestId: cancelled.id,
      by: 'person',
      reasons: [],
      occurredAt: now.toISOString(),
    });
    return { cancelledAt: now.toISOString() };
  });
}

/** The caller's pending request, if any, and the reasons that would stop the closing now. */
export async function accountDeletionOf(deps: RequestDeps, userId: string): Promise<AccountDeletionView> {
  const pending = await pendingRequestOf(deps.db, userId);
  const reasons = await currentReasons(deps, deps.db, userId);
  return {
    pending:
      pending === undefined
        ? null
        : {
            requestedAt: pending.requested_at.toISOString(),
            effectiveAt: pending.effective_at.toISOString(),
          },
    reasons,
  };
}
