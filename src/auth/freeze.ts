import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';

// Freezing an account (API.md section 17.4, decision 0040): an operator stops every movement of money
// out of a person's wallet at the person's request (purchases of every kind, social and bulk orders,
// scheduled runs, transfers out), while the person can still sign in and see everything, and credits
// still land (top-ups, refunds, transfers in, operators' adjustments).
//
// The state is the user row's (frozen_at, frozen_reason, frozen_by). The debits judge it under the
// wallet's lock, reading the row FOR SHARE (users.ts frozenAmong): the purchases through their debit
// rule (vtu/debit-rules.ts accountNotFrozen), the transfers in their posting's admission. The freeze
// here is an UPDATE of that row, so it waits for the debits that read it unfrozen and commits after
// them; every debit decided after it reads it frozen (403 ACCOUNT_FROZEN, nothing debited).
//
// Freezing a frozen account, or unfreezing one that is not, is 409 CONFLICT: an operator is told that
// someone else acted first, rather than believing their own reason was recorded. A retry of the same
// request is the Idempotency-Key's replay, not a second freeze.

type FreezeDeps = { db: Kysely<DB>; clock: Clock; jobs: JobQueue };

export type FreezeView = {
  userId: string;
  frozen: boolean;
  frozenAt: string | null;
  reason: string | null;
};

/** Freezes the account; 404 for no such user, 409 when it is frozen already. The person is told. */
export async function freezeUser(
  deps: FreezeDeps,
  withCommit: WithCommit | undefined,
  change: { userId: string; reason: string; adminId: string },
): Promise<FreezeView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const frozen = await trx
      .updateTable('users')
      .set({ frozen_at: now, frozen_reason: change.reason, frozen_by: change.adminId, updated_at: now })
      .where('id', '=', change.userId)
      .where('frozen_at', 'is', null)
      .returning(['id'])
      .executeTakeFirst();
    if (frozen === undefined) {
      const user = await trx
        .selectFrom('users')
        .select(['frozen_at'])
        .where('id', '=', change.userId)
        .executeTakeFirst();
      if (user === undefined) throw notFound('user');
      throw new AppError('CONFLICT', 'the account is frozen already', {
        details: { frozenAt: new Date(user.frozen_at!).toISOString() },
      });
    }
    // The person is told that it is frozen, not why: the operator's reason may name a suspicion
    // that must not be disclosed to them (decision 0040).
    await publishEvent(deps.jobs, trx, {
      type: 'auth.account_frozen',
      userId: change.userId,
      occurredAt: now.toISOString(),
    });
    return { userId: change.userId, frozen: true, frozenAt: now.toISOString(), reason: change.reason };
  });
}

/** Unfreezes the account; 404 for no such user, 409 when it is not frozen. The person is told. */
export async function unfreezeUser(
  deps: FreezeDeps,
  withCommit: WithCommit | undefined,
  change: { userId: string },
): Promise<FreezeView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const unfrozen = await trx
      .updateTable('users')
      .set({ frozen_at: null, frozen_reason: null, frozen_by: null, updated_at: now })
      .where('id', '=', change.userId)
      .where('frozen_at', 'is not', null)
      .returning(['id'])
      .executeTakeFirst();
    if (unfrozen === undefined) {
      const user = await trx
        .selectFrom('users')
        .select('id')
        .where('id', '=', change.userId)
        .executeTakeFirst();
      if (user === undefined) throw notFound('user');
      throw new AppError('CONFLICT', 'the account is not frozen');
    }
    await publishEvent(deps.jobs, trx, {
      type: 'auth.account_unfrozen',
      userId: change.userId,
      occurredAt: now.toISOString(),
    });
    return { userId: change.userId, frozen: false, frozenAt: null, reason: null };
  });
}
