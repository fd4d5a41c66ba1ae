import { type Kysely, sql } from 'kysely';

// The incremental ledger check (issue 43 item 4, decision 0053). A checkpoint is a high-water entry
// id below which every entry is known committed, with what the entries up to it add up to: per
// account (ledger_check_accounts), in all (the checkpoint's row), and the postings found unbalanced
// or empty so far, re-examined by every run until they are whole (ledger_check_open_postings). Each
// run then reads only the entries past the checkpoint. ledger_checks says which kind of check ran;
// every run recorded before this was a full one.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table ledger_checks
    add column kind text not null default 'full' check (kind in ('incremental', 'full'))`.execute(db);
  // The entries past a checkpoint are read by id, which no index led with (the key is the posting and
  // the account). Entries are only ever appended, in about id order, so a BRIN index finds the tail
  // of the table for a few pages of index, and adds next to nothing to each insert: the pages at the
  // end are not summarised yet, and an unsummarised range is simply read.
  await sql`
    create index ledger_entries_id_brin on ledger_entries
    using brin (id) with (pages_per_range = 32, autosummarize = on)`.execute(db);
  await sql`
    create table ledger_checkpoint (
      id smallint primary key check (id = 1),
      entry_id bigint not null check (entry_id >= 0),
      transaction_id bigint not null check (transaction_id >= 0),
      entries bigint not null check (entries >= 0),
      entries_sum bigint not null,
      advanced_at timestamptz not null
    )`.execute(db);
  // The one row exists from the start, so that every run locks it and runs one at a time.
  await sql`
    insert into ledger_checkpoint (id, entry_id, transaction_id, entries, entries_sum, advanced_at)
    values (1, 0, 0, 0, 0, now())`.execute(db);
  await sql`
    create table ledger_check_accounts (
      account_id bigint primary key references ledger_accounts (id),
      entries_sum bigint not null
    )`.execute(db);
  await sql`
    create table ledger_check_open_postings (
      transaction_id bigint primary key references ledger_transactions (id)
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table ledger_check_open_postings`.execute(db);
  await sql`drop table ledger_check_accounts`.execute(db);
  await sql`drop table ledger_checkpoint`.execute(db);
  await sql`alter table ledger_checks drop column kind`.execute(db);
  await sql`drop index ledger_entries_id_brin`.execute(db);
}
