import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/**
 * Deletes up to batchMax notifications of the inbox: read ones made before `readBefore`, and any made
 * before `before` (read or not), in one statement: retention.purge's batch (decision 0054). Answers
 * how many.
 */
export async function purgeOldNotifications(
  db: Kysely<DB>,
  cutoffs: { readBefore: Date; before: Date },
  batchMax: number,
): Promise<number> {
  const result = await db
    .deleteFrom('notifications')
    .where(
      'id',
      'in',
      db
        .selectFrom('notifications')
        .select('id')
        .where((eb) =>
          eb.or([
            eb('created_at', '<', cutoffs.before),
            eb.and([eb('read_at', 'is not', null), eb('created_at', '<', cutoffs.readBefore)]),
          ]),
        )
        .limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
