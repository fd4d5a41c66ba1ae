import { type Kysely, sql } from 'kysely';

// An entry is one account's share of one posting: postings net their entries per account before
// writing them (src/ledger/postings.ts), so (transaction_id, account_id) is an entry's natural key.
// As the primary key it also serves every look-up by transaction, which needed an index of its own
// beside the key on id: each entry written now updates two indexes instead of three. The id stays,
// generated as before, to order an account's entries (ledger_entries_account_idx).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table ledger_entries drop constraint ledger_entries_pkey`.execute(db);
  await sql`alter table ledger_entries add constraint ledger_entries_pkey primary key (transaction_id, account_id)`.execute(
    db,
  );
  await sql`drop index ledger_entries_transaction_idx`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('the ledger entries key migration is not reversible');
}
