import type { DatabaseTarget } from '../../src/db/database.ts';

// TEST_DATABASE_POOLER_URL names a pooler in transaction mode in front of DATABASE_URL's server
// (PgBouncer, started by .ci/pgbouncer; .ci/run sets it for its pass through the pooler). Test
// databases are still made, cloned and dropped on DATABASE_URL directly; a world's service reaches
// its database through the pooler under the same name, and runs as production behind PgBouncer 1.18
// does: without named prepared statements (DATABASE_PREPARED_STATEMENTS=0, decision 0027).

/** The pooler's address (postgres://user@host:port/), or undefined when the tests go direct. */
export function poolerUrl(): string | undefined {
  const url = process.env.TEST_DATABASE_POOLER_URL;
  return url === undefined || url === '' ? undefined : url;
}

/** The same database at another address (the pooler's, or back at the server's): its host, port and user. */
export function viaPooler(databaseUrl: string, pooler: string): string {
  const url = new URL(pooler);
  url.pathname = new URL(databaseUrl).pathname;
  return url.toString();
}

/** A world's PostgreSQL target through the pooler when one is configured; any other target as given. */
export function throughPooler(target: DatabaseTarget): DatabaseTarget {
  const pooler = poolerUrl();
  if (pooler === undefined || target.kind !== 'postgres') return target;
  return { ...target, url: viaPooler(target.url, pooler), preparedStatements: false, listenNotify: false };
}

/**
 * A world's service through the pooler starts as production behind it does: without migrating
 * (MIGRATE_ON_START=0), only checking that its database is not behind. Kysely's migrator holds a
 * session advisory lock, which transaction pooling can leave held on a server connection; a world's
 * database is cloned from the migrated template (database.ts), on PostgreSQL directly. Empty when
 * the world goes direct.
 */
export function poolerStart(target: DatabaseTarget): Record<string, string> {
  return poolerUrl() === undefined || target.kind !== 'postgres' ? {} : { MIGRATE_ON_START: '0' };
}
