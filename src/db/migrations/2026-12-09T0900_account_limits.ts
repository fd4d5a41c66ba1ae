import { type Kysely, sql } from 'kysely';

// CBN tier limits (API.md 17.2, decisions 0044 and 0045).
//
// - account_limits: one row per person, written only while their wallet's ledger row is locked
//   (src/limits/), so a purchase judges the day's sum on state no other debit can change under it.
//   `debited` is what left the person on the Lagos day `debit_day` (kobo); a debit of a later day
//   starts it again. `personal_limit` is the person's own daily limit in force (null: the tier's);
//   a raise waits for the next Lagos day as `pending_limit` from `pending_from` (a pending
//   `pending_limit` null lifts the personal limit).
// - wallet_held:<user>: every person's held balance, the part of credits over the tier's maximum
//   balance; a user account, so it can never go below zero. Opened here for everyone already
//   signed up (new users get it with their other accounts). The partial index is what the release
//   sweep reads: only the few held balances above zero.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('account_limits')
    .addColumn('user_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    .addColumn('debit_day', 'date', (c) => c.notNull())
    .addColumn('debited', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`debited >= 0`))
    .addColumn('personal_limit', 'bigint', (c) => c.check(sql`personal_limit >= 0`))
    .addColumn('pending_limit', 'bigint', (c) => c.check(sql`pending_limit >= 0`))
    .addColumn('pending_from', 'date')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint(
      'account_limits_pending_dated',
      sql`pending_limit is null or pending_from is not null`,
    )
    .execute();
  await sql`insert into ledger_accounts (code, kind, user_id, created_at)
    select 'wallet_held:' || id, 'user', id, now() from users
    on conflict (code) do nothing`.execute(db);
  await sql`create index ledger_accounts_held_idx on ledger_accounts (code)
    where code like 'wallet_held:%' and balance > 0`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index ledger_accounts_held_idx`.execute(db);
  await sql`delete from ledger_accounts a where a.code like 'wallet_held:%'
    and not exists (select 1 from ledger_entries e where e.account_id = a.id)`.execute(db);
  await db.schema.dropTable('account_limits').execute();
}
