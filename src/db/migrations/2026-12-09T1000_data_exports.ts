import { type Kysely, sql } from 'kysely';

// A person's copies of their data (API.md 17.3, decision 0046): one row per request, made
// `preparing`, filled by the build job (`ready`, the file's bytes, kept 7 days), then emptied by the
// sweep (`expired`: the file is gone, the row stays so that getDataExport can say so and the one a
// day rule still counts the request).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table data_exports (
      id uuid primary key,
      user_id uuid not null references users (id),
      status text not null check (status in ('preparing', 'ready', 'expired')),
      content bytea,
      created_at timestamptz not null,
      ready_at timestamptz,
      expires_at timestamptz,
      check ((status = 'ready') = (content is not null)),
      check ((status = 'preparing') = (ready_at is null)),
      check ((ready_at is null) = (expires_at is null)),
      check (expires_at is null or expires_at > ready_at)
    )`.execute(db);
  // The one-a-day rule reads a person's latest request.
  await sql`create index data_exports_user_idx on data_exports (user_id, created_at desc)`.execute(db);
  // The sweep finds the files past their time.
  await sql`create index data_exports_due_idx on data_exports (expires_at) where status = 'ready'`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table data_exports`.execute(db);
}
