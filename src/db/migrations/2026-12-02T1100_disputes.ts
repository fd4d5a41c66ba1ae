import { type Kysely, sql } from 'kysely';

// Disputes (API.md section 16): a person reports a problem with a money movement they own (a
// purchase, a top-up, a transfer, ...) and an operator resolves it with a refund or a decline.
//
// - `reference` is the movement's own reference (a purchase's, or the wallet posting's); at most one
//   dispute per person and reference is open at a time (a transfer's posting is the sender's and the
//   recipient's movement both): the partial unique index decides it, so two reports racing cannot
//   both open one.
// - `charged` is what the movement took from the wallet when it was reported (kobo; 0 for a credit),
//   `refunded` what the resolution gave back. A refund is one posting under a reference made from the
//   dispute's id, so it happens once; `refunded` never exceeds `charged`.
// - expense_disputes: the system account dispute refunds are paid from (src/disputes/refunds.ts says
//   why this one). Like every system account it may run below zero: by what disputes gave back.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('disputes')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('movement', 'text', (c) => c.notNull().check(sql`movement in ('purchase', 'wallet')`))
    // The purchase disputed (vtu's id), when the movement is one.
    .addColumn('purchase_id', 'uuid')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('charged', 'bigint', (c) => c.notNull().check(sql`charged >= 0`))
    .addColumn('movement_at', 'timestamptz', (c) => c.notNull())
    .addColumn('reason', 'text', (c) =>
      c.notNull().check(sql`reason in ('token_not_received', 'wrong_recipient', 'charged_twice', 'other')`),
    )
    .addColumn('message', 'text', (c) => c.notNull().check(sql`char_length(message) between 1 and 1000`))
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('open', 'refunded', 'declined')`))
    .addColumn('resolution', 'text')
    .addColumn('refunded', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`refunded >= 0`))
    .addColumn('resolved_by', 'uuid', (c) => c.references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('resolved_at', 'timestamptz')
    .addCheckConstraint('disputes_refunded_max', sql`refunded <= charged`)
    .addCheckConstraint(
      'disputes_resolved_consistent',
      sql`(status = 'open') = (resolved_at is null) and (status = 'open') = (resolution is null)
        and (status = 'refunded') = (refunded > 0)`,
    )
    .addCheckConstraint('disputes_purchase_named', sql`(movement = 'purchase') = (purchase_id is not null)`)
    .execute();
  await sql`create unique index disputes_one_open_per_reference on disputes (user_id, reference) where status = 'open'`.execute(
    db,
  );
  await db.schema
    .createIndex('disputes_user_idx')
    .on('disputes')
    .columns(['user_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('disputes_reference_idx')
    .on('disputes')
    .columns(['user_id', 'reference'])
    .execute();
  await db.schema
    .createIndex('disputes_status_idx')
    .on('disputes')
    .columns(['status', 'created_at'])
    .execute();
  await sql`insert into ledger_accounts (code, kind, created_at)
    values ('expense_disputes', 'system', ${new Date().toISOString()})
    on conflict (code) do nothing`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('disputes').execute();
}
