import { type Kysely, sql } from 'kysely';

// Adjustments, four eyes (API.md section 17.4): an operator proposes a correction of a person's
// wallet (a credit or a debit, with the reason the person reads), another operator approves it (one
// posting against the `adjustments` system account, once) or either rejects it.
//
// - `amount` is kobo, more than zero; `direction` says which way it moves the wallet.
// - Decided once: a proposed adjustment has no decider and no decision time, a decided one has both;
//   only a rejected one has a reject_reason.
// - Four eyes held by the database as well as by the rule (src/adjustments/decisions.ts): an approved
//   adjustment's approver is never its proposer.
// - The posting's reference is derived from the id (`adjustment:<id>`), so it is not stored.
// - adjustments: the system account the corrections move money against. Like every system account it
//   may run below zero: by what the credits gave more than the debits took back.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('adjustments')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('direction', 'text', (c) => c.notNull().check(sql`direction in ('credit', 'debit')`))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('reason', 'text', (c) => c.notNull().check(sql`char_length(reason) between 1 and 500`))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('proposed', 'approved', 'rejected')`),
    )
    .addColumn('proposed_by', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('decided_by', 'uuid', (c) => c.references('users.id'))
    .addColumn('decided_at', 'timestamptz')
    .addColumn('reject_reason', 'text', (c) => c.check(sql`char_length(reject_reason) between 1 and 500`))
    .addCheckConstraint(
      'adjustments_decided_consistent',
      sql`(status = 'proposed') = (decided_by is null) and (status = 'proposed') = (decided_at is null)
        and (status = 'rejected') = (reject_reason is not null)`,
    )
    .addCheckConstraint('adjustments_four_eyes', sql`status <> 'approved' or decided_by <> proposed_by`)
    .execute();
  await db.schema
    .createIndex('adjustments_status_idx')
    .on('adjustments')
    .columns(['status', 'created_at'])
    .execute();
  await db.schema
    .createIndex('adjustments_user_idx')
    .on('adjustments')
    .columns(['user_id', 'created_at'])
    .execute();
  await sql`insert into ledger_accounts (code, kind, created_at)
    values ('adjustments', 'system', ${new Date().toISOString()})
    on conflict (code) do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('adjustments').execute();
}
