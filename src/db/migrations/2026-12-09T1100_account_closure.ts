import { type Kysely, sql } from 'kysely';

// Closing an account (issue 41 item 5, API.md 17.3, decision 0047):
// - account_closures: a person's requests to close their account, one pending at a time, each
//   pending until its effective time (the grace period), then closed or cancelled (by the person, or
//   by the service when a reason to refuse applied again at that time). A closed account's records
//   are kept for RETENTION_YEARS from closed_at; erased_at says when its KYC records were erased.
// - users.closed_at: set when the account closed, together with the pseudonym that replaced the
//   person's phone (the phone is then free for a new account).
// - kyc_submissions.identity_released_at: set on a closed account's submissions, which are kept
//   (AML) but no longer hold their NIN: the unique index over the pending and approved NINs leaves
//   them out, so a new account may verify the same NIN.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table account_closures (
      id uuid primary key,
      user_id uuid not null references users (id),
      status text not null check (status in ('pending', 'cancelled', 'closed')),
      requested_at timestamptz not null,
      effective_at timestamptz not null check (effective_at > requested_at),
      cancelled_at timestamptz,
      cancelled_by text check (cancelled_by in ('person', 'service')),
      cancel_reasons jsonb,
      closed_at timestamptz,
      erased_at timestamptz,
      constraint account_closures_cancelled_together
        check ((status = 'cancelled') = (cancelled_at is not null)
          and (cancelled_at is null) = (cancelled_by is null)),
      constraint account_closures_closed_together check ((status = 'closed') = (closed_at is not null)),
      constraint account_closures_erased_after_closing check (erased_at is null or closed_at is not null)
    )`.execute(db);
  // One request in its grace period per person, and an account closes once.
  await sql`create unique index account_closures_one_pending_idx on account_closures (user_id)
    where status = 'pending'`.execute(db);
  await sql`create unique index account_closures_one_closed_idx on account_closures (user_id)
    where status = 'closed'`.execute(db);
  // The closing job's and the retention job's sweeps.
  await sql`create index account_closures_due_idx on account_closures (effective_at)
    where status = 'pending'`.execute(db);
  await sql`create index account_closures_retained_idx on account_closures (closed_at)
    where status = 'closed' and erased_at is null`.execute(db);
  await sql`create index account_closures_user_idx on account_closures (user_id, requested_at)`.execute(db);

  await sql`alter table users add column closed_at timestamptz`.execute(db);

  await sql`alter table kyc_submissions add column identity_released_at timestamptz`.execute(db);
  await sql`drop index kyc_submissions_one_nin_idx`.execute(db);
  await sql`create unique index kyc_submissions_one_nin_idx on kyc_submissions (nin_hash)
    where status in ('pending', 'approved') and identity_released_at is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index kyc_submissions_one_nin_idx`.execute(db);
  await sql`create unique index kyc_submissions_one_nin_idx on kyc_submissions (nin_hash)
    where status in ('pending', 'approved')`.execute(db);
  await sql`alter table kyc_submissions drop column identity_released_at`.execute(db);
  await sql`alter table users drop column closed_at`.execute(db);
  await sql`drop table account_closures`.execute(db);
}
