import { type Kysely, sql } from 'kysely';

// Scheduled purchases (API.md section 16): a purchase a user approved once with the PIN, run by the
// service at its due times. Each run is an ordinary purchase under a reference derived from the
// schedule and the run's due time; the claim columns (run_due_at, run_reference, claimed_until) say
// which due time a runner has in hand, so that two runners never run the same due time and a runner
// that died leaves its run to the next one under the same reference (src/schedules/runner.ts).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('schedules')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('service', 'text', (c) =>
      c.notNull().check(sql`service in ('airtime', 'data', 'electricity', 'cable')`),
    )
    // The buy operation's fields without the PIN, as approved; amount is the approved price.
    .addColumn('order_fields', 'jsonb', (c) => c.notNull())
    .addColumn('every', 'text', (c) => c.check(sql`every in ('day', 'week', 'month')`))
    .addColumn('starts_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ends_at', 'timestamptz')
    .addColumn('runs_max', 'integer', (c) => c.check(sql`runs_max between 1 and 1000`))
    .addColumn('price_tolerance_percent', 'integer', (c) =>
      c.notNull().check(sql`price_tolerance_percent between 0 and 100`),
    )
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('active', 'paused', 'ended', 'cancelled')`),
    )
    .addColumn('next_run_at', 'timestamptz', (c) => c.notNull())
    .addColumn('runs', 'integer', (c) => c.notNull().check(sql`runs >= 0`))
    .addColumn('skips_in_row', 'integer', (c) => c.notNull().check(sql`skips_in_row >= 0`))
    .addColumn('paused_reason', 'text')
    // The due time a runner claimed, the reference its purchase takes, and until when the claim holds.
    .addColumn('run_due_at', 'timestamptz')
    .addColumn('run_reference', 'text', (c) => c.unique())
    .addColumn('run_claimed_at', 'timestamptz')
    .addColumn('claimed_until', 'timestamptz')
    // The purchase of the claimed due time, written by the purchase's own acceptance transaction.
    .addColumn('run_purchase_id', 'uuid')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('schedules_ends_after_start', sql`ends_at is null or ends_at > starts_at`)
    .execute();
  // The runner's question: the active schedules due now, oldest due first.
  await db.schema
    .createIndex('schedules_due_idx')
    .on('schedules')
    .columns(['next_run_at'])
    .where(sql.ref('status'), '=', 'active')
    .execute();
  await db.schema
    .createIndex('schedules_user_idx')
    .on('schedules')
    .columns(['user_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('schedules').execute();
}
