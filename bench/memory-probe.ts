import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { bulkOrderScenario } from './bulk-orders.ts';
import {
  BENCH_LIMITS,
  CONNECTIONS,
  mapConcurrent,
  nextPhone,
  peakRssMb,
  REQUEST_TIMEOUT_SECONDS,
  resetPeakRss,
  SETUP_CONCURRENCY,
  type Server,
  signedChargeSuccess,
  signIn,
  WEBHOOK_PATH,
} from './common.ts';
import { startScriptNodeFlags } from './node-flags.ts';
import { buyAirtimeScenario } from './purchases.ts';
import { createSavingsLockScenario } from './savings.ts';
import { transferToUserScenario } from './transfers.ts';

// `node bench/memory-probe.ts`: where the API process's memory goes under load (issue 29). Starts the
// service as `npm start` runs it (its node flags, sandbox in process, workers on) with the rate limit
// out of the way, on a fresh PostgreSQL database (PROBE_DATABASE=pglite: a fresh DATA_DIR), with
// bench/memory-probe-hooks.ts preloaded, then runs the bench's load scenarios one after the other.
// Before the first and after each, it has the service record its memory (RSS, V8 heap, external,
// array buffers) as it is and after a full GC, plus the peak RSS (VmHWM) during the scenario, and
// prints a table.
//
//   PROBE_SCENARIOS    comma-separated, in order, from getWallet, otp, signIn, webhook, buyAirtime,
//                      createSavingsLock, transferToUser, bulkOrder (default: all of them)
//   PROBE_SNAPSHOTS=1  also a heap snapshot after each GC (PROBE_DIR/<n>.heapsnapshot); compare two
//                      with `node bench/memory-probe.ts compare a.heapsnapshot b.heapsnapshot`
//   PROBE_NODE_ARGS    the service's node flags instead of those of `npm start` (package.json);
//                      PROBE_NODE_ARGS= (empty) runs it with none
//   PROBE_DIR          where the samples and snapshots go (default: a new temporary directory)
//   PROBE_REDIS=1      the service uses Redis at REDIS_URL (default redis://127.0.0.1:6379)
//
// The environment is passed on, so MALLOC_ARENA_MAX=2 (say) reaches the service's allocator.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const hooks = path.join(repoRoot, 'bench', 'memory-probe-hooks.ts');
const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const ALL_SCENARIOS = [
  'getWallet',
  'otp',
  'signIn',
  'webhook',
  'buyAirtime',
  'createSavingsLock',
  'transferToUser',
  'bulkOrder',
];
const LOAD_SECONDS = 10;
const STARTUP_TIMEOUT_MS = 120_000;
const PROBE_TIMEOUT_MS = 300_000;
const WEBHOOK_BODIES = 40_000;

type Sample = {
  rssMb: number;
  heapUsedMb: number;
  heapTotalMb: number;
  externalMb: number;
  arrayBuffersMb: number;
  codeMb: number;
  mallocedMb: number;
  anonymousMb: number | null;
  fileMb: number | null;
  threads: number | null;
};
type Probe = {
  phase: string;
  ratePerSecond: number | null;
  peakMb: number | null;
  /** The service's CPU and GC time since it started, as the phase ended. */
  cpuSeconds: number;
  gcMinorMs: number;
  gcMajorMs: number;
  before: Sample;
  after: Sample;
  snapshot: string | null;
};

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function startService(env: Record<string, string>, probeDir: string): Promise<Server> {
  const port = await freePort();
  const nodeArgs = (process.env.PROBE_NODE_ARGS ?? startScriptNodeFlags().join(' '))
    .split(' ')
    .filter((a) => a !== '');
  const childEnv: Record<string, string | undefined> = { ...process.env };
  delete childEnv.DATABASE_URL;
  delete childEnv.REDIS_URL;
  const child = spawn(process.execPath, ['--expose-gc', `--import=${hooks}`, ...nodeArgs, 'src/main.ts'], {
    cwd: repoRoot,
    env: {
      ...childEnv,
      NODE_ENV: 'development',
      SANDBOX: '1',
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_PER_MINUTE: '1000000',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
      RATE_LIMIT_PHONE_PER_MINUTE: '1000000',
      LOG_LEVEL: 'warn',
      WORKER: '1',
      MEMORY_PROBE_DIR: probeDir,
      MEMORY_PROBE_SNAPSHOTS: process.env.PROBE_SNAPSHOTS === '1' ? '1' : '0',
      // buyAirtime's Tier-1 buyers hold ₦1,000,000: see BENCH_LIMITS.
      ...BENCH_LIMITS,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited:\n${lines.join('\n')}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the service was not ready in time:\n${lines.join('\n')}`);
    }
    const ready = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) })
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ready) break;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    baseUrl,
    pid: child.pid as number,
    postgresDatabase: env.DATABASE_URL === undefined ? null : new URL(env.DATABASE_URL).pathname.slice(1),
    output: () => lines.join('\n'),
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Has the service record its memory (and a snapshot) and waits for the record. */
async function probe(
  server: Server,
  probeDir: string,
  n: number,
  phase: string,
  ratePerSecond: number | null,
): Promise<Probe> {
  const peakMb = peakRssMb(server.pid);
  process.kill(server.pid, 'SIGUSR2');
  const file = path.join(probeDir, `${n}.json`);
  const deadline = Date.now() + PROBE_TIMEOUT_MS;
  while (!fs.existsSync(file)) {
    if (Date.now() > deadline) throw new Error(`no memory record ${file}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const record = JSON.parse(fs.readFileSync(file, 'utf8')) as Omit<
    Probe,
    'phase' | 'peakMb' | 'ratePerSecond'
  >;
  resetPeakRss(server.pid);
  return { phase, ratePerSecond, peakMb, ...record };
}

async function walletLoad(server: Server): Promise<number> {
  const tokens = await mapConcurrent(
    Array.from({ length: CONNECTIONS }, () => nextPhone()),
    SETUP_CONCURRENCY,
    (phone) => signIn(server.baseUrl, phone),
  );
  let next = 0;
  return rate(
    await autocannon({
      url: `${server.baseUrl}/_serverFn/getWallet`,
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      setupClient: (client) =>
        client.setHeaders({ authorization: `Bearer ${tokens[next++ % tokens.length]}` }),
    }),
  );
}

async function otpLoad(server: Server): Promise<number> {
  return rate(
    await autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/requestOtp',
          setupRequest: (request) => ({
            ...request,
            headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify({ data: { phone: nextPhone() } }),
          }),
        },
      ],
    }),
  );
}

async function signInLoad(server: Server): Promise<number> {
  const deadline = performance.now() + LOAD_SECONDS * 1000;
  let done = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (performance.now() < deadline) {
        await signIn(server.baseUrl, nextPhone()).catch(() => {});
        done += 1;
      }
    }),
  );
  return Math.round(done / LOAD_SECONDS);
}

/** Signed charge.success bodies for references nobody created: the ingestion path (bench/run.ts). */
async function webhookLoad(server: Server): Promise<number> {
  const prefix = randomBytes(4).toString('hex');
  const bodies = Array.from({ length: WEBHOOK_BODIES }, (_, i) =>
    signedChargeSuccess(50_000_000 + i, `probe-${prefix}-${i}`, 100_000),
  );
  let next = 0;
  return rate(
    await autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: LOAD_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: WEBHOOK_PATH,
          setupRequest: (request) => {
            const signed = bodies[next++ % bodies.length] as (typeof bodies)[number];
            return {
              ...request,
              headers: { 'content-type': 'application/json', 'x-payment-signature': signed.signature },
              body: signed.body,
            };
          },
        },
      ],
    }),
  );
}

/** Requests answered 2xx per second. */
const rate = (result: autocannon.Result) => Math.round(result['2xx'] / (result.duration || LOAD_SECONDS));

/** Runs one scenario; resolves with its rate (2xx requests per second; sign-ins per second). */
async function runScenario(name: string, server: Server, adminToken: string): Promise<number> {
  const database = 'probe';
  switch (name) {
    case 'getWallet':
      return walletLoad(server);
    case 'otp':
      return otpLoad(server);
    case 'signIn':
      return signInLoad(server);
    case 'webhook':
      return webhookLoad(server);
    case 'buyAirtime':
      return (await buyAirtimeScenario(server, database, adminToken)).result.requestsPerSecond;
    case 'createSavingsLock':
      return (await createSavingsLockScenario(server, database, adminToken)).result.requestsPerSecond;
    case 'transferToUser':
      return (await transferToUserScenario(server, database, adminToken)).result.requestsPerSecond;
    case 'bulkOrder':
      return (await bulkOrderScenario(server, database, adminToken)).result.requestsPerSecond;
    default:
      throw new Error(`unknown scenario ${name}`);
  }
}

function report(probes: Probe[]): string {
  const header = [
    'phase',
    'rate/s',
    'CPU s',
    'GC ms (minor+major)',
    'peak RSS',
    'RSS',
    'heapTotal',
    'heapUsed',
    'external',
    'arrayBuf',
    'code',
    'anon',
    'file',
    'threads',
    'RSS after GC',
    'heapTotal after GC',
    'heapUsed after GC',
  ];
  const rows = probes.map((p, i) => [
    p.phase,
    String(p.ratePerSecond ?? ''),
    (p.cpuSeconds - (probes[i - 1]?.cpuSeconds ?? 0)).toFixed(1),
    `${p.gcMinorMs - (probes[i - 1]?.gcMinorMs ?? 0)}+${p.gcMajorMs - (probes[i - 1]?.gcMajorMs ?? 0)}`,
    String(p.peakMb ?? 'n/a'),
    String(p.before.rssMb),
    String(p.before.heapTotalMb),
    String(p.before.heapUsedMb),
    String(p.before.externalMb),
    String(p.before.arrayBuffersMb),
    String(p.before.codeMb),
    String(p.before.anonymousMb ?? 'n/a'),
    String(p.before.fileMb ?? 'n/a'),
    String(p.before.threads ?? 'n/a'),
    String(p.after.rssMb),
    String(p.after.heapTotalMb),
    String(p.after.heapUsedMb),
  ]);
  return [header, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const scenarios = (process.env.PROBE_SCENARIOS ?? ALL_SCENARIOS.join(','))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const probeDir = process.env.PROBE_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-memory-'));
  fs.mkdirSync(probeDir, { recursive: true });
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-memory-data-'));
  const onPglite = process.env.PROBE_DATABASE === 'pglite';
  const dbName = `memory_probe_${randomBytes(4).toString('hex')}`;
  const env: Record<string, string> = { DATA_DIR: dataDir };
  if (!onPglite) {
    await adminQuery(`create database ${dbName}`);
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${dbName}`;
    env.DATABASE_URL = url.toString();
  }
  if (process.env.PROBE_REDIS === '1') env.REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const admin = nextPhone();
  const probes: Probe[] = [];
  const server = await startService({ ...env, ADMIN_PHONES: admin }, probeDir);
  try {
    const adminToken = await signIn(server.baseUrl, admin);
    probes.push(await probe(server, probeDir, 0, 'started', null));
    for (const [i, name] of scenarios.entries()) {
      const ratePerSecond = await runScenario(name, server, adminToken);
      probes.push(await probe(server, probeDir, i + 1, name, ratePerSecond));
      process.stdout.write(`${report(probes).split('\n').at(-1)}\n`);
    }
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\nservice output:\n${server.output()}\n`);
    throw error;
  } finally {
    await server.stop();
    if (!onPglite) await adminQuery(`drop database if exists ${dbName} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.stdout.write(
    `\n${onPglite ? 'pglite' : 'postgres'}${env.REDIS_URL ? '+redis' : ''}, MB (peak = VmHWM during the phase); records in ${probeDir}\n${report(probes)}\n`,
  );
}

// ---------------------------------------------------------------------------------------------
// Snapshot comparison: self size by constructor, and what grew between two snapshots.

type Totals = Map<string, { count: number; bytes: number }>;

function totalsByConstructor(file: string): Totals {
  const snapshot = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const totals: Totals = new Map();
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt] as number] as string;
    const rawName = strings[nodes[i + nameAt] as number] ?? '';
    // Strings, code and arrays by kind; objects by constructor.
    const name = type === 'object' || type === 'closure' ? rawName.slice(0, 60) : `(${type})`;
    const key = type === 'hidden' || type === 'array' ? `(${type}) ${rawName.slice(0, 40)}` : name;
    const entry = totals.get(key) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += nodes[i + sizeAt] as number;
    totals.set(key, entry);
  }
  return totals;
}

function compare(fromFile: string | null, toFile: string, top = 40): string {
  const from: Totals = fromFile === null ? new Map() : totalsByConstructor(fromFile);
  const to = totalsByConstructor(toFile);
  const keys = new Set([...from.keys(), ...to.keys()]);
  const rows = [...keys]
    .map((key) => {
      const a = from.get(key) ?? { count: 0, bytes: 0 };
      const b = to.get(key) ?? { count: 0, bytes: 0 };
      return { key, count: b.count - a.count, bytes: b.bytes - a.bytes, total: b.bytes };
    })
    .sort((x, y) => y.bytes - x.bytes)
    .slice(0, top);
  const sum = (t: Totals) => [...t.values()].reduce((s, e) => s + e.bytes, 0);
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
  return [
    `self size: ${mb(sum(from))} MB → ${mb(sum(to))} MB`,
    '| Δ MB | Δ count | MB now | constructor / kind |',
    ...rows.map((r) => `| ${mb(r.bytes)} | ${r.count} | ${mb(r.total)} | ${r.key} |`),
  ].join('\n');
}

type ParsedSnapshot = {
  snapshot: {
    meta: { node_fields: string[]; node_types: [string[]]; edge_fields: string[]; edge_types: [string[]] };
  };
  nodes: number[];
  edges: number[];
  strings: string[];
};

/**
 * The largest collections (Map, Set, Array) in a snapshot by the size of their backing store, each
 * with the property that holds it and its holder's constructor: unbounded caches show up here.
 */
function largestCollections(file: string, top = 25): string {
  const s = JSON.parse(fs.readFileSync(file, 'utf8')) as ParsedSnapshot;
  const nf = s.snapshot.meta.node_fields;
  const ef = s.snapshot.meta.edge_fields;
  const nodeTypes = s.snapshot.meta.node_types[0];
  const edgeTypes = s.snapshot.meta.edge_types[0];
  const [nw, ew] = [nf.length, ef.length];
  const [typeAt, nameAt, sizeAt, edgeCountAt] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    nf.indexOf(f),
  );
  const [eTypeAt, eNameAt, eToAt] = ['type', 'name_or_index', 'to_node'].map((f) => ef.indexOf(f));
  const count = s.nodes.length / nw;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0; i < count; i++)
    firstEdge[i + 1] = (firstEdge[i] as number) + (s.nodes[i * nw + (edgeCountAt as number)] as number) * ew;
  const name = (node: number) => s.strings[s.nodes[node * nw + (nameAt as number)] as number] ?? '';
  const size = (node: number) => s.nodes[node * nw + (sizeAt as number)] as number;
  const retainer = new Map<number, string>();
  const found: { node: number; bytes: number; entries: number }[] = [];
  for (let i = 0; i < count; i++) {
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += ew) {
      const to = (s.edges[e + (eToAt as number)] as number) / nw;
      const edgeType = edgeTypes[s.edges[e + (eTypeAt as number)] as number];
      const edgeName =
        edgeType === 'element' || edgeType === 'hidden'
          ? `[${s.edges[e + (eNameAt as number)]}]`
          : (s.strings[s.edges[e + (eNameAt as number)] as number] ?? '');
      if (!retainer.has(to) && edgeType !== 'weak') retainer.set(to, `${name(i).slice(0, 50)}.${edgeName}`);
    }
    const type = nodeTypes[s.nodes[i * nw + (typeAt as number)] as number];
    if (type !== 'object' || !['Map', 'Set', 'Array'].includes(name(i))) continue;
    let bytes = 0;
    for (let e = firstEdge[i] as number; e < (firstEdge[i + 1] as number); e += ew) {
      const edgeName = s.strings[s.edges[e + (eNameAt as number)] as number];
      if (edgeName === 'table' || edgeName === 'elements')
        bytes += size((s.edges[e + (eToAt as number)] as number) / nw);
    }
    found.push({ node: i, bytes, entries: 0 });
  }
  found.sort((a, b) => b.bytes - a.bytes);
  return found
    .slice(0, top)
    .map(
      (f) =>
        `${(f.bytes / 1024).toFixed(0).padStart(8)} kB  ${name(f.node)} held by ${retainer.get(f.node) ?? '?'}`,
    )
    .join('\n');
}

if (process.argv[2] === 'top') {
  // What one snapshot holds, largest first.
  process.stdout.write(`${compare(null, process.argv[3] as string)}\n`);
} else if (process.argv[2] === 'collections') {
  process.stdout.write(`${largestCollections(process.argv[3] as string)}\n`);
} else if (process.argv[2] === 'compare') {
  const [, , , a, b] = process.argv;
  if (a === undefined || b === undefined) throw new Error('compare <from.heapsnapshot> <to.heapsnapshot>');
  process.stdout.write(`${compare(a, b)}\n`);
} else {
  await main();
}
