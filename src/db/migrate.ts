import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kysely } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { type Database, type DatabaseTarget, openDatabase } from './database.ts';

const migrationFolder = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies every pending migration; throws (never swallows) when one fails. */
export async function migrateToLatest(db: Kysely<unknown>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error !== undefined || failed !== undefined) {
    const cause = error instanceof Error ? error : new Error(String(error ?? 'unknown migration error'));
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${cause.message}`, { cause });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/**
 * Migrates the database a process opened, over a connection of its own with no statement bound when
 * the process's pool has one: an index built on a large table may take longer than any request may
 * wait (DATABASE_TIMEOUT_MS). PGlite has one connection, the process's own.
 */
export async function migrateOpened(database: Database, target: DatabaseTarget): Promise<string[]> {
  if (target.kind === 'pglite' || !target.timeoutMs) return migrateToLatest(database.db as Kysely<unknown>);
  const unbounded = await openDatabase({ ...target, poolMax: 1, timeoutMs: 0 });
  try {
    return await migrateToLatest(unbounded.db as Kysely<unknown>);
  } finally {
    await unbounded.close();
  }
}
