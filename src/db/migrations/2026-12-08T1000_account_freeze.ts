import { type Kysely, sql } from 'kysely';

// Freezing an account (issue 40 item 3, API.md section 17.4): an operator stops every movement of
// money out of a person's wallet at their request, while credits still land. The state is auth's,
// on the user row that every purchase and transfer already reads: when it was frozen, by which
// operator and why (the operator's words, never shown to the person). The history of freezes and
// unfreezes is the audit log's (every admin operation, its input and outcome).
//
// A CHECK keeps the three columns together: a frozen account always has its reason and its operator.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table users
      add column frozen_at timestamptz,
      add column frozen_reason text check (length(frozen_reason) between 1 and 500),
      add column frozen_by uuid references users (id),
      add constraint users_frozen_together
        check ((frozen_at is null) = (frozen_reason is null) and (frozen_at is null) = (frozen_by is null))
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table users
      drop constraint users_frozen_together,
      drop column frozen_by,
      drop column frozen_reason,
      drop column frozen_at
  `.execute(db);
}
