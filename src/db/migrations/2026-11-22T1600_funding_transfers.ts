import { type Kysely, sql } from 'kysely';

// Funding events of outbound transfers (SPEC.md "Events": transfer.success, transfer.failed,
// transfer.reversed): money sent from the collections pool at the payment provider to a VTU
// provider's bank account, to top up our float there just in time. One row per transfer reference;
// the transfer webhooks, the provider's own answer and reconciliation all move it through the same
// state machine (src/funding/transfers.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('funding_transfers')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    // Paystack's transfer references: 16-50 lower-case letters, digits, '-' and '_'.
    .addColumn('reference', 'text', (c) => c.notNull().unique().check(sql`reference ~ '^[a-z0-9_-]{16,50}$'`))
    // The VTU provider whose float it tops up (data, bills, social).
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('bank_code', 'text', (c) => c.notNull())
    .addColumn('account_number', 'text', (c) => c.notNull())
    .addColumn('account_name', 'text', (c) => c.notNull())
    // The narration sent with the transfer.
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('pending', 'success', 'failed', 'reversed')`),
    )
    .addColumn('transfer_code', 'text')
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    // When the transfer settled at the bank; kept when it is later reversed.
    .addColumn('settled_at', 'timestamptz')
    // When it failed or was reversed: nothing moves it after that.
    .addColumn('closed_at', 'timestamptz')
    .addCheckConstraint(
      'funding_transfers_closed_consistent',
      sql`(status in ('failed', 'reversed')) = (closed_at is not null) and (status <> 'success' or settled_at is not null)`,
    )
    .execute();
  await sql`create index funding_transfers_pending_idx on funding_transfers (updated_at) where status = 'pending'`.execute(
    db,
  );
  await db.schema
    .createIndex('funding_transfers_provider_idx')
    .on('funding_transfers')
    .columns(['provider', 'created_at'])
    .execute();

  // How far reconciliation has scanned the provider's list of transfers into dedicated accounts
  // (whose webhook may have been lost): one row per scan, moved forward after each complete pass.
  await db.schema
    .createTable('reconcile_cursors')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('position', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('the funding transfers migration is not reversible');
}
