import { type Kysely, sql } from 'kysely';

// VTU purchases (SPEC.md "States and transitions"): processing → success | failed, once. The wallet
// is debited into vtu_in_flight when the row is written (same transaction); the provider is called at
// most once per reference (sent_at is claimed before the call); a pending or unknown outcome is
// requeried on a backoff schedule (next_requery_at) and never refunded blindly.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('vtu_transactions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    // Sent to the provider as its request id: VTpass's Lagos-time rule, letters and digits only.
    .addColumn('reference', 'text', (c) =>
      c.notNull().unique().check(sql`reference ~ '^[0-9]{12}[A-Za-z0-9]{1,38}$'`),
    )
    .addColumn('service', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('network', 'text')
    .addColumn('recipient', 'text', (c) => c.notNull())
    // What the provider is asked for (plan, disco, meter type, quantity, ...), as sent.
    .addColumn('request', 'jsonb', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    // Kobo: what the wallet was charged = wholesale + markup.
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('wholesale', 'bigint', (c) => c.notNull().check(sql`wholesale > 0`))
    .addColumn('markup', 'bigint', (c) => c.notNull().check(sql`markup >= 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('processing', 'success', 'failed')`))
    .addColumn('provider_reference', 'text')
    .addColumn('token', 'text')
    .addColumn('units', 'text')
    .addColumn('pins', 'jsonb')
    .addColumn('failure_reason', 'text')
    .addColumn('sent_at', 'timestamptz')
    // The float top-up this purchase waits for before it is sent (just-in-time funding).
    .addColumn('funding_reference', 'text')
    .addColumn('requery_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_requery_at', 'timestamptz')
    .addColumn('stuck_alerted_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('completed_at', 'timestamptz')
    .addCheckConstraint('vtu_transactions_amount_parts', sql`amount = wholesale + markup`)
    .addCheckConstraint(
      'vtu_transactions_completed_consistent',
      sql`(status = 'processing') = (completed_at is null)`,
    )
    .execute();
  await db.schema
    .createIndex('vtu_transactions_user_idx')
    .on('vtu_transactions')
    .columns(['user_id', 'created_at'])
    .execute();
  await sql`create index vtu_transactions_funding_idx on vtu_transactions (funding_reference) where status = 'processing' and sent_at is null`.execute(
    db,
  );
  await sql`create index vtu_transactions_requery_idx on vtu_transactions (next_requery_at) where status = 'processing'`.execute(
    db,
  );
}

export async function down(): Promise<void> {
  throw new Error('the VTU transactions migration is not reversible');
}
