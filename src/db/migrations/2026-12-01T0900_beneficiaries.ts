import { type Kysely, sql } from 'kysely';

// Beneficiaries (API.md section 16): the numbers, meters, smartcards, betting accounts and transfer
// recipients a user chose to keep, so that they follow the person to another phone. One row per
// user, service and recipient: saving the same recipient again updates its label, network and
// details instead of adding a second row. The service keeps at most 100 per user, decided under a
// per-user lock (src/beneficiaries/service.ts); the unique key is the second check that a race
// cannot add a twin.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('beneficiaries')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('service', 'text', (c) =>
      c
        .notNull()
        .check(
          sql`service in ('airtime', 'data', 'electricity', 'cable', 'betting', 'education', 'transfer')`,
        ),
    )
    .addColumn('label', 'text', (c) => c.notNull().check(sql`char_length(label) between 1 and 40`))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.check(sql`network in ('mtn', 'glo', 'airtel', '9mobile')`))
    .addColumn('details', 'jsonb')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addUniqueConstraint('beneficiaries_user_service_recipient_key', ['user_id', 'service', 'recipient'])
    .execute();
  // The list reads a user's rows most recently saved first.
  await db.schema
    .createIndex('beneficiaries_user_saved_idx')
    .on('beneficiaries')
    .columns(['user_id', 'updated_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('beneficiaries').execute();
}
