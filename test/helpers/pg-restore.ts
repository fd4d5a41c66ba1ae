import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// A PostgreSQL backup restored as an operator would (docs/operations.md, "After a database
// restore"): a new database made with createdb, the custom-format dump loaded with pg_restore.

const run = promisify(execFile);

/** Restores `dump` (pg_dump --format=custom) into a new database `name` beside `sourceUrl`'s; answers its URL. */
export async function restoreInto(sourceUrl: string, name: string, dump: string): Promise<string> {
  const restoredUrl = new URL(sourceUrl);
  restoredUrl.pathname = `/${name}`;
  await run('createdb', [
    '--host',
    restoredUrl.hostname,
    '--port',
    restoredUrl.port || '5432',
    '--username',
    decodeURIComponent(restoredUrl.username) || 'postgres',
    name,
  ]);
  await run('pg_restore', ['--no-owner', '--exit-on-error', `--dbname=${restoredUrl}`, dump]);
  return restoredUrl.toString();
}
