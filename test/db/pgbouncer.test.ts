import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { configuredTarget, type Database, type DatabaseTarget, openDatabase } from '../../src/db/database.ts';
import { prepared } from '../../src/db/prepared.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { poolerUrl, viaPooler } from '../helpers/pooler.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The service behind PgBouncer in transaction pooling (decision 0027). Each transaction gets whichever
// server connection is free, so a statement prepared by name on one is unknown on the next: PgBouncer
// before 1.21 does not carry named statements across, and DATABASE_PREPARED_STATEMENTS=0 sends the
// hot paths' statements unnamed. Runs in .ci/run's pass through PgBouncer (TEST_DATABASE_POOLER_URL,
// started by .ci/pgbouncer), where every world of the money path's tests goes through it too.

const pooler = poolerUrl();
const skip = !onPostgres()
  ? 'needs DATABASE_URL and TEST_DATABASE_POOLER_URL (a PgBouncer in transaction mode: bash .ci/pgbouncer)'
  : pooler === undefined
    ? 'needs TEST_DATABASE_POOLER_URL (a PgBouncer in transaction mode in front of DATABASE_URL: bash .ci/pgbouncer)'
    : false;

describe('the setting', () => {
  it('DATABASE_PREPARED_STATEMENTS: on by default, 0 reaches the PostgreSQL target as unnamed statements', () => {
    const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:6432/billrail' };
    assert.equal(loadConfig(base).database.preparedStatements, true);
    const off = loadConfig({ ...base, DATABASE_PREPARED_STATEMENTS: '0' });
    assert.equal(off.database.preparedStatements, false);
    const target = configuredTarget(off);
    assert.equal(target.kind === 'postgres' && target.preparedStatements, false);
    assert.throws(
      () => loadConfig({ ...base, DATABASE_PREPARED_STATEMENTS: 'no' }),
      /DATABASE_PREPARED_STATEMENTS/,
    );
  });

  it('DATABASE_LISTEN_NOTIFY: on by default, 0 reaches the target, and the job workers then poll (decision 0036)', async () => {
    const base = { DATABASE_URL: 'postgres://postgres@127.0.0.1:6432/billrail' };
    const on = configuredTarget(loadConfig(base));
    assert.equal(on.kind === 'postgres' && on.listenNotify, true);
    const off = configuredTarget(loadConfig({ ...base, DATABASE_LISTEN_NOTIFY: '0' }));
    assert.equal(off.kind === 'postgres' && off.listenNotify, false);
    const database = await openDatabase({
      ...(off as Extract<DatabaseTarget, { kind: 'postgres' }>),
      poolMax: 1,
    });
    try {
      assert.equal(database.listenNotify, false, 'pg-boss is then started without its listener');
    } finally {
      await database.close();
    }
  });
});

/** What PgBouncer's admin console says of itself: its version and whether it keeps prepared statements. */
async function poolerFacts(
  url: string,
): Promise<{ version: string; poolMode: string; keepsPrepared: boolean }> {
  const admin = new pg.Client({ connectionString: viaPooler('postgres:///pgbouncer', url) });
  await admin.connect();
  try {
    // The console speaks only the simple protocol: no parameters.
    const version = (await admin.query({ text: 'show version', rowMode: 'array' })).rows[0]?.[0] as string;
    const config = (await admin.query('show config')).rows as { key: string; value: string }[];
    const setting = (key: string) => config.find((row) => row.key === key)?.value;
    // max_prepared_statements (1.21+): above 0, PgBouncer prepares a client's named statements on
    // whichever server connection runs them. Absent (older) or 0: it passes names through as given.
    return {
      version,
      poolMode: setting('pool_mode') ?? '',
      keepsPrepared: Number(setting('max_prepared_statements') ?? 0) > 0,
    };
  } finally {
    await admin.end();
  }
}

describe('through PgBouncer in transaction pooling', { skip }, () => {
  let facts: Awaited<ReturnType<typeof poolerFacts>>;
  let database: TestDatabase;
  before(async () => {
    facts = await poolerFacts(pooler!);
    database = await createTestDatabase();
  });
  after(() => database?.drop());

  it('the pooler pools transactions', () => {
    assert.match(facts.version, /PgBouncer/);
    assert.equal(facts.poolMode, 'transaction', 'session pooling would hide what this file shows');
  });

  /**
   * A marked statement run once on one client connection, then again while another client holds the
   * server connection it ran on inside a transaction: PgBouncer must hand the second run another one.
   */
  async function runAcrossServerConnections(db: Database): Promise<void> {
    const url = database.target.kind === 'postgres' ? viaPooler(database.target.url, pooler!) : '';
    const once = () => prepared<{ n: number }>`select ${7}::int as n`.execute(db.db);
    assert.deepEqual((await once()).rows, [{ n: 7 }]);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // The only idle server connection (the one the statement was prepared on) is now this client's.
      await holder.query('begin');
      await holder.query('select 1');
      assert.deepEqual((await once()).rows, [{ n: 7 }]);
      await holder.query('commit');
    } finally {
      await holder.end();
    }
  }

  it('named prepared statements (DATABASE_PREPARED_STATEMENTS=1) fail there: the name is unknown on the next server connection', async (t) => {
    if (facts.keepsPrepared) {
      t.skip(`${facts.version} keeps prepared statements (max_prepared_statements > 0): names work there`);
      return;
    }
    assert.equal(database.target.kind, 'postgres');
    if (database.target.kind !== 'postgres') return;
    const db = await openDatabase({
      kind: 'postgres',
      url: viaPooler(database.target.url, pooler!),
      poolMax: 1,
      preparedStatements: true,
    });
    try {
      await assert.rejects(runAcrossServerConnections(db), (error: Error & { code?: string }) => {
        assert.equal(
          error.code,
          '26000',
          `${error.message}: expected "prepared statement ... does not exist"`,
        );
        return true;
      });
    } finally {
      await db.close();
    }
  });

  it('unnamed (DATABASE_PREPARED_STATEMENTS=0) the same statements run on any server connection', async () => {
    if (database.target.kind !== 'postgres') return;
    const db = await openDatabase({
      kind: 'postgres',
      url: viaPooler(database.target.url, pooler!),
      poolMax: 1,
      preparedStatements: false,
    });
    try {
      await runAcrossServerConnections(db);
    } finally {
      await db.close();
    }
  });

  describe('a service whose every connection goes through PgBouncer', () => {
    let world: World;
    before(async () => {
      world = await createWorld();
    });
    after(() => world?.close());

    it('reaches its database through the pooler, and did not migrate through it', () => {
      const url = new URL(world.ctx.database.url!);
      assert.equal(url.host, new URL(pooler!).host);
      // Kysely's migrator holds a session advisory lock: migrations go direct (MIGRATE_ON_START=0 here).
      assert.equal(world.ctx.config.database.migrateOnStart, false);
    });

    it('30 purchases at once, over several server connections, all succeed and the ledger balances', async () => {
      const buyers = await Promise.all(Array.from({ length: 30 }, () => buyer(world, 1_000)));
      const done = await Promise.all(
        buyers.map((user) =>
          bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
        ),
      );
      assert.deepEqual(
        done.map((d) => d.status),
        done.map(() => 'success'),
      );
      const check = await checkLedger(world.ctx.db);
      assert.ok(check.ok, JSON.stringify(check.imbalances));
    });
  });
});
