import { type Kysely, sql } from 'kysely';

// The figures /metrics serves (issue 38 item 5, decision 0028), as the refresh job last read them:
// one row, rewritten every 30 s, so that a scrape reads one row instead of calling the providers
// and counting tables. The figures are one JSON document (each read that failed is null in it);
// refreshed_at tells a scrape how old they are.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('operator_figures')
    // One snapshot, always id 1: the refresh replaces it.
    .addColumn('id', 'smallint', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('refreshed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('figures', 'jsonb', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('operator_figures').execute();
}
