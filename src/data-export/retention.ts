import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/**
 * Deletes up to batchMax exports whose link expired before `before` (the file was emptied at its
 * expiry already, by the sweep; this takes the row), in one statement: retention.purge's batch
 * (decision 0054). Only rows far past the once-a-day rule's 24 h go, so the rule still counts every
 * request it needs. Answers how many.
 */
export async function purgeExpiredDataExports(
  db: Kysely<DB>,
  before: Date,
  batchMax: number,
): Promise<number> {
  const result = await db
    .deleteFrom('data_exports')
    .where(
      'id',
      'in',
      db.selectFrom('data_exports').select('id').where('expires_at', '<', before).limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
