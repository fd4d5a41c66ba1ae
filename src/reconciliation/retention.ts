import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/**
 * Deletes up to batchMax matched items of runs started before `before`, in one statement:
 * retention.purge's batch (decision 0054). A matched item is a copy of two records that agree, ours
 * (kept five years) and the provider's; its run keeps the count. The items that did not match, with
 * their resolutions, are money evidence and are kept with the runs. Answers how many.
 */
export async function purgeMatchedItems(db: Kysely<DB>, before: Date, batchMax: number): Promise<number> {
  const result = await db
    .deleteFrom('reconciliation_items')
    .where(
      'id',
      'in',
      db
        .selectFrom('reconciliation_items')
        .innerJoin('reconciliation_runs', 'reconciliation_runs.id', 'reconciliation_items.run_id')
        .select('reconciliation_items.id')
        .where('reconciliation_items.bucket', '=', 'matched')
        .where('reconciliation_runs.created_at', '<', before)
        .limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
