import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { type PgbenchResult, runPgbench } from './pgbench.ts';

// `npm run bench`: starts the real service as a child process (sandbox on, rate limit out of the
// way, workers on) on PGlite in a fresh temporary DATA_DIR, then on a fresh PostgreSQL database when
// PostgreSQL answers, and measures it over HTTP from this process:
//
//   getWallet      authenticated read: autocannon, 50 connections, 50 signed-in users (one token
//                  per connection, round-robin)
//   requestOtp     autocannon, 50 connections, a new phone and Idempotency-Key on every request;
//                  each request also makes the service call the sandbox SMS gateway over HTTP
//   verifyOtp      autocannon, 50 connections, one request per code issued by the previous
//                  scenario: every request creates a user, its ledger accounts and a session
//   full sign-in   a custom loop at fixed concurrency: requestOtp, GET /__sandbox/sms, verifyOtp
//                  with a new phone each time; latency is the whole sign-in as a client sees it
//
// The client and the server share the machine's cores, so the figures are for comparison between
// runs on one machine, not capacity planning. Results go to bench/results/latest.json.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsFile = path.join(repoRoot, 'bench', 'results', 'latest.json');

const CONNECTIONS = 50;
const SIGNED_IN_USERS = 50;
const SETUP_CONCURRENCY = 10;
const WALLET_DURATION_SECONDS = 10;
const REQUEST_OTP_DURATION_SECONDS = 8;
const VERIFY_OTP_AMOUNT_MAX = 2_000;
const SIGN_IN_DURATION_SECONDS = 8;
const SIGN_IN_CONCURRENCY = 10;
const REQUEST_TIMEOUT_SECONDS = 10;
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
/** The whole bench, both databases, must finish within this or it fails. */
const BENCH_TIMEOUT_MS = 240_000;
const OUTPUT_LINES_MAX = 40;

const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POSTGRES_ENABLED = process.env.BENCH_POSTGRES !== '0';

type ScenarioResult = {
  database: string;
  scenario: string;
  measures: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** Peak resident set of the server process during the scenario (VmHWM), in MiB. */
  serverPeakRssMb: number | null;
};

type DatabaseRun = {
  database: string;
  startupMs: number;
  scenarios: ScenarioResult[];
  serverPeakRssMb: number | null;
};

class SetupError extends Error {
  override name = 'SetupError';
}

// ---------------------------------------------------------------------------------------------
// The service under test

type Server = {
  baseUrl: string;
  pid: number;
  output(): string;
  stop(): Promise<void>;
};

const liveChildren = new Set<ChildProcess>();

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

async function startServer(extraEnv: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const env: Record<string, string | undefined> = { ...process.env };
  // The bench decides the database and the rate-limit store, not the caller's shell.
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  Object.assign(env, {
    NODE_ENV: 'development',
    SANDBOX: '1',
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
    WORKER: '1',
    ...extraEnv,
  });
  const child = spawn(process.execPath, ['src/main.ts'], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  liveChildren.add(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== ''),
    );
    if (lines.length > OUTPUT_LINES_MAX) lines.splice(0, lines.length - OUTPUT_LINES_MAX);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal !== null ? -1 : null);
      liveChildren.delete(child);
      resolve();
    }),
  );

  const baseUrl = `http://127.0.0.1:${port}`;
  const output = () => lines.join('\n');
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (exitCode !== undefined)
      throw new SetupError(`the service exited (code ${exitCode}) before it was ready:\n${output()}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new SetupError(`the service was not ready within ${STARTUP_TIMEOUT_MS} ms:\n${output()}`);
    }
    try {
      const response = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) break;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  if (child.pid === undefined) throw new SetupError('the service has no pid');
  return {
    baseUrl,
    pid: child.pid,
    output,
    async stop() {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
      if (exitCode !== 0)
        process.stderr.write(`warning: the service exited with code ${exitCode} on SIGTERM\n`);
    },
  };
}

/** Resets the peak RSS of a process (Linux: `5` into clear_refs). False where that is not allowed. */
function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** VmHWM of a process in MiB, or null where /proc is not available. */
function peakRssMb(pid: number): number | null {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(status);
    return match?.[1] !== undefined ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// A client of the API

let phoneSequence = randomInt(0, 50_000_000);
/** A new valid Nigerian number (080 + 8 digits) on every call. */
function nextPhone(): string {
  phoneSequence = (phoneSequence + 1) % 100_000_000;
  return `080${String(phoneSequence).padStart(8, '0')}`;
}

type Envelope = { success: boolean; data?: unknown; error?: { code: string; message: string } };

async function postOperation(baseUrl: string, operation: string, data: object): Promise<Envelope> {
  const response = await fetch(`${baseUrl}/_serverFn/${operation}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
    body: JSON.stringify({ data }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  const body = (await response.json()) as Envelope;
  if (response.status !== 200 || !body.success)
    throw new Error(`${operation} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

async function readOtp(baseUrl: string, phone: string): Promise<string | null> {
  const response = await fetch(`${baseUrl}/__sandbox/sms?phone=${encodeURIComponent(phone)}`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  if (response.status === 404) return null;
  const body = (await response.json()) as { success: boolean; data?: { code: string | null } };
  return body.data?.code ?? null;
}

/** requestOtp, the code from the sandbox SMS, verifyOtp: the access token. */
async function signIn(baseUrl: string, phone: string): Promise<string> {
  await postOperation(baseUrl, 'requestOtp', { phone });
  const code = await readOtp(baseUrl, phone);
  if (code === null) throw new Error(`no SMS for ${phone}`);
  const session = await postOperation(baseUrl, 'verifyOtp', { phone, code });
  return (session.data as { accessToken: string }).accessToken;
}

/** Runs fn over items with at most `concurrency` at a time; results in input order. */
async function mapConcurrent<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index] as T);
      }
    }),
  );
  return results;
}

// ---------------------------------------------------------------------------------------------
// Scenarios

function fromAutocannon(
  database: string,
  scenario: string,
  measures: string,
  result: autocannon.Result,
  peak: number | null,
): ScenarioResult {
  return {
    database,
    scenario,
    measures,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    serverPeakRssMb: peak,
  };
}

async function measured<T>(
  server: Server,
  run: () => Promise<T>,
): Promise<{ value: T; peak: number | null }> {
  // Where the reset is not allowed, VmHWM is the peak since the process started: still an upper bound.
  resetPeakRss(server.pid);
  const value = await run();
  return { value, peak: peakRssMb(server.pid) };
}

async function walletScenario(server: Server, database: string): Promise<ScenarioResult> {
  let tokens: string[];
  try {
    tokens = await mapConcurrent(
      Array.from({ length: SIGNED_IN_USERS }, () => nextPhone()),
      SETUP_CONCURRENCY,
      (phone) => signIn(server.baseUrl, phone),
    );
  } catch (error) {
    throw new SetupError(`signing in the bench users failed: ${(error as Error).message}`);
  }
  const probe = await fetch(`${server.baseUrl}/_serverFn/getWallet`, {
    headers: { authorization: `Bearer ${tokens[0]}` },
  });
  if (probe.status !== 200) throw new SetupError(`getWallet answered ${probe.status}: ${await probe.text()}`);

  let nextToken = 0;
  const { value, peak } = await measured(server, () =>
    autocannon({
      url: `${server.baseUrl}/_serverFn/getWallet`,
      connections: CONNECTIONS,
      duration: WALLET_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      // One signed-in user per connection, handed out round-robin.
      setupClient: (client) => {
        client.setHeaders({ authorization: `Bearer ${tokens[nextToken++ % tokens.length]}` });
      },
    }),
  );
  return fromAutocannon(
    database,
    'getWallet',
    `GET, ${SIGNED_IN_USERS} users, ${CONNECTIONS} conns, ${WALLET_DURATION_SECONDS}s`,
    value,
    peak,
  );
}

async function requestOtpScenario(
  server: Server,
  database: string,
): Promise<{ result: ScenarioResult; phones: string[] }> {
  const phones: string[] = [];
  const { value, peak } = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: REQUEST_OTP_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/requestOtp',
          // A new phone each time: one phone may get one code per 60 s.
          setupRequest: (request) => {
            const phone = nextPhone();
            phones.push(phone);
            return {
              ...request,
              headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
              body: JSON.stringify({ data: { phone } }),
            };
          },
        },
      ],
    }),
  );
  return {
    result: fromAutocannon(
      database,
      'requestOtp',
      `POST, new phone each, ${CONNECTIONS} conns, ${REQUEST_OTP_DURATION_SECONDS}s`,
      value,
      peak,
    ),
    phones,
  };
}

async function verifyOtpScenario(
  server: Server,
  database: string,
  phones: string[],
): Promise<ScenarioResult> {
  // Codes of the first phones the previous scenario issued; some built requests were never sent.
  const wanted = phones.slice(0, VERIFY_OTP_AMOUNT_MAX + 2 * CONNECTIONS);
  const codes = (
    await mapConcurrent(wanted, 20, async (phone) => ({ phone, code: await readOtp(server.baseUrl, phone) }))
  ).filter((c): c is { phone: string; code: string } => c.code !== null);
  // autocannon builds a request ahead on each connection, so keep one spare code per connection.
  const amount = Math.min(VERIFY_OTP_AMOUNT_MAX, codes.length - CONNECTIONS);
  if (amount < CONNECTIONS) throw new SetupError(`only ${codes.length} OTPs were issued; too few to verify`);

  let next = 0;
  const { value, peak } = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      amount,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/verifyOtp',
          setupRequest: (request) => {
            const otp = codes[next++ % codes.length];
            return {
              ...request,
              headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
              body: JSON.stringify({ data: otp }),
            };
          },
        },
      ],
    }),
  );
  return fromAutocannon(
    database,
    'verifyOtp',
    `POST, new user each, ${CONNECTIONS} conns, ${amount} requests`,
    value,
    peak,
  );
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round((sorted[Math.max(0, index)] ?? 0) * 10) / 10;
}

async function fullSignInScenario(server: Server, database: string): Promise<ScenarioResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const startedAt = performance.now();
  const deadline = startedAt + SIGN_IN_DURATION_SECONDS * 1000;
  const { peak } = await measured(server, () =>
    Promise.all(
      Array.from({ length: SIGN_IN_CONCURRENCY }, async () => {
        while (performance.now() < deadline) {
          const t0 = performance.now();
          try {
            await signIn(server.baseUrl, nextPhone());
            latencies.push(performance.now() - t0);
          } catch (error) {
            failures += 1;
            firstFailure ??= (error as Error).message;
          }
        }
      }),
    ),
  );
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  if (firstFailure !== undefined) process.stderr.write(`full sign-in: first failure: ${firstFailure}\n`);
  latencies.sort((a, b) => a - b);
  return {
    database,
    scenario: 'full sign-in',
    measures: `requestOtp+sms+verifyOtp, ${SIGN_IN_CONCURRENCY} concurrent, ${SIGN_IN_DURATION_SECONDS}s`,
    requestsPerSecond: Math.round((latencies.length / elapsedSeconds) * 10) / 10,
    latencyP50Ms: percentile(latencies, 50),
    latencyP99Ms: percentile(latencies, 99),
    requests: latencies.length + failures,
    errors: failures,
    non2xx: 0,
    serverPeakRssMb: peak,
  };
}

async function benchDatabase(database: string, extraEnv: Record<string, string>): Promise<DatabaseRun> {
  process.stdout.write(`\n${database}: starting the service\n`);
  const startedAt = performance.now();
  const server = await startServer(extraEnv);
  const startupMs = Math.round(performance.now() - startedAt);
  try {
    const scenarios: ScenarioResult[] = [];
    const step = (result: ScenarioResult) => {
      scenarios.push(result);
      process.stdout.write(
        `${database}: ${result.scenario}: ${result.requestsPerSecond}/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms\n`,
      );
    };
    step(await walletScenario(server, database));
    const otp = await requestOtpScenario(server, database);
    step(otp.result);
    step(await verifyOtpScenario(server, database, otp.phones));
    step(await fullSignInScenario(server, database));
    const peaks = scenarios.map((s) => s.serverPeakRssMb).filter((p): p is number => p !== null);
    return { database, startupMs, scenarios, serverPeakRssMb: peaks.length > 0 ? Math.max(...peaks) : null };
  } catch (error) {
    if (error instanceof SetupError) error.message += `\nservice output:\n${server.output()}`;
    throw error;
  } finally {
    await server.stop();
  }
}

async function benchPglite(): Promise<DatabaseRun> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-bench-'));
  try {
    return await benchDatabase('pglite', { DATA_DIR: dataDir });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

async function benchPostgres(): Promise<DatabaseRun> {
  const name = `billrail_bench_${randomBytes(6).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-bench-'));
  try {
    await adminQuery(`create database ${name}`);
  } catch (error) {
    throw new SetupError(`could not create database ${name}: ${(error as Error).message}`);
  }
  try {
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    return await benchDatabase('postgres', { DATABASE_URL: url.toString(), DATA_DIR: dataDir });
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Report

function table(runs: DatabaseRun[]): string {
  const header = [
    'database',
    'scenario',
    'req/s',
    'p50 ms',
    'p99 ms',
    'requests',
    'errors',
    'non-2xx',
    'peak RSS MB',
  ];
  const rows = runs.flatMap((run) =>
    run.scenarios.map((s) => [
      s.database,
      s.scenario,
      String(s.requestsPerSecond),
      String(s.latencyP50Ms),
      String(s.latencyP99Ms),
      String(s.requests),
      String(s.errors),
      String(s.non2xx),
      s.serverPeakRssMb === null ? 'n/a' : String(s.serverPeakRssMb),
    ]),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    `| ${cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join(' | ')} |`;
  // Markdown: text columns left-aligned, figures right-aligned.
  const rule = `|${widths.map((w, i) => (i < 2 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  return [line(header), rule, ...rows.map(line)].join('\n');
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

function writeResults(
  runs: DatabaseRun[],
  skipped: string[],
  startedAt: Date,
  loadBefore: number[],
  pgbench: PgbenchResult | null,
): void {
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: gitCommit(),
    node: process.version,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      memoryMb: Math.round(os.totalmem() / 2 ** 20),
      // Other work on the machine skews every figure; the 1-minute load average tells whether there was any.
      loadAverage1mBefore: loadBefore[0] ?? null,
      loadAverage1mAfter: os.loadavg()[0] ?? null,
    },
    settings: {
      connections: CONNECTIONS,
      signedInUsers: SIGNED_IN_USERS,
      walletDurationSeconds: WALLET_DURATION_SECONDS,
      requestOtpDurationSeconds: REQUEST_OTP_DURATION_SECONDS,
      verifyOtpAmountMax: VERIFY_OTP_AMOUNT_MAX,
      signInConcurrency: SIGN_IN_CONCURRENCY,
      signInDurationSeconds: SIGN_IN_DURATION_SECONDS,
    },
    notes: [
      'The load generator runs on the same machine as the service and competes for its cores.',
      'requestOtp includes the service calling the sandbox SMS gateway over HTTP (same process).',
      'full sign-in: req/s is completed sign-ins per second; latency is the whole sign-in.',
      'peak RSS is VmHWM of the service process, reset before each scenario where Linux allows.',
    ],
    runs,
    pgbench,
    skipped,
  };
  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  // Written beside and renamed, so that an interrupted run never leaves half a file.
  const temporary = `${resultsFile}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(report, null, 2)}\n`);
  fs.renameSync(temporary, resultsFile);
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const runs: DatabaseRun[] = [];
  const skipped: string[] = [];
  runs.push(await benchPglite());
  if (!POSTGRES_ENABLED) skipped.push('postgres: BENCH_POSTGRES=0');
  else if (!(await postgresReachable())) {
    skipped.push(`postgres: not reachable at ${POSTGRES_ADMIN_URL}`);
  } else {
    runs.push(await benchPostgres());
  }
  let pgbench: PgbenchResult | null = null;
  if (runs.some((r) => r.database === 'postgres')) {
    pgbench = await runPgbench(POSTGRES_ADMIN_URL, adminQuery, CONNECTIONS).catch((error: unknown) => {
      skipped.push(`pgbench: ${(error as Error).message.split('\n')[0]}`);
      return null;
    });
  }
  for (const s of skipped) process.stdout.write(`skipped ${s}\n`);
  process.stdout.write(`\n${table(runs)}\n\n`);
  if (pgbench !== null) {
    process.stdout.write(
      `pgbench -N (${pgbench.clients} clients, ${pgbench.threads} threads, scale ${pgbench.scale}, ${pgbench.durationSeconds} s) on the same PostgreSQL: ${pgbench.tps.toFixed(0)} tps\n`,
    );
  }
  for (const run of runs) process.stdout.write(`${run.database}: service ready in ${run.startupMs} ms\n`);
  process.stdout.write(
    `load average (1 min) before/after: ${loadBefore[0]?.toFixed(2)} / ${os.loadavg()[0]?.toFixed(2)} on ${os.cpus().length} cpus\n`,
  );
  writeResults(runs, skipped, startedAt, loadBefore, pgbench);
  process.stdout.write(
    `results: ${path.relative(process.cwd(), resultsFile)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s)\n`,
  );
}

function killChildren(): void {
  for (const child of liveChildren) child.kill('SIGKILL');
}

const watchdog = setTimeout(() => {
  process.stderr.write(`bench: took longer than ${BENCH_TIMEOUT_MS / 1000} s; stopping\n`);
  killChildren();
  process.exit(1);
}, BENCH_TIMEOUT_MS);
watchdog.unref();
process.on('SIGINT', () => {
  killChildren();
  process.exit(130);
});

try {
  await main();
  clearTimeout(watchdog);
} catch (error) {
  killChildren();
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
