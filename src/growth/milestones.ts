import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { koboToNaira } from '../money.ts';

// Milestones: thresholds on the total a user has ever locked in savings (API.md section 9). Reaching
// one records it pending, once per user and threshold (the primary key: two locks that cross it at
// once record it once); the user acknowledges it, and then it is no longer pending.

export type MilestoneView = { threshold: number; reachedAt: string };

/**
 * Records the thresholds the user's savings ever locked (`totalKobo`, this transaction's lock
 * included) have reached, and answers those reached just now. Runs in the transaction of the lock
 * that crossed them, so a milestone exists exactly when that lock does.
 */
export async function reachMilestones(
  trx: Transaction<DB>,
  userId: string,
  totalKobo: bigint,
  thresholdsKobo: readonly bigint[],
  now: Date,
): Promise<bigint[]> {
  const reached = thresholdsKobo.filter((threshold) => threshold <= totalKobo);
  if (reached.length === 0) return [];
  const inserted = await trx
    .insertInto('savings_milestones')
    .values(reached.map((threshold) => ({ user_id: userId, threshold, reached_at: now })))
    .onConflict((oc) => oc.columns(['user_id', 'threshold']).doNothing())
    .returning('threshold')
    .execute();
  return inserted.map((row) => row.threshold);
}

export async function pendingMilestones(db: Kysely<DB>, userId: string): Promise<MilestoneView[]> {
  const rows = await db
    .selectFrom('savings_milestones')
    .select(['threshold', 'reached_at'])
    .where('user_id', '=', userId)
    .where('acknowledged_at', 'is', null)
    .orderBy('threshold')
    .execute();
  return rows.map((row) => ({
    threshold: koboToNaira(row.threshold),
    reachedAt: row.reached_at.toISOString(),
  }));
}

/** Acknowledges a pending milestone; a threshold that is not pending (never reached, or acknowledged) is 404. */
export async function acknowledgeMilestone(
  db: Kysely<DB>,
  userId: string,
  thresholdKobo: bigint,
  now: Date,
): Promise<MilestoneView & { acknowledgedAt: string }> {
  const row = await db
    .updateTable('savings_milestones')
    .set({ acknowledged_at: now })
    .where('user_id', '=', userId)
    .where('threshold', '=', thresholdKobo)
    .where('acknowledged_at', 'is', null)
    .returning(['threshold', 'reached_at'])
    .executeTakeFirst();
  if (row === undefined) throw notFound('pending milestone');
  return {
    threshold: koboToNaira(row.threshold),
    reachedAt: row.reached_at.toISOString(),
    acknowledgedAt: now.toISOString(),
  };
}
