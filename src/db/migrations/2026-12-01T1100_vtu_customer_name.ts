import type { Kysely } from 'kysely';

// The name of the customer a bill was paid for (the meter's, smartcard's or betting account's holder),
// as the provider gave it, so that a receipt can say whose it is (issue 26). Nullable: airtime, data
// and exam pins have none, and a provider may not say it. Adding a nullable column without a default
// rewrites no row, and touches no index.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vtu_transactions').addColumn('customer_name', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vtu_transactions').dropColumn('customer_name').execute();
}
