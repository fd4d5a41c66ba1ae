import type { Kysely } from 'kysely';
import { loadConfig } from '../config.ts';
import { configuredTarget, openDatabase } from './database.ts';
import { migrateToLatest } from './migrate.ts';

// `npm run migrate`: applies pending migrations and exits non-zero on any failure.
try {
  const config = loadConfig(process.env);
  const database = await openDatabase(configuredTarget(config, 2, 0));
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
