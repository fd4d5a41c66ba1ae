import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { freePort } from '../test/helpers/free-port.ts';
import {
  BENCH_LIMITS,
  balanceNaira,
  deliver,
  eventually,
  fundWallet,
  mapConcurrent,
  nextPhone,
  postOperation,
  SETUP_CONCURRENCY,
  signedChargeSuccess,
  signIn,
} from './common.ts';
import { startScriptNodeFlags } from './node-flags.ts';

// `node bench/purchase-cpu.ts`: the CPU one operation costs, for the capacity model of
// docs/scaling.md. Starts the service (one process, workers on, sandbox in process) on a fresh
// PostgreSQL database, readies buyers as bench/purchases.ts does, then measures two operations:
// buyAirtime at 50 connections (until every accepted purchase is settled: the dispatch to the
// sandbox provider and the settlement posting are part of a purchase's cost), and signed
// charge.success webhooks crediting top-ups. For each: the service process's CPU (utime + stime of
// /proc/<pid>/stat) and the CPU of the PostgreSQL backends serving its database, divided by the
// operations done; and, sampled every 20 ms, what those backends were waiting on.
//
// The service's figure includes the in-process sandbox (the VTU provider's and the payment
// provider's simulations); PostgreSQL's leaves out the shared background processes (WAL writer,
// checkpointer), which other databases on the server use too. BENCH_POSTGRES_URL: the server.

const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TICKS_PER_SECOND = 100;
const BUYERS = 50;
const CONNECTIONS = 50;
const PIN = '2580';
const FUND_NAIRA = 1_000_000;
const AIRTIME_NAIRA = 100;
const SECONDS = Number(process.env.PURCHASE_CPU_SECONDS ?? 15);
const TOPUPS = Number(process.env.PURCHASE_CPU_TOPUPS ?? 1_000);
const SAMPLE_EVERY_MS = 20;
// Extra node flags for the service, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to see where its CPU goes.
const EXTRA_NODE_FLAGS = (process.env.PURCHASE_CPU_NODE_FLAGS ?? '').split(' ').filter((f) => f !== '');

/**
 * The service's garbage collections, read from its --trace-gc lines on stdout. Allocation is the sum,
 * over collections, of the heap before one less the heap after the previous: what was allocated in
 * between (to the 0.1 MB the lines are printed with). CPU per operation moves with the machine's
 * load; what is allocated per operation, and the scavenges it costs, do not.
 */
type GcCounts = { scavenges: number; markCompacts: number; allocatedMb: number };
const gc: GcCounts & { heapAfterMb: number | null } = {
  scavenges: 0,
  markCompacts: 0,
  allocatedMb: 0,
  heapAfterMb: null,
};
const GC_LINE = /: (Scavenge|Mark-Compact|Minor Mark-Sweep)\b.*? (\d+\.\d+) \(\d+\.\d+\) -> (\d+\.\d+) \(/;

function countGcLine(line: string): void {
  const m = GC_LINE.exec(line);
  if (m === null) return;
  const before = Number(m[2]);
  if (m[1] === 'Mark-Compact') gc.markCompacts += 1;
  else gc.scavenges += 1;
  if (gc.heapAfterMb !== null) gc.allocatedMb += Math.max(0, before - gc.heapAfterMb);
  gc.heapAfterMb = Number(m[3]);
}

/** The process's resident memory now and at its peak so far, MB (/proc/<pid>/status). */
function rssMb(pid: number): { now: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { now: Math.round(kb('VmRSS') / 1024), peak: Math.round(kb('VmHWM') / 1024) };
}

/** CPU seconds a process has used, threads included. */
function cpuSeconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return 0; // Gone: a backend that exited took its CPU with it (the pool keeps them).
  }
}

async function backendPids(client: pg.Client, database: string): Promise<number[]> {
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  return rows.map((r) => r.pid);
}

type Waits = { busy: number; rowLock: number; wal: number; running: number; other: number; samples: number };

function sampleWaits(client: pg.Client, database: string): { stop(): Promise<Waits> } {
  const w: Waits = { busy: 0, rowLock: 0, wal: 0, running: 0, other: 0, samples: 0 };
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const { rows } = await client.query<{ type: string | null; event: string | null; n: string }>(
        `select wait_event_type as type, wait_event as event, count(*) as n from pg_stat_activity
          where datname = $1 and state = 'active' and pid <> pg_backend_pid() group by 1, 2`,
        [database],
      );
      w.samples += 1;
      for (const row of rows) {
        const n = Number(row.n);
        w.busy += n;
        if (row.type === 'Lock') w.rowLock += n;
        else if (row.event?.startsWith('WAL') === true) w.wal += n;
        else if (row.type === null) w.running += n;
        else w.other += n;
      }
      await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await done;
      return w;
    },
  };
}

type TableWrites = Map<string, { inserted: number; updated: number }>;

/** Rows written so far per table of the database (the statistics collector's counts, all schemas). */
async function tableWrites(client: pg.Client): Promise<TableWrites> {
  const { rows } = await client.query<{ name: string; inserted: string; updated: string }>(
    `select schemaname || '.' || relname as name, n_tup_ins as inserted, n_tup_upd as updated
       from pg_stat_user_tables`,
  );
  return new Map(rows.map((r) => [r.name, { inserted: Number(r.inserted), updated: Number(r.updated) }]));
}

/** The database's files on disk, tables and indexes (not the WAL). */
async function databaseBytes(client: pg.Client, database: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>('select pg_database_size($1) as bytes', [database]);
  return Number(rows[0]?.bytes);
}

/** The statistics are flushed by each backend at most once a second: wait for them to settle. */
async function settledWrites(client: pg.Client): Promise<TableWrites> {
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await client.query('select pg_stat_clear_snapshot()');
  return tableWrites(client);
}

/** Measures fn: the CPU the service and its database's backends used, and the backends' waits. */
async function measure(
  client: pg.Client,
  database: string,
  servicePid: number,
  fn: () => Promise<number>,
): Promise<{
  operations: number;
  wallSeconds: number;
  serviceCpu: number;
  postgresCpu: number;
  waits: Waits;
  writes: { table: string; inserted: number; updated: number }[];
  bytes: number;
  gc: GcCounts;
  rss: { now: number; peak: number };
}> {
  const writesBefore = await settledWrites(client);
  const sizeBefore = await databaseBytes(client, database);
  const pidsBefore = await backendPids(client, database);
  const before = new Map(pidsBefore.map((pid) => [pid, cpuSeconds(pid)]));
  const serviceBefore = cpuSeconds(servicePid);
  const gcBefore = { ...gc };
  const sampler = sampleWaits(client, database);
  const startedAt = performance.now();
  const monotonicStartUs = process.hrtime.bigint() / 1000n;
  const operations = await fn();
  const wallSeconds = (performance.now() - startedAt) / 1000;
  if (EXTRA_NODE_FLAGS.length > 0) {
    // The clock of a --cpu-prof profile's timestamps (CLOCK_MONOTONIC, µs): to cut it to this window.
    process.stdout.write(
      `measured window (monotonic µs): ${monotonicStartUs} ${process.hrtime.bigint() / 1000n}\n`,
    );
  }
  const waits = await sampler.stop();
  const serviceCpu = cpuSeconds(servicePid) - serviceBefore;
  const rss = rssMb(servicePid);
  const gcDuring = {
    scavenges: gc.scavenges - gcBefore.scavenges,
    markCompacts: gc.markCompacts - gcBefore.markCompacts,
    allocatedMb: gc.allocatedMb - gcBefore.allocatedMb,
  };
  const pidsAfter = await backendPids(client, database);
  const postgresCpu = [...new Set([...pidsBefore, ...pidsAfter])].reduce(
    (sum, pid) => sum + cpuSeconds(pid) - (before.get(pid) ?? 0),
    0,
  );
  const writesAfter = await settledWrites(client);
  const writes = [...writesAfter].map(([table, after]) => {
    const before = writesBefore.get(table) ?? { inserted: 0, updated: 0 };
    return { table, inserted: after.inserted - before.inserted, updated: after.updated - before.updated };
  });
  const bytes = (await databaseBytes(client, database)) - sizeBefore;
  return { operations, wallSeconds, serviceCpu, postgresCpu, waits, writes, bytes, gc: gcDuring, rss };
}

function startService(databaseUrl: string, port: number, adminPhone: string, dataDir: string): ChildProcess {
  const env: Record<string, string | undefined> = { ...process.env };
  delete env.REDIS_URL;
  Object.assign(env, {
    NODE_ENV: 'development',
    SANDBOX: '1',
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
    RATE_LIMIT_PHONE_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
    WORKER: '1',
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    ADMIN_PHONES: adminPhone,
    // The buyers' ₦1,000,000 within Tier 1's limits, still judged on every purchase: see BENCH_LIMITS.
    ...BENCH_LIMITS,
  });
  // As npm start runs it (V8's heap sizing), so the CPU measured is that of the process users run.
  const service = spawn(
    process.execPath,
    [...startScriptNodeFlags(), '--trace-gc', ...EXTRA_NODE_FLAGS, 'src/main.ts'],
    { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  // stdout carries --trace-gc's lines and the service's warnings (ignored before, as they are here).
  let partial = '';
  service.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) countGcLine(line);
  });
  return service;
}

async function ready(baseUrl: string): Promise<void> {
  await eventually(
    'the service ready',
    async () => (await fetch(`${baseUrl}/readyz`).catch(() => null))?.status === 200,
    () => '',
    120_000,
  );
}

async function buyers(baseUrl: string): Promise<string[]> {
  const tokens = await mapConcurrent(
    Array.from({ length: BUYERS }, (_, i) => i),
    SETUP_CONCURRENCY,
    async (i) => {
      const token = await signIn(baseUrl, nextPhone());
      await postOperation(baseUrl, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, token);
      await postOperation(baseUrl, 'setTransactionPin', { pin: PIN }, token);
      await fundWallet(baseUrl, token, FUND_NAIRA, 1_000_000 + i);
      return token;
    },
  );
  await eventually('the buyers’ wallets funded', async () =>
    (await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(baseUrl, t))).every(
      (b) => b >= FUND_NAIRA,
    ),
  );
  const float = await fetch(`${baseUrl}/__sandbox/providers/bills/balance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: 100_000_000 }),
  });
  if (float.status !== 200) throw new Error(`setting the bills float answered ${float.status}`);
  return tokens;
}

async function buyAirtime(baseUrl: string, tokens: string[], client: pg.Client): Promise<number> {
  let sequence = 0;
  let nextToken = 0;
  const result = await autocannon({
    url: baseUrl,
    connections: CONNECTIONS,
    duration: SECONDS,
    setupClient: (c) => {
      c.setHeaders({
        authorization: `Bearer ${tokens[nextToken++ % tokens.length]}`,
        'content-type': 'application/json',
      });
    },
    requests: [
      {
        method: 'POST',
        path: '/_serverFn/buyAirtime',
        setupRequest: (request) => ({
          ...request,
          headers: { ...request.headers, 'idempotency-key': randomUUID() },
          body: JSON.stringify({
            data: {
              network: 'mtn',
              phone: `0803${String(sequence % 1_000_000).padStart(6, '0')}${5 + (sequence++ % 5)}`,
              amount: AIRTIME_NAIRA,
              pin: PIN,
            },
          }),
        }),
      },
    ],
  });
  await eventually('every purchase settled', async () => {
    const { rows } = await client.query<{ n: string }>(
      `select count(*) as n from vtu_transactions where status = 'processing'`,
    );
    return Number(rows[0]?.n) === 0;
  });
  process.stdout.write(
    `buyAirtime: ${result.requests.average} req/s, ${result['2xx']} 2xx, ${result.non2xx} non-2xx\n`,
  );
  return result['2xx'];
}

async function topups(baseUrl: string, tokens: string[], client: pg.Client): Promise<() => Promise<number>> {
  const references = await mapConcurrent(
    Array.from({ length: TOPUPS }, (_, i) => tokens[i % tokens.length] as string),
    SETUP_CONCURRENCY,
    async (token) =>
      (
        (await postOperation(baseUrl, 'createTopupIntent', { amount: 1_000 }, token)).data as {
          reference: string;
        }
      ).reference,
  );
  const bodies = references.map((reference, i) => signedChargeSuccess(5_000_000 + i, reference, 100_000));
  return async () => {
    const statuses = await mapConcurrent(bodies, CONNECTIONS, (body) => deliver(baseUrl, body));
    await eventually('every top-up credited', async () => {
      const { rows } = await client.query<{ n: string }>(
        `select count(*) as n from payment_events where processed_at is null`,
      );
      return Number(rows[0]?.n) === 0;
    });
    return statuses.filter((s) => s === 200).length;
  };
}

function report(name: string, m: Awaited<ReturnType<typeof measure>>): void {
  const ms = (cpu: number) => ((1000 * cpu) / Math.max(1, m.operations)).toFixed(2);
  const share = (n: number) => `${Math.round((100 * n) / Math.max(1, m.waits.busy))}%`;
  process.stdout.write(
    `${name}: ${m.operations} in ${m.wallSeconds.toFixed(1)} s; CPU per operation: service ${ms(m.serviceCpu)} ms, ` +
      `PostgreSQL backends ${ms(m.postgresCpu)} ms (service ${m.serviceCpu.toFixed(1)} s, PostgreSQL ${m.postgresCpu.toFixed(1)} s); ` +
      `backends busy: row lock ${share(m.waits.rowLock)}, WAL ${share(m.waits.wal)}, running ${share(m.waits.running)}, other ${share(m.waits.other)} (mean active ${(m.waits.busy / Math.max(1, m.waits.samples)).toFixed(1)})\n`,
  );
  const per = (n: number) => (n / Math.max(1, m.operations)).toFixed(2);
  const written = m.writes
    .filter((w) => w.inserted + w.updated >= m.operations / 10)
    .sort((a, b) => b.inserted + b.updated - (a.inserted + a.updated))
    .map((w) => `${w.table} +${per(w.inserted)}/~${per(w.updated)}`);
  const total = m.writes.reduce((sum, w) => sum + w.inserted, 0);
  process.stdout.write(
    `${name}: service heap per operation: ${Math.round((1024 * m.gc.allocatedMb) / Math.max(1, m.operations))} KB allocated, ` +
      `${((1000 * m.gc.scavenges) / Math.max(1, m.operations)).toFixed(1)} scavenges and ${((1000 * m.gc.markCompacts) / Math.max(1, m.operations)).toFixed(2)} mark-compacts per 1,000; RSS ${m.rss.now} MB, peak ${m.rss.peak}\n`,
  );
  process.stdout.write(
    `${name}: rows inserted/updated per operation (${per(total)} inserted in all; the database grew ${Math.round(m.bytes / Math.max(1, m.operations))} bytes per operation): ${written.join(', ')}\n`,
  );
}

async function main(): Promise<void> {
  const database = `purchase_cpu_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${database}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync('/tmp/purchase-cpu-');
  const service = startService(url.toString(), port, nextPhone(), dataDir);
  const client = new pg.Client({ connectionString: url.toString() });
  try {
    await ready(baseUrl);
    await client.connect();
    const tokens = await buyers(baseUrl);
    const pid = service.pid as number;
    report('buyAirtime', await measure(client, database, pid, () => buyAirtime(baseUrl, tokens, client)));
    const deliverAll = await topups(baseUrl, tokens, client);
    report('charge.success webhook', await measure(client, database, pid, deliverAll));
  } finally {
    // Waited for only while it runs: one that exited on its own has nothing left to stop.
    if (service.exitCode === null && service.signalCode === null) {
      const exited = new Promise((resolve) => service.once('exit', resolve));
      service.kill('SIGTERM');
      await exited;
    }
    await client.end().catch(() => {});
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.end();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
