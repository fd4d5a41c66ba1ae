import type { Kysely } from 'kysely';
import { loadConfig } from '../config.ts';
import { configuredTarget, openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

// `npm run migrate`: applies pending migrations and exits non-zero on any failure. Run once per deploy
// before the processes start (in production they do not migrate, MIGRATE_ON_START being 0 there), on
// PostgreSQL over MIGRATION_DATABASE_URL when set: a direct connection, not a transaction-mode pooler,
// which would leak the migrator's session advisory lock to whichever client gets that connection next.
try {
  const config = loadConfig(process.env);
  const target = configuredTarget(config, 2, 0);
  const database = await openDatabase(
    target.kind === 'postgres' ? { ...target, url: config.database.migrationUrl ?? target.url } : target,
  );
  try {
    const applied = await migrateToLatest(database.db as Kysely<unknown>);
    process.stdout.write(
      applied.length === 0 ? 'migrations: up to date\n' : `migrations applied: ${applied.join(', ')}\n`,
    );
  } finally {
    await database.close();
  }
} catch (error) {
  process.stderr.write(
    `billrail: migrate failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
