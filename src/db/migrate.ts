import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { type Database, type DatabaseTarget, openDatabase } from './database.ts';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

function migratorOf(db: Kysely<unknown>): Migrator {
  return new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
}

/**
 * Applies every pending migration; throws (never swallows) when one fails. With nothing pending it
 * applies nothing and leaves the migrator be: Kysely's migrator refuses a database that has
 * migrations it does not know ("corrupted migrations"), which is exactly a rollback after an
 * expand-then-contract deploy, and the older release's migrate job must then say "up to date".
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  if ((await pendingMigrations(db)).length === 0) return [];
  const migrator = migratorOf(db);
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const cause = error instanceof Error ? error : new Error(String(error ?? 'unknown migration error'));
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${cause.message}`, { cause });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * The migrations of this build that the database has not applied, oldest first. Read without the
 * migrator's lock (a plain select), so it works through a pooler. Migrations the database has and this
 * build does not know are no concern here: that is a rollback after an expand-then-contract deploy,
 * the older code running on the expanded schema, which is what the expand step is for.
 */
export async function pendingMigrations(db: Kysely<unknown>): Promise<string[]> {
  const migrations = await migratorOf(db).getMigrations();
  return migrations.filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/**
 * Refuses to serve on a database behind this build: its queries would meet tables and columns that
 * are not there yet, failing requests one by one after a start that looked healthy.
 */
export async function assertMigrated(db: Kysely<unknown>): Promise<void> {
  const pending = await pendingMigrations(db);
  if (pending.length > 0)
    throw new Error(
      `the database is behind this build by ${pending.length} migration${pending.length === 1 ? '' : 's'} (${pending.join(', ')}): run npm run migrate (node src/db/migrate-cli.ts) first, or start with MIGRATE_ON_START=1`,
    );
}

/**
 * Migrates the database a process opened, over a connection of its own with no statement bound when
 * the process's pool has one: an index built on a large table may take longer than any request may
 * wait (DATABASE_TIMEOUT_MS). PGlite has one connection, the process's own. migrationUrl: where
 * migrations go on PostgreSQL when it differs from the pool's (MIGRATION_DATABASE_URL): a direct
 * connection, since the migrator's session advisory lock leaks through PgBouncer in transaction mode.
 */
export async function migrateOpened(
  database: Database,
  target: DatabaseTarget,
  migrationUrl?: string,
): Promise<string[]> {
  if (target.kind === 'pglite') return migrateToLatest(database.db as Kysely<unknown>);
  const url = migrationUrl ?? target.url;
  if (!target.timeoutMs && url === target.url) return migrateToLatest(database.db as Kysely<unknown>);
  const unbounded = await openDatabase({ ...target, url, poolMax: 1, timeoutMs: 0 });
  try {
    return await migrateToLatest(unbounded.db as Kysely<unknown>);
  } finally {
    await unbounded.close();
  }
}
