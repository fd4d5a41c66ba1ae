import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { checkLedger, type LedgerCheck } from './check.ts';
import { checkLedgerIncrementally } from './incremental-check.ts';

// The ledger check as a recorded run: the check itself (check.ts), then a row saying when it ran and
// what it found (ledger_checks), which /metrics reads from any process. The hourly job (admin's) and
// adminLedgerCheck both check through here, so the latest result is whichever ran last. They run the
// incremental check (incremental-check.ts, decision 0053); `npm run ledger:check -- --full` the full
// one, over a replica when there is one. Each row says which kind ran.

export type LedgerCheckRun = { checkedAt: Date; ok: boolean; imbalances: number };

export type LedgerCheckKind = 'incremental' | 'full';

/**
 * Checks the ledger and records the run; answers the check as checkLedger does. The full check reads
 * `fullFrom` (a replica) when given; the run is recorded in `db` whatever it read.
 */
export async function checkAndRecordLedger(
  db: Kysely<DB>,
  now: () => Date,
  options: { kind: LedgerCheckKind; fullFrom?: Kysely<DB> } = { kind: 'incremental' },
): Promise<LedgerCheck> {
  const result =
    options.kind === 'incremental'
      ? await checkLedgerIncrementally(db, now())
      : await checkLedger(options.fullFrom ?? db);
  await db
    .insertInto('ledger_checks')
    .values({
      // When the check ended: an alert on the time since the last run counts from here.
      checked_at: now(),
      ok: result.ok,
      accounts: result.accounts,
      entries: BigInt(result.entries),
      imbalances: result.imbalances.length,
      kind: options.kind,
    })
    .execute();
  return result;
}

/** The latest recorded run, or null when the ledger was never checked here. Reads one index entry. */
export async function lastLedgerCheck(db: Kysely<DB>): Promise<LedgerCheckRun | null> {
  const row = await db
    .selectFrom('ledger_checks')
    .select(['checked_at', 'ok', 'imbalances'])
    .orderBy('checked_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? null : { checkedAt: row.checked_at, ok: row.ok, imbalances: row.imbalances };
}

// Retention (decision 0054): the runs are kept RETENTION_LEDGER_CHECKS_DAYS, the latest always.
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
