import { type Kysely, sql } from 'kysely';

// Markups on VTU wholesale prices (SPEC.md item 6: retail = wholesale + markup). One row per service
// (provider null: every provider of that service) or per service and provider (wins over the
// service-wide row). No row means no markup. Frozen: the lists below are copied, not imported.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('vtu_markups')
    .addColumn('service', 'text', (c) =>
      c
        .notNull()
        .check(
          sql`service in ('airtime', 'data', 'cable', 'electricity', 'betting', 'education', 'airtime_to_cash', 'social')`,
        ),
    )
    .addColumn('provider', 'text', (c) => c.check(sql`provider in ('data', 'bills', 'social')`))
    .addColumn('flat_kobo', 'bigint', (c) => c.notNull().check(sql`flat_kobo >= 0`))
    // Basis points of the wholesale price: 250 is 2.5 %. At most 100 %.
    .addColumn('percent_bp', 'integer', (c) => c.notNull().check(sql`percent_bp between 0 and 10000`))
    .addColumn('updated_by', 'uuid', (c) => c.references('users.id'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // NULLS NOT DISTINCT makes the service-wide row (provider null) unique too, so that an upsert can
  // name (service, provider) as its conflict target whether or not a provider is given.
  await db.schema
    .createIndex('vtu_markups_service_provider_key')
    .on('vtu_markups')
    .columns(['service', 'provider'])
    .unique()
    .nullsNotDistinct()
    .execute();
}

export async function down(): Promise<void> {
  throw new Error('the VTU markups migration is not reversible');
}
