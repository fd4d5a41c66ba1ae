import { type Kysely, sql } from 'kysely';

// A purchase settled as success whose electricity token or exam pins did not come with the answer
// (issue 28 item 4): when that answer came, so that the requery runner asks the provider again on
// its backoff (next_requery_at, as for a purchase still processing) until they come, and can say how
// long they have been awaited. Null for every other purchase, and again once they arrive. A nullable
// column without a default rewrites no row; the partial index holds only the purchases awaited.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('vtu_transactions').addColumn('delivery_awaited_at', 'timestamptz').execute();
  await sql`create index vtu_transactions_delivery_awaited_idx on vtu_transactions (next_requery_at) where delivery_awaited_at is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index vtu_transactions_delivery_awaited_idx`.execute(db);
  await db.schema.alterTable('vtu_transactions').dropColumn('delivery_awaited_at').execute();
}
