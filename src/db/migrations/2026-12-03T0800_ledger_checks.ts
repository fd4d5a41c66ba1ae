import type { Kysely } from 'kysely';

// Each run of the ledger check (issue 29 item 7): when it ran and what it found, so that /metrics
// (any process) shows the latest result and how long ago it was, and an alert fires on an imbalance
// or on a check that stopped running. One row per run: the hourly job and every adminLedgerCheck.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ledger_checks')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('checked_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ok', 'boolean', (c) => c.notNull())
    .addColumn('accounts', 'integer', (c) => c.notNull())
    .addColumn('entries', 'bigint', (c) => c.notNull())
    .addColumn('imbalances', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_checks_checked_at_idx')
    .on('ledger_checks')
    .column('checked_at')
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ledger_checks').execute();
}
