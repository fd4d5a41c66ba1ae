import { type Kysely, sql } from 'kysely';

// Dedicated virtual accounts (SPEC.md item 12): one permanent bank account number per user at the
// payment provider, into which any bank transfer credits the user's wallet. A row exists only once
// the provider has assigned the account; it is never replaced or regenerated.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('dedicated_accounts')
    // One per user, for good.
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    .addColumn('customer_code', 'text', (c) => c.notNull().check(sql`customer_code <> ''`))
    // A NUBAN: 10 digits; a transfer into it is credited to this user and nobody else.
    .addColumn('account_number', 'text', (c) =>
      c.notNull().unique().check(sql`account_number ~ '^[0-9]{10}$'`),
    )
    .addColumn('account_name', 'text', (c) => c.notNull())
    .addColumn('bank_name', 'text', (c) => c.notNull())
    .addColumn('provider_slug', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // Who is creating a user's account right now. The provider calls happen outside any database
  // transaction, so concurrent requests of one user are serialised by this claim instead of a lock;
  // a claim older than a minute belonged to a process that died and may be taken over.
  await db.schema
    .createTable('dedicated_account_claims')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    .addColumn('claimed_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // The fallback look-up of a transfer's account is by the provider's customer code.
  await db.schema
    .createIndex('dedicated_accounts_customer_idx')
    .on('dedicated_accounts')
    .column('customer_code')
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('the dedicated accounts migration is not reversible');
}
