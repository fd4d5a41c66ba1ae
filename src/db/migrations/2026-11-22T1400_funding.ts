import { type Kysely, sql } from 'kysely';

// Wallet funding through checkout: top-up intents (one per checkout, credited at most once), the
// payment provider's signed webhooks exactly as received (stored before they are processed, once
// per distinct body), and operations alerts (amount mismatches now; failed provider funding and
// ledger imbalances later).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('topup_intents')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    // Paystack allows letters, digits, '-', '.' and '='; ours are `top-<24 hex>`.
    .addColumn('reference', 'text', (c) =>
      c.notNull().unique().check(sql`reference ~ '^[A-Za-z0-9-]{1,100}$'`),
    )
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'success', 'failed')`))
    .addColumn('credited_amount', 'bigint', (c) => c.check(sql`credited_amount > 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('credited_at', 'timestamptz')
    // Credited means success with the amount paid, and nothing else does.
    .addCheckConstraint(
      'topup_intents_credit_consistent',
      sql`(credited_at is null) = (credited_amount is null) and (credited_at is null or status = 'success')`,
    )
    .execute();
  await db.schema
    .createIndex('topup_intents_user_idx')
    .on('topup_intents')
    .columns(['user_id', 'created_at'])
    .execute();
  // Reconciliation will look for intents still pending.
  await sql`create index topup_intents_pending_idx on topup_intents (created_at) where status = 'pending'`.execute(
    db,
  );

  await db.schema
    .createTable('payment_events')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull())
    // The raw body exactly as received: UTF-8 text, or base64 of the bytes when they are not valid
    // UTF-8 or hold a NUL (which PostgreSQL text refuses).
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('body_encoding', 'text', (c) => c.notNull().check(sql`body_encoding in ('utf8', 'base64')`))
    // A redelivery of the same bytes is stored once.
    .addColumn('body_sha256', 'text', (c) => c.notNull().unique())
    .addColumn('event', 'text')
    .addColumn('reference', 'text')
    .addColumn('processed_at', 'timestamptz')
    .addColumn('outcome', 'text')
    .addCheckConstraint('payment_events_processed_outcome', sql`(processed_at is null) = (outcome is null)`)
    .execute();
  await db.schema
    .createIndex('payment_events_reference_idx')
    .on('payment_events')
    .column('reference')
    .execute();
  await sql`create index payment_events_unprocessed_idx on payment_events (received_at) where processed_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('ops_alerts')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('details', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('ops_alerts_created_idx').on('ops_alerts').column('created_at').execute();
}

export async function down(): Promise<void> {
  throw new Error('the funding migration is not reversible');
}
