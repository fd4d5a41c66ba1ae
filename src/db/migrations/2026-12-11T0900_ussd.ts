import { type Kysely, sql } from 'kysely';

// The USSD channel (issue 44, API.md 17.6). A person switches it on in the app (users.ussd_enabled,
// off by default as the CBN's USSD framework asks). A gateway's session is recorded once (its start
// dates the purchase references derived from it); every step of it (the session and its exact inputs)
// is claimed once, so that a callback the gateway repeats is answered from the claim instead of being
// run again; and each USSD payment is recorded in the acceptance's transaction for the day's USSD sum
// (USSD_DAILY_MAX). Neither the PIN nor the raw `text` is stored: a step is known by a keyed hash of
// its inputs, and its stored answer is a screen, which never shows the PIN.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table users add column ussd_enabled boolean not null default false`.execute(db);
  await sql`
    create table ussd_sessions (
      gateway text not null,
      session_id text not null,
      phone text not null,
      user_id uuid,
      service_code text not null,
      started_at timestamptz not null,
      last_seen_at timestamptz not null,
      primary key (gateway, session_id)
    )`.execute(db);
  await sql`create index ussd_sessions_last_seen on ussd_sessions (last_seen_at)`.execute(db);
  await sql`
    create table ussd_steps (
      gateway text not null,
      session_id text not null,
      text_hash text not null,
      answer_type text check (answer_type in ('CON', 'END')),
      answer_screen text,
      created_at timestamptz not null,
      primary key (gateway, session_id, text_hash),
      check ((answer_type is null) = (answer_screen is null))
    )`.execute(db);
  await sql`create index ussd_steps_created on ussd_steps (created_at)`.execute(db);
  await sql`
    create table ussd_payments (
      reference text primary key,
      user_id uuid not null,
      amount_kobo bigint not null check (amount_kobo > 0),
      lagos_day date not null,
      failed_at timestamptz,
      created_at timestamptz not null
    )`.execute(db);
  await sql`create index ussd_payments_user_day on ussd_payments (user_id, lagos_day)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table ussd_payments`.execute(db);
  await sql`drop table ussd_steps`.execute(db);
  await sql`drop table ussd_sessions`.execute(db);
  await sql`alter table users drop column ussd_enabled`.execute(db);
}
