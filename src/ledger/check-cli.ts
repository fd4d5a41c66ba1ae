import type { Kysely } from 'kysely';
import { loadConfig } from '../config.ts';
import { configuredTarget, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { checkLedger } from './check.ts';

// `npm run ledger:check`: prints the ledger's invariant check; exits 1 when anything is off.
try {
  const config = loadConfig(process.env);
  const database = await openDatabase(configuredTarget(config, 2, 0));
  try {
    await migrateToLatest(database.db as Kysely<unknown>);
    const result = await checkLedger(database.db);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.ok) process.exitCode = 1;
  } finally {
    await database.close();
  }
} catch (error) {
  process.stderr.write(
    `billrail: ledger check failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
