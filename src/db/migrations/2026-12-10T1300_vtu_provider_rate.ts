import { type Kysely, sql } from 'kysely';

// Each provider's send rate shared by every process (issue 43 item 3, decision 0052): the sends left
// (tokens) in the clock second that refilled_at starts. A claim takes what it sends in one UPDATE of
// the row, which the first claim for the provider inserts; without REDIS_URL (or while Redis is out of
// reach) this row is the bucket, with it Redis is.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table vtu_provider_rate (
      provider text primary key,
      tokens integer not null check (tokens >= 0),
      refilled_at timestamptz not null
    )`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table vtu_provider_rate`.execute(db);
}
