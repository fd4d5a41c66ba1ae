import { type Kysely, sql } from 'kysely';

// Price levels for resellers (issue 28 item 5): a markup may belong to a named level, and a user may
// be put on one level; a user's prices use their level's markups, falling back to the default ones
// (level null, the markups as they were before). The level of a markup is the catalogue's column;
// the level of a user is auth's, on the user row that every purchase reads already.
//
// A level name is a lowercase slug of 1 to 32 characters (letters, digits and inner hyphens), kept
// by a CHECK on both columns. Frozen: the pattern is copied here, not imported.

const levelPattern = sql`'^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$'`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('vtu_markups')
    .addColumn('level', 'text', (c) => c.check(sql`level ~ ${levelPattern}`))
    .execute();
  // The default row of a service (level null, provider null) stays one row: NULLS NOT DISTINCT over
  // the three columns lets an upsert name (level, service, provider) as its conflict target.
  await db.schema
    .createIndex('vtu_markups_level_service_provider_key')
    .on('vtu_markups')
    .columns(['level', 'service', 'provider'])
    .unique()
    .nullsNotDistinct()
    .execute();
  await db.schema.dropIndex('vtu_markups_service_provider_key').execute();

  await db.schema
    .alterTable('users')
    .addColumn('price_level', 'text', (c) => c.check(sql`price_level ~ ${levelPattern}`))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('price_level').execute();
  await sql`delete from vtu_markups where level is not null`.execute(db);
  await db.schema
    .createIndex('vtu_markups_service_provider_key')
    .on('vtu_markups')
    .columns(['service', 'provider'])
    .unique()
    .nullsNotDistinct()
    .execute();
  await db.schema.dropIndex('vtu_markups_level_service_provider_key').execute();
  await db.schema.alterTable('vtu_markups').dropColumn('level').execute();
}
