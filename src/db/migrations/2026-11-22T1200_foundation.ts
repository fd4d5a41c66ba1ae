import { type Kysely, sql } from 'kysely';

// Frozen: migrations never import application code, so they mean the same thing forever.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('phone', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text')
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('referral_code', 'text', (c) => c.notNull().unique())
    .addColumn('referred_by_code', 'text')
    .addColumn('kyc_tier', 'integer', (c) => c.notNull().defaultTo(0).check(sql`kyc_tier between 0 and 3`))
    .addColumn('pin_hash', 'text')
    .addColumn('pin_failed_count', 'integer', (c) =>
      c.notNull().defaultTo(0).check(sql`pin_failed_count >= 0`),
    )
    .addColumn('pin_locked_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('otp_codes')
    .addColumn('phone', 'text', (c) => c.primaryKey())
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('sent_at', 'timestamptz', (c) => c.notNull())
    .addColumn('day_started_at', 'timestamptz', (c) => c.notNull())
    .addColumn('day_requests', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_idx').on('sessions').column('user_id').execute();

  await db.schema
    .createTable('access_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('access_tokens_session_idx').on('access_tokens').column('session_id').execute();

  await db.schema
    .createTable('refresh_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('rotated_at', 'timestamptz')
    .execute();
  await db.schema
    .createIndex('refresh_tokens_session_idx')
    .on('refresh_tokens')
    .column('session_id')
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('key', 'uuid', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('in_progress', 'done')`))
    .addColumn('response_status', 'integer')
    .addColumn('response_body', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_expiry_idx')
    .on('idempotency_keys')
    .column('expires_at')
    .execute();

  // The ledger. A user account's balance can never be negative: the CHECK is the second line of
  // defence behind the conditional UPDATE in ledger/postings.ts.
  await db.schema
    .createTable('ledger_accounts')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('code', 'text', (c) => c.notNull().unique())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('user', 'system')`))
    .addColumn('user_id', 'uuid', (c) => c.references('users.id'))
    .addColumn('balance', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('ledger_accounts_user_not_negative', sql`kind <> 'user' or balance >= 0`)
    .addCheckConstraint('ledger_accounts_user_owner', sql`(kind = 'user') = (user_id is not null)`)
    .execute();
  await db.schema.createIndex('ledger_accounts_user_idx').on('ledger_accounts').column('user_id').execute();

  await db.schema
    .createTable('ledger_transactions')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('metadata', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('transaction_id', 'bigint', (c) => c.notNull().references('ledger_transactions.id'))
    .addColumn('account_id', 'bigint', (c) => c.notNull().references('ledger_accounts.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount <> 0`))
    .addColumn('balance_after', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('ledger_entries_account_idx')
    .on('ledger_entries')
    .columns(['account_id', 'id'])
    .execute();
  await db.schema
    .createIndex('ledger_entries_transaction_idx')
    .on('ledger_entries')
    .column('transaction_id')
    .execute();

  // Postings are immutable: corrections are new postings, never edits.
  await sql`
    create function ledger_forbid_change() returns trigger language plpgsql as $$
    begin
      raise exception 'ledger rows are immutable (% on %)', tg_op, tg_table_name;
    end $$`.execute(db);
  await sql`create trigger ledger_entries_immutable before update or delete on ledger_entries
    for each row execute function ledger_forbid_change()`.execute(db);
  await sql`create trigger ledger_transactions_immutable before update or delete on ledger_transactions
    for each row execute function ledger_forbid_change()`.execute(db);
  await sql`create trigger ledger_entries_no_truncate before truncate on ledger_entries
    for each statement execute function ledger_forbid_change()`.execute(db);
  await sql`create trigger ledger_transactions_no_truncate before truncate on ledger_transactions
    for each statement execute function ledger_forbid_change()`.execute(db);

  // System accounts (DESIGN.md "Money"); provider_float:<provider> accounts are created on demand.
  const now = new Date().toISOString();
  for (const code of [
    'collections_pool',
    'vtu_in_flight',
    'revenue_markup',
    'revenue_penalty',
    'expense_rewards',
    'provider_settlement',
  ]) {
    await sql`insert into ledger_accounts (code, kind, created_at) values (${code}, 'system', ${now})`.execute(
      db,
    );
  }
}

export async function down(): Promise<void> {
  throw new Error('the foundation migration is not reversible');
}
