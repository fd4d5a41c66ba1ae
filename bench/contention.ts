import { createHash, randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';

// `node bench/contention.ts`: how much the system accounts' rows serialise purchases on PostgreSQL,
// and what splitting each into K shards would give back (docs/scaling.md). Every purchase moves
// money through rows every other purchase also updates: its acceptance adds to vtu_in_flight, its
// settlement takes it back out and adds to provider_float:<provider> and revenue_markup
// (src/vtu/accept.ts, src/vtu/settlement.ts). ledger/postings.ts updates those rows last in the
// transaction, in code order, so their row locks are held from that statement to the commit: the
// WAL flush. Here N clients each run purchases as exactly those two transactions, on a table shaped
// like ledger_accounts in a scratch database, without the service: a wallet UPDATE (its own row, no
// contention), an INSERT standing for the posting's rows, then the system accounts' UPDATE in the
// one statement writePostings uses. With K shards each system account is K rows and a purchase
// picks one by the hash of its reference (the ledger check would sum them).
//
// Reports purchases/s per (clients, shards, batch) and, sampled every 20 ms from pg_stat_activity,
// what the clients' backends were doing: waiting for a row lock (Lock: transactionid/tuple),
// flushing WAL (LWLock:WALWrite, IO:WALSync/WALWrite), or running (no wait event).
//
// Options: --clients 1,8,32  --shards 1,8  --batch 1 (purchases per transaction, as the service's
// group commit makes under load)  --pick reference,transaction (how a posting's shard is chosen)
// --seconds 8. BENCH_POSTGRES_URL: the server (default local).

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SAMPLE_EVERY_MS = 20;
const PRICE_KOBO = 10_000n;
const WHOLESALE_KOBO = 9_700n;

const { values: options } = parseArgs({
  options: {
    clients: { type: 'string', default: '1,8,32' },
    shards: { type: 'string', default: '1,8' },
    batch: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '8' },
    pick: { type: 'string', default: 'reference,transaction' },
  },
});
const numbers = (list: string): number[] => list.split(',').map((n) => Number.parseInt(n, 10));

const systemAccounts = ['provider_float:mtn', 'revenue_markup', 'vtu_in_flight'] as const;
const shardCode = (account: string, shard: number, shards: number): string =>
  shards === 1 ? account : `${account}#${shard}`;

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh table per run: accounts opened, every balance zero. */
async function prepare(client: pg.Client, clients: number, shards: number, batch: number): Promise<void> {
  await client.query(`
    drop table if exists contention_accounts, contention_postings;
    create table contention_accounts (
      id bigint generated always as identity primary key,
      code text not null unique,
      kind text not null check (kind in ('user', 'system')),
      balance bigint not null default 0,
      check (kind <> 'user' or balance >= 0)
    );
    create table contention_postings (
      id bigint generated always as identity primary key,
      reference text not null unique,
      amounts bigint[] not null,
      created_at timestamptz not null default now()
    );`);
  const system = systemAccounts.flatMap((a) =>
    Array.from({ length: shards }, (_, s) => shardCode(a, s, shards)),
  );
  await client.query(
    `insert into contention_accounts (code, kind, balance)
     select code, kind, balance from unnest($1::text[], $2::text[], $3::bigint[]) as t(code, kind, balance)`,
    [
      [...system, ...Array.from({ length: clients * batch }, (_, i) => `wallet:${i}`)],
      [...system.map(() => 'system'), ...Array.from({ length: clients * batch }, () => 'user')],
      [...system.map(() => 0n), ...Array.from({ length: clients * batch }, () => 10n ** 15n)],
    ].map((column) => column.map(String)),
  );
  await client.query('vacuum analyze contention_accounts');
}

const shardOf = (reference: string, shards: number): number =>
  createHash('sha256').update(reference).digest().readUInt32BE(0) % shards;

// writePostings' statement, cut to the balances: the system rows locked in code order first.
const SYSTEM_UPDATE = `
  with locked as materialized (
    select id, code from contention_accounts where code = any($1::text[]) order by code collate "C" for update
  )
  update contention_accounts as a set balance = a.balance + v.delta
  from unnest($1::text[], $2::bigint[]) as v(code, delta)
  left join locked on locked.code = v.code
  where a.code = v.code`;

/**
 * How a posting's shard is chosen: by its reference's hash (a batch then touches up to K rows of
 * each account), or one per transaction (every posting of a batch on the same K-th row).
 */
type Pick = 'reference' | 'transaction';

/** The deltas of a batch on the system rows, summed per row as writePostings sums them. */
function systemDeltas(
  references: string[],
  shards: number,
  phase: 'accept' | 'settle',
  pick: Pick,
): { codes: string[]; deltas: string[] } {
  const sums = new Map<string, bigint>();
  const add = (code: string, kobo: bigint) => sums.set(code, (sums.get(code) ?? 0n) + kobo);
  const transactionShard = randomBytes(4).readUInt32BE(0) % shards;
  for (const reference of references) {
    const shard = pick === 'reference' ? shardOf(reference, shards) : transactionShard;
    if (phase === 'accept') add(shardCode('vtu_in_flight', shard, shards), PRICE_KOBO);
    else {
      add(shardCode('provider_float:mtn', shard, shards), WHOLESALE_KOBO);
      add(shardCode('revenue_markup', shard, shards), PRICE_KOBO - WHOLESALE_KOBO);
      add(shardCode('vtu_in_flight', shard, shards), -PRICE_KOBO);
    }
  }
  return { codes: [...sums.keys()], deltas: [...sums.values()].map(String) };
}

async function transaction(
  client: pg.Client,
  wallets: string[],
  references: string[],
  shards: number,
  phase: 'accept' | 'settle',
  pick: Pick,
): Promise<void> {
  const { codes, deltas } = systemDeltas(references, shards, phase, pick);
  await client.query('begin');
  try {
    if (phase === 'accept') {
      await client.query(
        'update contention_accounts set balance = balance - $2 where code = any($1::text[])',
        [wallets, String(PRICE_KOBO)],
      );
    }
    await client.query(
      'insert into contention_postings (reference, amounts) select r, $2::bigint[] from unnest($1::text[]) as r',
      [references.map((r) => `${phase}:${r}`), deltas],
    );
    await client.query(SYSTEM_UPDATE, [codes, deltas]);
    await client.query('commit');
  } catch (error) {
    await client.query('rollback');
    throw error;
  }
}

type WaitSamples = {
  samples: number;
  busy: number;
  rowLock: number;
  wal: number;
  running: number;
  other: number;
};

/** Samples what the clients' backends do, until stopped. */
function sampleWaits(url: string, applicationName: string): { stop(): Promise<WaitSamples> } {
  const counts: WaitSamples = { samples: 0, busy: 0, rowLock: 0, wal: 0, running: 0, other: 0 };
  let stopped = false;
  const done = withClient(url, async (client) => {
    while (!stopped) {
      const { rows } = await client.query<{ type: string | null; event: string | null; n: string }>(
        `select wait_event_type as type, wait_event as event, count(*) as n from pg_stat_activity
          where application_name = $1 and state = 'active' group by 1, 2`,
        [applicationName],
      );
      counts.samples += 1;
      for (const row of rows) {
        const n = Number(row.n);
        counts.busy += n;
        if (row.type === 'Lock') counts.rowLock += n;
        else if (row.event?.startsWith('WAL') === true) counts.wal += n;
        else if (row.type === null) counts.running += n;
        else counts.other += n;
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  });
  return {
    async stop() {
      stopped = true;
      await done;
      return counts;
    },
  };
}

type Setting = { clients: number; shards: number; batch: number; pick: Pick };
type Run = Setting & { purchasesPerSecond: number; waits: WaitSamples };

async function run(url: string, setting: Setting, seconds: number): Promise<Run> {
  const { clients, shards, batch, pick } = setting;
  await withClient(url, (client) => prepare(client, clients, shards, batch));
  const applicationName = `contention-${randomBytes(4).toString('hex')}`;
  const connections = await Promise.all(
    Array.from({ length: clients }, async () => {
      const client = new pg.Client({ connectionString: url, application_name: applicationName });
      await client.connect();
      return client;
    }),
  );
  let purchases = 0;
  const deadline = performance.now() + seconds * 1000;
  const sampler = sampleWaits(url, applicationName);
  const startedAt = performance.now();
  try {
    await Promise.all(
      connections.map(async (client, c) => {
        const wallets = Array.from({ length: batch }, (_, i) => `wallet:${c * batch + i}`);
        while (performance.now() < deadline) {
          const references = wallets.map(() => randomBytes(12).toString('hex'));
          await transaction(client, wallets, references, shards, 'accept', pick);
          await transaction(client, wallets, references, shards, 'settle', pick);
          purchases += batch;
        }
      }),
    );
  } finally {
    await Promise.all(connections.map((client) => client.end()));
  }
  const elapsed = (performance.now() - startedAt) / 1000;
  const waits = await sampler.stop();
  await withClient(url, async (client) => {
    // Money moved only between rows: the system rows net to what the wallets gave.
    const { rows } = await client.query<{ net: string }>(
      'select sum(balance)::text as net from contention_accounts',
    );
    const expected = BigInt(clients * batch) * 10n ** 15n;
    if (BigInt(rows[0]?.net ?? '0') !== expected) throw new Error(`balances do not add up: ${rows[0]?.net}`);
  });
  return { ...setting, purchasesPerSecond: Math.round(purchases / elapsed), waits };
}

const share = (part: number, whole: number): string =>
  `${whole === 0 ? 0 : Math.round((100 * part) / whole)}%`;

async function main(): Promise<void> {
  const name = `contention_${randomBytes(5).toString('hex')}`;
  await withClient(ADMIN_URL, (client) => client.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const seconds = Number(options.seconds);
  process.stdout.write(
    `${'clients'.padStart(7)} ${'shards'.padStart(6)} ${'pick'.padStart(11)} ${'batch'.padStart(5)} ${'purchases/s'.padStart(11)}  backends busy: row lock / WAL / running / other (mean active)\n`,
  );
  const settings: Setting[] = [];
  // One shard is one row whichever way it is picked.
  for (const batch of numbers(options.batch))
    for (const clients of numbers(options.clients))
      for (const shards of numbers(options.shards))
        for (const pick of options.pick.split(',') as Pick[])
          if (shards > 1 || pick === 'reference') settings.push({ clients, shards, batch, pick });
  try {
    for (const setting of settings) {
      const r = await run(url.toString(), setting, seconds);
      const w = r.waits;
      const pick = r.shards === 1 ? '-' : r.pick;
      process.stdout.write(
        `${String(r.clients).padStart(7)} ${String(r.shards).padStart(6)} ${pick.padStart(11)} ${String(r.batch).padStart(5)} ${String(r.purchasesPerSecond).padStart(11)}  ${share(w.rowLock, w.busy)} / ${share(w.wal, w.busy)} / ${share(w.running, w.busy)} / ${share(w.other, w.busy)} (${(w.busy / Math.max(1, w.samples)).toFixed(1)})\n`,
      );
    }
  } finally {
    await withClient(ADMIN_URL, (client) => client.query(`drop database if exists ${name} with (force)`));
  }
}

await main();
