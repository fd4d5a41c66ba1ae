import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

// The recorded ledger checks' part of retention.purge (decision 0054): the rows check-runs.ts writes
// every hour, kept RETENTION_LEDGER_CHECKS_DAYS.

/**
 * Deletes up to batchMax recorded runs checked before `before`, in one statement: retention.purge's
 * batch (decision 0054). The latest run is never deleted, however old: /metrics reads it. Answers how many.
 */
export async function purgeLedgerChecks(db: Kysely<DB>, before: Date, batchMax: number): Promise<number> {
  const latest = db.selectFrom('ledger_checks').select('id').orderBy('checked_at', 'desc').limit(1);
  const result = await db
    .deleteFrom('ledger_checks')
    .where(
      'id',
      'in',
      db
        .selectFrom('ledger_checks')
        .select('id')
        .where('checked_at', '<', before)
        .where('id', 'not in', latest)
        .orderBy('checked_at')
        .limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
