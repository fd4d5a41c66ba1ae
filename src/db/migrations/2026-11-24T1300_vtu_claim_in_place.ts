import { type Kysely, sql } from 'kysely';

// Claiming a purchase for sending (sent_at, src/vtu/dispatch.ts) changes no indexed column, so
// PostgreSQL can write the claimed row version beside the old one on the same page (a HOT update)
// without touching any index: the index of purchases waiting for a float top-up named sent_at in its
// condition, and now names only its own column (the look-up still asks for unsent, processing
// purchases), and the rows leave room on their page for the two versions each goes through (claimed,
// then settled).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop index vtu_transactions_funding_idx`.execute(db);
  await sql`create index vtu_transactions_funding_idx on vtu_transactions (funding_reference)
    where funding_reference is not null`.execute(db);
  await sql`alter table vtu_transactions set (fillfactor = 70)`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('the in-place claim migration is not reversible');
}
