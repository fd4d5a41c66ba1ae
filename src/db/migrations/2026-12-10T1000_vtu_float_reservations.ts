import { type Kysely, sql } from 'kysely';

// What every process is sending to a provider, shared (issue 43 item 2, decision 0051). A purchase
// claimed for sending holds its wholesale price of its provider's float (float_reserved_kobo, on its
// own row, so that the settlement that ends it releases exactly that, whichever process sends or
// settles); the provider's row sums what its purchases hold (reserved_kobo) and counts what they
// ever released (released_kobo, which only grows: a float decision compares it before and after the
// balance it read). The row is locked by each claim of a batch for the provider and by each
// settlement that releases, once per batch. The column's default (0) is what every purchase sent
// before this migration holds, so a settlement of one releases nothing it never reserved.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table vtu_float_reservations (
      provider text primary key,
      reserved_kobo bigint not null default 0 check (reserved_kobo >= 0),
      released_kobo bigint not null default 0 check (released_kobo >= 0),
      updated_at timestamptz not null
    )`.execute(db);
  await sql`
    alter table vtu_transactions
      add column float_reserved_kobo bigint not null default 0 check (float_reserved_kobo >= 0)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table vtu_transactions drop column float_reserved_kobo`.execute(db);
  await sql`drop table vtu_float_reservations`.execute(db);
}
