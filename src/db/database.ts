import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.ts';
import { type Batching, batchingOver } from './batching.ts';
import { preparedName } from './prepared.ts';
import type { DB } from './schema.ts';

// One Kysely handle over either PGlite (embedded, the default) or a node-postgres pool. Both return
// int8 as bigint: money is integer kobo and must never pass through a JavaScript number.

const INT8_OID = 20;
const parseInt8 = (value: string): bigint => BigInt(value);

export type DatabaseTarget =
  | { kind: 'pglite'; dataDir: string | null } // null: in memory (tests)
  | {
      kind: 'postgres';
      url: string;
      poolMax: number;
      /**
       * The longest a statement may run, or a caller wait for a pooled connection, in ms; unset or 0:
       * no bound (migrations, the CLIs). A bound turns a database that stopped answering (a network
       * partition) into an error within it, which the app answers 503, instead of a request that hangs.
       */
      timeoutMs?: number;
    };

export type Database = {
  kind: 'pglite' | 'postgres';
  db: Kysely<DB>;
  /** Present on PGlite: pg-boss shares this single connection. */
  pglite: PGlite | undefined;
  /** Present on PostgreSQL: the connection string pg-boss opens its own pool with. */
  url: string | undefined;
  /**
   * Resolves when the work already queued on the database has run; undefined where statements run
   * side by side (PostgreSQL). PGlite runs one at a time, so a batch waits for its turn before it is
   * cut (src/db/batching.ts) and gathers the calls that arrive meanwhile.
   */
  turn: (() => Promise<void>) | undefined;
  /** Batchers and loaders over this database, waiting for its turn where it has one (batching.ts). */
  batching: Batching;
  close(): Promise<void>;
};

export type DatabaseOptions = {
  /**
   * Errors of pooled connections (a server restart, a failover, a connection cut): reported, never
   * fatal. Idle or in use alike: a connection in use that breaks also fails the statement in flight.
   */
  onConnectionError?: (error: Error) => void;
};

/**
 * A node-postgres client that runs the statements marked `prepared` (prepared.ts) as named prepared
 * statements: Kysely hands it a text and its values, never a query config.
 */
class PreparingClient extends pg.Client {
  /** The names of the marked texts this connection has run: they are few and fixed, each hashed once. */
  readonly #preparedNames = new Map<string, string>();

  // biome-ignore lint/suspicious/noExplicitAny: node-postgres's query overloads, passed through as given
  override query(config: any, values?: any, callback?: any): any {
    const name = typeof config === 'string' && Array.isArray(values) ? this.#nameOf(config) : undefined;
    const result =
      name === undefined
        ? super.query(config, values, callback)
        : super.query({ name, text: config, values }, callback);
    this.#dropOnReadTimeout(result);
    return result;
  }

  /**
   * A statement that ran out of query_timeout has been sent and may still be running: node-postgres
   * answers its caller but keeps the connection waiting for it, and Kysely would give that connection
   * back to the pool for the next request to queue behind. Destroying the socket makes the pool
   * drop it instead.
   */
  #dropOnReadTimeout(result: unknown): void {
    if (!(result instanceof Promise)) return;
    result.catch((error: unknown) => {
      if (error instanceof Error && error.message === 'Query read timeout')
        (this as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    });
  }

  #nameOf(text: string): string | undefined {
    let name = this.#preparedNames.get(text);
    if (name === undefined) {
      name = preparedName(text);
      if (name !== undefined) this.#preparedNames.set(text, name);
    }
    return name;
  }
}

export async function openDatabase(target: DatabaseTarget, options: DatabaseOptions = {}): Promise<Database> {
  if (target.kind === 'postgres') {
    const pool = new pg.Pool({
      // Plans are cached by PostgreSQL's own rule (plan_cache_mode auto), which also serves the
      // foreign-key checks' statements run for every row written: forced to plan each run, those
      // checks alone took an eighth of the server's CPU under purchases (decision 0011).
      Client: PreparingClient,
      connectionString: target.url,
      max: target.poolMax,
      connectionTimeoutMillis: target.timeoutMs || 10_000,
      ...(target.timeoutMs ? { query_timeout: target.timeoutMs } : {}),
      // A connection whose server vanished without a word (a partition) is found out by the kernel.
      keepAlive: true,
      idleTimeoutMillis: 30_000,
      types: {
        getTypeParser: ((oid: number, format?: string) =>
          oid === INT8_OID
            ? parseInt8
            : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
      },
    });
    // Without a listener, an idle client's error (the server closed it) would crash the process.
    pool.on('error', (error) => options.onConnectionError?.(error));
    // The pool listens to its clients only while they are idle. A connection cut while in use (during
    // a COMMIT, say) fails the statement in flight, and the client then emits 'error' too, which
    // would crash the process with no one listening. Reported here; the pool drops the client when it
    // is released, since it is no longer queryable.
    pool.on('connect', (client) => {
      client.on('error', (error) => options.onConnectionError?.(error));
    });
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
    return {
      kind: 'postgres',
      db,
      pglite: undefined,
      url: target.url,
      turn: undefined,
      batching: batchingOver(undefined),
      close: () => db.destroy(),
    };
  }
  let dataDir: string | undefined;
  if (target.dataDir !== null) {
    dataDir = path.join(target.dataDir, 'pglite');
    fs.mkdirSync(dataDir, { recursive: true });
  }
  const pglite = await PGlite.create(dataDir, { parsers: { [INT8_OID]: parseInt8 } });
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }) });
  // The lock PGlite's own query, exec and transaction take in turn: taken and given back at once,
  // it says that the transaction or statement running, and those queued on PGlite before it, have
  // run. Kysely's connection lock would also wait for the statements queued in Kysely, but then each
  // batch queued twice over, and purchases ran at two thirds of the rate (bench, buyAirtime).
  const turn = () => pglite._runExclusiveTransaction(async () => undefined);
  return {
    kind: 'pglite',
    db,
    pglite,
    url: undefined,
    turn,
    batching: batchingOver(turn),
    // Kysely's destroy closes the PGlite instance it was given.
    close: () => db.destroy(),
  };
}

/**
 * Where the configuration says the data lives: PostgreSQL when DATABASE_URL is set, else PGlite. The
 * service's processes bound their waits (DATABASE_TIMEOUT_MS); the CLIs pass 0 for none.
 */
export function configuredTarget(
  config: Config,
  poolMax = config.database.poolMax,
  timeoutMs = config.database.timeoutMs,
): DatabaseTarget {
  return config.database.url !== undefined
    ? { kind: 'postgres', url: config.database.url, poolMax, timeoutMs }
    : { kind: 'pglite', dataDir: config.dataDir };
}
