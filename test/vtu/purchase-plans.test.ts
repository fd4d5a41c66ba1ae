import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { type Buyer, bought, buyer, mtn } from './purchase-support.ts';

// PostgreSQL may keep one plan for any arguments once a prepared statement has run five times. Made
// while a table is young, that plan is a sequential scan, kept until autovacuum next analyses the
// table. The statements that look up purchases and idempotency keys, tables every purchase grows,
// are therefore planned each run (src/db/prepared.ts, decision 0011). Here the tables grow from
// nearly empty to 20,000 rows under a session that has already bought several times: later
// purchases must still find their rows by index, not by reading the tables through.

const GROWN_BY = 20_000;
const HOT_TABLES = ['vtu_transactions', 'idempotency_keys'] as const;

describe('purchase statements as their tables grow (PostgreSQL)', () => {
  let world: World;
  let user: Buyer;
  before(async () => {
    // One connection: every statement of the purchase path runs, and is cached, on one session.
    world = await createWorld({ poolMax: 1 });
    user = await buyer(world, 20_000);
  });
  after(async () => {
    await world?.close();
  });

  /** Rows read by sequential scans of each hot table so far, this session's counts included. */
  async function rowsScanned(): Promise<Record<string, bigint>> {
    // Flushed when the session next goes idle, i.e. before the read below (same, only connection).
    await sql`select pg_stat_force_next_flush()`.execute(world.ctx.db);
    const { rows } = await sql<{ relname: string; seq_tup_read: bigint }>`
      select relname, seq_tup_read from pg_stat_user_tables
      where relname = any(${[...HOT_TABLES]}::text[])`.execute(world.ctx.db);
    return Object.fromEntries(rows.map((r) => [r.relname, r.seq_tup_read]));
  }

  /** Ten purchases at once: their statements run in batches, as under load. */
  async function buyTen(): Promise<void> {
    const purchases = await Promise.all(
      Array.from({ length: 10 }, () =>
        bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
      ),
    );
    assert.deepEqual(new Set(purchases.map((p) => p.status)), new Set(['success']));
  }

  it('finds purchases and idempotency keys by index after the tables grew from nearly empty', async (t) => {
    if (!onPostgres()) {
      t.skip('PGlite caches no plans across runs: there is nothing to outgrow');
      return;
    }
    // More than five runs of every statement while the tables are young.
    for (let i = 0; i < 8; i++) await buyTen();

    const db = world.ctx.db;
    await sql`
      insert into vtu_transactions (id, user_id, reference, service, provider, network, recipient,
        request, description, amount, wholesale, markup, status, requery_attempts, created_at,
        updated_at, completed_at)
      select gen_random_uuid(), ${user.userId}::uuid, '202601010000grown' || g, 'airtime', 'bills',
        'mtn', '2348030000000', '{}'::jsonb, 'grown', 10000, 9800, 200, 'success', 0, now(), now(), now()
      from generate_series(1, ${GROWN_BY}::integer) as g`.execute(db);
    await sql`
      insert into idempotency_keys (scope, key, operation, request_hash, state, response_status,
        response_body, created_at, expires_at)
      select 'grown', gen_random_uuid(), 'buyAirtime', 'grown', 'done', 200, 'grown', now(),
        now() + interval '1 day'
      from generate_series(1, ${GROWN_BY}::integer) as g`.execute(db);

    const before = await rowsScanned();
    for (let i = 0; i < 3; i++) await buyTen();
    const after = await rowsScanned();
    for (const table of HOT_TABLES) {
      const read = after[table]! - before[table]!;
      assert.ok(read < BigInt(GROWN_BY), `thirty purchases read ${read} rows of ${table} by sequential scan`);
    }
  });
});
