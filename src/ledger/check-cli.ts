import type { Kysely } from 'kysely';
import { systemClock } from '../clock.ts';
import { loadConfig } from '../config.ts';
import { configuredTarget, type Database, openDatabase } from '../db/database.ts';
import { migrateToLatest } from '../db/migrate.ts';
import { checkAndRecordLedger } from './check-runs.ts';

// `npm run ledger:check`: prints the ledger's invariant check, recorded as a run (/metrics shows it);
// exits 1 when anything is off. The incremental check by default (the entries past the checkpoint,
// decision 0053); `-- --full` reads every entry, from REPLICA_DATABASE_URL when set. No statement
// bound here (timeout 0): the full check of a large ledger takes longer than a request may.
try {
  const full = process.argv.slice(2).includes('--full');
  const config = loadConfig(process.env);
  const database = await openDatabase(configuredTarget(config, 2, 0));
  let replica: Database | null = null;
  try {
    await migrateToLatest(database.db as Kysely<unknown>);
    const replicaUrl = config.database.replicaUrl;
    if (full && replicaUrl !== undefined)
      replica = await openDatabase({ kind: 'postgres', url: replicaUrl, poolMax: 1, timeoutMs: 0 });
    const result = await checkAndRecordLedger(database.db, systemClock.now, {
      kind: full ? 'full' : 'incremental',
      ...(replica === null ? {} : { fullFrom: replica.db }),
    });
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.ok) process.exitCode = 1;
  } finally {
    await replica?.close();
    await database.close();
  }
} catch (error) {
  process.stderr.write(
    `billrail: ledger check failed: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
}
