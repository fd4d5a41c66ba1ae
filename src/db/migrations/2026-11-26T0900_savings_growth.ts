import { type Kysely, sql } from 'kysely';

// Savings locks and growth (SPEC.md item 7, API.md section 9). Money never lives in these tables:
// it lives in the ledger (savings, checkin_accrued, bonus_locked accounts); these rows say why it
// moved and make each movement happen once (a lock leaves `active` once; one check-in per user and
// Lagos day; one milestone per user and threshold; one referral bonus per invitee).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('savings_locks')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('days', 'integer', (c) => c.notNull().check(sql`days > 0`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'matured', 'broken')`))
    .addColumn('penalty', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`penalty >= 0`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('matures_at', 'timestamptz', (c) => c.notNull())
    .addColumn('closed_at', 'timestamptz')
    .addCheckConstraint('savings_locks_penalty_within_amount', sql`penalty <= amount`)
    .addCheckConstraint('savings_locks_closed_consistent', sql`(status = 'active') = (closed_at is null)`)
    .addCheckConstraint('savings_locks_penalty_only_broken', sql`status = 'broken' or penalty = 0`)
    .execute();
  await db.schema
    .createIndex('savings_locks_user_idx')
    .on('savings_locks')
    .columns(['user_id', 'created_at'])
    .execute();
  // The maturity job's claim reads only what is still active, in maturity order.
  await sql`create index savings_locks_due_idx on savings_locks (matures_at, id) where status = 'active'`.execute(
    db,
  );

  await db.schema
    .createTable('savings_milestones')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('threshold', 'bigint', (c) => c.notNull().check(sql`threshold > 0`))
    .addColumn('reached_at', 'timestamptz', (c) => c.notNull())
    .addColumn('acknowledged_at', 'timestamptz')
    .addPrimaryKeyConstraint('savings_milestones_pk', ['user_id', 'threshold'])
    .execute();

  await db.schema
    .createTable('checkin_claims')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    // The Africa/Lagos calendar day of the service clock at the claim.
    .addColumn('day', 'date', (c) => c.notNull())
    .addColumn('streak', 'integer', (c) => c.notNull().check(sql`streak >= 1`))
    .addColumn('reward', 'bigint', (c) => c.notNull().check(sql`reward > 0`))
    .addColumn('claimed_at', 'timestamptz', (c) => c.notNull())
    .addPrimaryKeyConstraint('checkin_claims_pk', ['user_id', 'day'])
    .execute();

  await db.schema
    .createTable('referral_bonuses')
    .addColumn('invitee_id', 'uuid', (c) => c.primaryKey().references('users.id'))
    .addColumn('referrer_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('qualified_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('referral_bonuses_referrer_idx')
    .on('referral_bonuses')
    .column('referrer_id')
    .execute();

  // getMyReferralStatus lists a referrer's invitees.
  await sql`create index users_referred_by_code_idx on users (referred_by_code) where referred_by_code is not null`.execute(
    db,
  );

  // A user's locked bonus only ever grows (SPEC.md item 7: never spendable, never withdrawable).
  // The ledger refuses a posting that takes from it; this trigger refuses it below the ledger too,
  // whatever writes the row: its balance going down, or the row being renamed (which would let a
  // later statement take from it under another code). Its WHEN clause is evaluated without calling
  // the function, so the postings that do not touch a bonus account pay next to nothing for it.
  await sql`
    create function ledger_bonus_locked_never_decreases() returns trigger language plpgsql as $$
    begin
      raise exception 'locked bonus % can never be moved out (% to %, code %)',
        old.code, old.balance, new.balance, new.code
        using errcode = 'check_violation';
    end $$`.execute(db);
  await sql`
    create trigger ledger_bonus_locked_never_decreases
    before update on ledger_accounts
    for each row when (
      old.code like 'bonus\\_locked:%' and (new.balance < old.balance or new.code is distinct from old.code)
    )
    execute function ledger_bonus_locked_never_decreases()`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger ledger_bonus_locked_never_decreases on ledger_accounts`.execute(db);
  await sql`drop function ledger_bonus_locked_never_decreases()`.execute(db);
  await sql`drop index users_referred_by_code_idx`.execute(db);
  for (const table of ['referral_bonuses', 'checkin_claims', 'savings_milestones', 'savings_locks']) {
    await db.schema.dropTable(table).execute();
  }
}
