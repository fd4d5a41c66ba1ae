import { type Kysely, sql } from 'kysely';

// Operators' pauses of a service, or of a service through one provider (API.md section 17.4,
// decision 0042). A row is a pause in force; resuming deletes it (the audit log keeps who did what).
// One pause per service and provider: a service-wide pause has no provider, and the unique index on
// the provider's coalesce makes "no provider" one value, so pausing again updates the reason.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table service_pauses (
      id uuid primary key,
      service text not null check (length(service) between 1 and 40),
      provider text check (provider is null or length(provider) between 1 and 40),
      reason text not null check (length(reason) between 1 and 500),
      paused_by uuid not null references users (id),
      paused_at timestamptz not null,
      updated_at timestamptz not null
    )`.execute(db);
  await sql`
    create unique index service_pauses_scope_idx on service_pauses (service, (coalesce(provider, '')))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table service_pauses`.execute(db);
}
