import { type Kysely, sql } from 'kysely';

// Reconciliation with the providers' own records (API.md 17.5, decision 0049). A run compares one
// source's records of a period with ours; its items are every record looked at, sorted into one
// bucket, with our side and theirs as they were read (kobo as strings in the JSON). An item is
// resolved at most once: the resolution columns are written under the item's row lock.
// `daily_key` makes the morning's run of a source and day one row, whichever worker starts it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table reconciliation_runs (
      id uuid primary key,
      source text not null check (source in ('payments', 'data', 'bills', 'social')),
      period_from timestamptz not null,
      period_to timestamptz not null check (period_to > period_from),
      status text not null check (status in ('running', 'done', 'failed')),
      requested_by uuid references users (id),
      daily_key text unique,
      provider_list boolean not null default true,
      matched integer not null default 0,
      missing_here integer not null default 0,
      missing_there integer not null default 0,
      amount_mismatch integer not null default 0,
      status_mismatch integer not null default 0,
      error text,
      created_at timestamptz not null,
      finished_at timestamptz
    )`.execute(db);
  await sql`create index reconciliation_runs_newest_idx on reconciliation_runs (created_at desc, id)`.execute(
    db,
  );
  await sql`
    create table reconciliation_items (
      id uuid primary key,
      run_id uuid not null references reconciliation_runs (id),
      bucket text not null check (bucket in ('matched', 'missingHere', 'missingThere', 'amountMismatch', 'statusMismatch')),
      reference text not null,
      ours jsonb,
      theirs jsonb,
      resolution_action text check (resolution_action in ('credit', 'requery', 'ignore')),
      resolution_reason text,
      resolution_outcome text,
      resolved_by uuid references users (id),
      resolved_at timestamptz,
      unique (run_id, reference)
    )`.execute(db);
  // Our side of a period, read without scanning: top-ups and purchases by creation, and the bank
  // deposits' postings (a partial index: only `dva:` postings, so the ledger's inserts barely pay).
  await sql`create index topup_intents_created_idx on topup_intents (created_at)`.execute(db);
  await sql`create index vtu_transactions_provider_created_idx on vtu_transactions (provider, created_at)`.execute(
    db,
  );
  await sql`create index ledger_transactions_dva_idx on ledger_transactions (created_at) where reference like 'dva:%'`.execute(
    db,
  );
  await sql`create index reconciliation_items_bucket_idx on reconciliation_items (run_id, bucket)`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index ledger_transactions_dva_idx`.execute(db);
  await sql`drop index vtu_transactions_provider_created_idx`.execute(db);
  await sql`drop index topup_intents_created_idx`.execute(db);
  await sql`drop table reconciliation_items`.execute(db);
  await sql`drop table reconciliation_runs`.execute(db);
}
