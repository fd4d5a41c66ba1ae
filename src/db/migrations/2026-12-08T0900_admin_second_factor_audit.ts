import { type Kysely, sql } from 'kysely';

// Issue 40, items 1 and 2 (API.md section 17.4, decision 0039).
//
// An administrator's TOTP secret, sealed (AES-256-GCM under ADMIN_TOTP_KEY), with the wrong codes
// counted as the PIN's are and the last time step a code was accepted for (a code is never accepted
// twice). A session carries until when its second factor holds.
//
// The audit trail of every admin operation: rows are only ever added. A trigger refuses UPDATE,
// DELETE and TRUNCATE, as the ledger's do, so not even the service's own role can edit the record of
// what its administrators did. admin_id has no foreign key: the trail outlives anything done to users.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table sessions add column second_factor_until timestamptz`.execute(db);
  await sql`
    create table admin_totp (
      user_id uuid primary key references users (id) on delete cascade,
      secret_sealed text not null,
      confirmed_at timestamptz,
      failed_count integer not null default 0 check (failed_count >= 0),
      locked_until timestamptz,
      last_used_step bigint,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`
    create table audit_log (
      id uuid primary key,
      created_at timestamptz not null,
      admin_id uuid not null,
      operation text not null,
      input jsonb,
      outcome text not null,
      ip text not null
    )`.execute(db);
  await sql`create index audit_log_created_idx on audit_log (created_at desc, id desc)`.execute(db);
  await sql`create index audit_log_admin_idx on audit_log (admin_id, created_at desc)`.execute(db);
  await sql`create index audit_log_operation_idx on audit_log (operation, created_at desc)`.execute(db);
  await sql`
    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      raise exception 'the audit log is append-only (% refused)', tg_op;
    end $$`.execute(db);
  await sql`create trigger audit_log_no_change before update or delete on audit_log
    for each row execute function audit_log_append_only()`.execute(db);
  await sql`create trigger audit_log_no_truncate before truncate on audit_log
    for each statement execute function audit_log_append_only()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table audit_log`.execute(db);
  await sql`drop function audit_log_append_only()`.execute(db);
  await sql`drop table admin_totp`.execute(db);
  await sql`alter table sessions drop column second_factor_until`.execute(db);
}
