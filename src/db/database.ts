import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Config } from '../config.ts';
import { type Batching, batchingOver } from './batching.ts';
import { lockPgliteDir } from './pglite-lock.ts';
import { preparedName } from './prepared.ts';
import type { DB } from './schema.ts';

// One Kysely handle over either PGlite (embedded, the default) or a node-postgres pool. Both return
// int8 as bigint: money is integer kobo and must never pass through a JavaScript number.

const INT8_OID = 20;
const parseInt8 = (value: string): bigint => BigInt(value);

export type DatabaseTarget =
  | {
      kind: 'pglite';
      /** null: in memory (tests). */
      dataDir: string | null;
      /**
       * A data directory dumped by PGlite's dumpDataDir to start from instead of an empty one: the
       * tests start each database from one migrated template, which skips initdb and the migrations.
       */
      loadDataDir?: Blob;
    }
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
      /**
       * Whether the statements prepared.ts marks run as named prepared statements (the default), or
       * unnamed like the rest: behind a pooler in transaction mode without protocol-level prepared
       * statements (PgBouncer before 1.21), a name prepared on one server connection is unknown on
       * the next the pooler hands out (decision 0027).
       */
      preparedStatements?: boolean;
      /**
       * Whether a connection of its own holds a LISTEN session (pg-boss's workers, decision 0036):
       * not behind a pooler in transaction mode, where the session is not the connection's. Default on.
       */
      listenNotify?: boolean;
    };

export type Database = {
  kind: 'pglite' | 'postgres';
  db: Kysely<DB>;
  /** Present on PGlite: pg-boss shares this single connection. */
  pglite: PGlite | undefined;
  /** Present on PostgreSQL: the connection string pg-boss opens its own pool with. */
  url: string | undefined;
  /** Whether LISTEN/NOTIFY reaches pg-boss's workers here: PGlite in-process, PostgreSQL directly. */
  listenNotify: boolean;
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
  /** Whether marked statements are prepared by name; UnnamedClient below says no. */
  protected readonly names: boolean = true;
  /** The names of the marked texts this connection has run: they are few and fixed, each hashed once. */
  readonly #preparedNames = new Map<string, string>();

  // biome-ignore lint/suspicious/noExplicitAny: node-postgres's query overloads, passed through as given
  override query(config: any, values?: any, callback?: any): any {
    const name =
      this.names && typeof config === 'string' && Array.isArray(values) ? this.#nameOf(config) : undefined;
    // Kysely's values, arrays made text with far less garbage than node-postgres makes (below).
    const args = Array.isArray(values) ? withArrayLiterals(values) : values;
    const result =
      name === undefined
        ? super.query(config, args, callback)
        : super.query({ name, text: config, values: args }, callback);
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

/**
 * The same client sending every statement unnamed (parsed and planned each run), for a pooler in
 * transaction mode that cannot carry a named statement from one transaction to the next.
 */
class UnnamedClient extends PreparingClient {
  protected override readonly names = false;
}

export async function openDatabase(target: DatabaseTarget, options: DatabaseOptions = {}): Promise<Database> {
  if (target.kind === 'postgres') {
    const pool = new pg.Pool({
      // Plans are cached by PostgreSQL's own rule (plan_cache_mode auto), which also serves the
      // foreign-key checks' statements run for every row written: forced to plan each run, those
      // checks alone took an eighth of the server's CPU under purchases (decision 0011).
      Client: target.preparedStatements === false ? UnnamedClient : PreparingClient,
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
      listenNotify: target.listenNotify !== false,
      turn: undefined,
      batching: batchingOver(undefined),
      close: () => db.destroy(),
    };
  }
  let dataDir: string | undefined;
  // One process per PGlite directory (decision 0002): a second one is refused here, naming the first.
  let unlock = () => {};
  if (target.dataDir !== null) {
    unlock = lockPgliteDir(target.dataDir);
    dataDir = path.join(target.dataDir, 'pglite');
    fs.mkdirSync(dataDir, { recursive: true });
  }
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dataDir, {
      parsers: { [INT8_OID]: parseInt8 },
      ...(target.loadDataDir !== undefined ? { loadDataDir: target.loadDataDir } : {}),
    });
  } catch (error) {
    unlock();
    throw error;
  }
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
    listenNotify: true,
    turn,
    batching: batchingOver(turn),
    // Kysely's destroy closes the PGlite instance it was given; the directory is free once it has.
    close: async () => {
      try {
        await db.destroy();
      } finally {
        unlock();
      }
    },
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
    ? {
        kind: 'postgres',
        url: config.database.url,
        poolMax,
        timeoutMs,
        preparedStatements: config.database.preparedStatements,
        listenNotify: config.database.listenNotify,
      }
    : { kind: 'pglite', dataDir: config.dataDir };
}

// Array literals, here beside the client that uses them (PreparingClient.query) rather than in a
// module of their own: they run on PostgreSQL only, and a file that one engine runs and the other
// does not would make the purchase's walk (CONTRIBUTING.md) differ between them.

// The batches of the purchase path send their rows as arrays, one per column (`unnest($1::text[],
// ...)`, `= any($1::uuid[])`): every purchase is a dozen or so array elements across its statements.
// node-postgres turns an array into PostgreSQL's text form element by element: two regular
// expression replaces and four string concatenations each, leaving a deep chain of joined strings
// that is flattened again when the message is written. Under purchase load that was the largest
// single allocator of the process: about 23 of the 250 KB each purchase allocated (a sampling
// allocation profile of bench/purchase-cpu.ts), garbage that costs scavenges in a young generation
// docs/memory.md caps to keep RSS under 300 MB. The same text made with one join: about 10 KB.

/** Only these need a backslash inside a quoted array element (PostgreSQL's array input syntax). */
const QUOTE_OR_BACKSLASH = /[\\"]/;
const QUOTES_AND_BACKSLASHES = /[\\"]/g;

/**
 * PostgreSQL's text form of a one-dimensional array of strings, numbers, bigints, booleans and
 * nulls: the very text node-postgres makes of it (every element quoted, `\` and `"` escaped, null
 * and undefined as NULL; test/db/array-literal.test.ts holds the two equal). Undefined for an array
 * with any other element (a Date, a Buffer, an object, a nested array): node-postgres's own rules
 * for those are left to it.
 */
export function arrayLiteral(values: readonly unknown[]): string | undefined {
  const elements = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === null || value === undefined) {
      elements[i] = 'NULL';
      continue;
    }
    const kind = typeof value;
    if (kind !== 'string' && kind !== 'bigint' && kind !== 'number' && kind !== 'boolean') return undefined;
    const text = String(value);
    elements[i] = QUOTE_OR_BACKSLASH.test(text)
      ? `"${text.replace(QUOTES_AND_BACKSLASHES, '\\$&')}"`
      : `"${text}"`;
  }
  return `{${elements.join(',')}}`;
}

/**
 * The values of a statement with each array of plain elements given as its text (arrayLiteral);
 * the same array when there is none, so a statement without arrays allocates nothing more.
 */
export function withArrayLiterals(values: readonly unknown[]): readonly unknown[] {
  let converted: unknown[] | undefined;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (!Array.isArray(value)) continue;
    const literal = arrayLiteral(value);
    if (literal === undefined) continue;
    converted ??= [...values];
    converted[i] = literal;
  }
  return converted ?? values;
}
