import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
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
  balanceNaira,
  CONNECTIONS,
  deliver,
  durationOverrideSeconds,
  fromAutocannon,
  getOperation,
  loadSeconds,
  mapConcurrent,
  measured,
  nextPhone,
  percentile,
  postOperation,
  REQUEST_TIMEOUT_SECONDS,
  readOtp,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  type SignedBody,
  signedChargeSuccess,
  signIn,
  WEBHOOK_PATH,
} from './common.ts';
import { fastifyAnchorScenario } from './fastify-anchor.ts';
import { type LedgerCheckRun, runLedgerCheck } from './ledger-check.ts';
import { type LedgerPostingsRun, runLedgerPostings } from './ledger-postings.ts';
import { startScriptNodeFlags } from './node-flags.ts';
import {
  BROADCAST_TARGET_PUSHES_PER_SECOND,
  type BroadcastRound,
  broadcastPushScenario,
  listNotificationsScenario,
  seedInboxes,
} from './notifications.ts';
import { type PgbenchResult, runPgbench } from './pgbench.ts';
import { buyAirtimeScenario, type PurchaseRun } from './purchases.ts';
import { buyAirtimeClusterRound } from './purchases-cluster.ts';
import { type ReconciliationRound, reconciliationScenario } from './reconciliation.ts';
import { type ReportInput, type ScalingResults, writeReport } from './report.ts';
import {
  createSavingsLockScenario,
  MATURITY_TARGET_SECONDS,
  type MaturityRound,
  savingsMaturityScenario,
} from './savings.ts';
import { type ScheduledRunsRound, scheduledRunsScenario } from './schedules.ts';
import { transferSettings, transferToUserScenario } from './transfers.ts';
import type { ScenarioUsage } from './usage.ts';
import {
  browserUnavailable,
  type InitialJs,
  prepareWebClient,
  profileText,
  SLOW_4G,
  type WebClientRun,
  webClientScenario,
} from './web.ts';
import { countWebhookScenarioEvents, eachTopupCreditedOnce, type Query } from './webhook-events.ts';

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
//   webhook        POST /api/public/payments/webhook/payment, autocannon, 50 connections: a distinct,
//                  validly signed charge.success body on every request (bodies and signatures are
//                  computed before the run). Every 16th names a top-up intent created beforehand by
//                  signed-in users (the event credits a wallet), the rest a reference nobody created
//                  (stored, processed as unknown_reference): providers do send those, and they keep
//                  the measure on ingestion rather than on the ledger
//   webhook dup    the same, re-delivering bodies already stored: the duplicate path
//   buyAirtime     POST buyAirtime, autocannon, 50 connections, one Tier-1 buyer with a PIN and a
//                  funded wallet per connection, ₦100 MTN airtime the sandbox delivers at once; then
//                  every purchase is read back for the time from acceptance to success
//                  (bench/purchases.ts)
//   createSavingsLock  POST createSavingsLock, autocannon, 50 connections, 1,000 funded users round-robin
//                  (bench/savings.ts)
//   savingsMaturity  once the service has stopped, in this process on its database: 100,000 locks
//                  (PGlite: 10,000) due at the same instant, seeded in bulk, matured by timed
//                  matureDueLocks; on PostgreSQL again with two runners at once (bench/savings.ts)
//   scheduledRuns  once the service has stopped, in this process on its database with the app
//                  listening: 1,000 scheduled ₦100 airtime purchases due at the same instant (100
//                  users), run by the schedules' runner through the one purchase pipeline to the
//                  sandbox VTpass over HTTP; runs delivered per second and the ledger check after; on
//                  PostgreSQL again with two runners at once (bench/schedules.ts)
//   transferToUser  POST transferToUser, autocannon, 50 connections, ₦100 from 200 funded Tier-2
//                  senders round-robin to 200 Tier-1 recipients; then every accepted transfer must
//                  have moved exactly once (both histories, both sides' balances) and the ledger
//                  check be ok (bench/transfers.ts)
//   listNotifications  GET listNotifications?limit=20, autocannon, 50 connections, 50 users whose
//                  inboxes of 200 entries were written in bulk before the service started
//                  (bench/notifications.ts)
//   broadcastPush  once the service has stopped: a broadcast pushed by a worker process to 20,000
//                  subscriptions (PGlite: 5,000) at a local HTTPS push service in this process:
//                  pushes per second, the worker's peak RSS, each page's and each push's time
//                  (bench/notifications.ts, bench/push-worker.ts)
//   reconciliation  once the service has stopped, in this process on its database with the app
//                  listening: a day of 5,000 top-ups (BENCH_RECONCILIATION_PAYMENTS) initialised
//                  through the service, paid at the sandbox's checkout and credited by its webhooks,
//                  with a handful left unpaid, dropped or changed at the sandbox; one payments run
//                  timed from adminRunReconciliation to done, its counts checked against what was
//                  seeded (bench/reconciliation.ts)
//   webClient      the web client (issue 20), built first if web/dist is stale: its initial JS gzipped
//                  (entry script and module preloads of index.html); in headless Chromium on Slow 4G
//                  with the CPU 4× slower, FCP and LCP of /sign-in loaded cold (median of 3), and the
//                  time from tapping Pay on /buy/airtime to the transaction reading Successful
//                  (median of 5); the browser parts are skipped without Chromium (bench/web.ts)
//
// After the webhook scenarios every built top-up body is delivered (again) and the bench checks that
// each credited its wallet exactly once, that on PostgreSQL every answered event is stored and
// processed, and that adminLedgerCheck (as an ADMIN_PHONES user) finds the ledger balanced.
// After the PostgreSQL scenarios, buyAirtime runs once more on a fresh database that the service
// reaches through PgBouncer in transaction pooling (DATABASE_PREPARED_STATEMENTS=0), labelled
// `pgbouncer`, when something answers at BENCH_PGBOUNCER_URL (default 127.0.0.1:6432, which
// `bash .ci/pgbouncer` starts; BENCH_PGBOUNCER=0 leaves it out): decision 0027's cost of the pooler.
// After the PostgreSQL scenarios, `pgbench -N` runs on the same PostgreSQL at the same connection
// count (bench/pgbench.ts), and the webhook, buyAirtime and transferToUser rates are printed as
// ratios of its tps.
//
// Issue 43's scenarios (PostgreSQL only, after the PostgreSQL and PgBouncer runs, labelled `scaling`;
// BENCH_SCENARIOS=scaling names the three; alone, no service is started on PGlite or PostgreSQL):
//
//   ledgerPostings  bench/ledger-postings.ts in this process on a scratch database: 16 clients posting
//                  batches of 20 acceptances then their settlements with postBatch, 8 s (BENCH_DURATION)
//                  at LEDGER_SHARDS K = 1 then K = 8: postings/s, each transaction's p50/p99
//   buyAirtimeX2   buyAirtime ×2: bench/purchases.ts's scenario through two API processes (WORKER=0)
//                  and one worker (--worker-only) with the standalone sandbox, on a fresh database at
//                  K = 1, then another at K = 8, the 50 connections split between the APIs: rate,
//                  p50, p99, and each process's peak RSS and CPU (bench/purchases-cluster.ts)
//   ledgerCheck    bench/ledger-check.ts: a ledger of BENCH_LEDGER_ENTRIES entries (10,000,000; 200,000
//                  when BENCH_DURATION makes the run a quick one) loaded in bulk, a checkpoint, 100,000
//                  more (BENCH_LEDGER_NEW_ENTRIES), then the incremental run and the full check timed
//
// The report sets them beside `pgbench -N` in a section of their own (bench/report.ts).
//
//   createBulkOrder  POST createBulkOrder, autocannon, 10 connections, 20 funded Tier-1 buyers, 100
//                  lines of ₦100 MTN airtime the sandbox delivers at once per order: orders/s, lines/s
//                  (orders × 100) and the order's latency; then every order completed with every line
//                  delivered, the wallets charged exactly once per line, and adminLedgerCheck
//                  (bench/bulk-orders.ts)
//
// Before the databases, the HTTP anchor: a bare Fastify route with one JSON route in a child process
// on the same Node (bench/anchor-app.ts), under the same autocannon load (bench/fastify-anchor.ts).
// Every scenario that loads a process records that process's CPU time and RSS (sampled, and VmHWM)
// and, on PostgreSQL, the server's CPU time, from /proc (bench/usage.ts).
//
// BENCH_SCENARIOS=webhook (a comma-separated list of getWallet, otp, signIn, webhook, buyAirtime,
// createSavingsLock, transferToUser, savingsMaturity, scheduledRuns, bulkOrder, listNotifications, broadcastPush,
// reconciliation, webClient, ledgerPostings, buyAirtimeX2, ledgerCheck; scaling for the last three) runs a
// subset; BENCH_PGLITE=0 or BENCH_POSTGRES=0 leaves a database out; BENCH_DURATION=3 makes every
// load (anchors' included) last 3 s instead of its own duration.
//
// The client and the server share the machine's cores, so the figures are for comparison between
// runs on one machine, not capacity planning. Results go to bench/results/latest.json, or to the
// file BENCH_RESULTS_FILE names (a subset's run need not replace the whole bench's results), and,
// laid out for reading with the anchors beside each scenario, to bench/RESULTS.md (bench/report.ts),
// or the file BENCH_REPORT_FILE names.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsFile = path.resolve(
  process.env.BENCH_RESULTS_FILE ?? path.join(repoRoot, 'bench', 'results', 'latest.json'),
);

const SIGNED_IN_USERS = 50;
const WALLET_DURATION_SECONDS = loadSeconds(10);
const REQUEST_OTP_DURATION_SECONDS = loadSeconds(8);
const VERIFY_OTP_AMOUNT_MAX = 2_000;
const SIGN_IN_DURATION_SECONDS = loadSeconds(8);
const SIGN_IN_CONCURRENCY = 10;
const WEBHOOK_DURATION_SECONDS = loadSeconds(10);
const WEBHOOK_DUPLICATE_DURATION_SECONDS = loadSeconds(5);
const WEBHOOK_USERS = 20;
const WEBHOOK_INTENTS = 500;
/** One body in this many names a top-up intent (while intents last); the rest unknown references. */
const WEBHOOK_KNOWN_EVERY = 16;
/** Bodies signed before the run; more than any run sends (a later request is signed on the fly). */
const WEBHOOK_BODIES = 40_000;
const WEBHOOK_TOPUP_NAIRA = 1_000;
const WEBHOOK_DRAIN_TIMEOUT_MS = 60_000;
/** Issue 4's targets: the webhook on PostgreSQL against `pgbench -N`, and on PGlite in req/s. */
const WEBHOOK_TARGET_PGBENCH_RATIO = 0.7;
const WEBHOOK_TARGET_PGLITE_RPS = 800;
/** Issue 5's targets for buyAirtime at 50 connections. */
const PURCHASE_TARGET_PGBENCH_RATIO = 0.35;
const PURCHASE_TARGET_P99_MS = 100;
const PURCHASE_TARGET_PGLITE_RPS = 300;
const STARTUP_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
/**
 * The whole bench, both databases, must finish within this or it fails. The savings scenarios (issue
 * 17) take about four minutes of it: 1,000 users signed in and funded per database, 100,000 locks
 * matured twice on PostgreSQL (one runner, then two) and the ledger checked after each round. The
 * notification scenarios (issue 18) about a minute and a half, most of it the broadcast's pushes.
 * transferToUser (issue 19) under a minute for both: 400 users made and funded per database, 10 s of
 * load, the histories and balances read back. webClient (issue 20) under a minute per database: six
 * throttled page loads and five purchases through the screens (and the client's build, when stale).
 */
// Since then the bulk orders, the scheduled runs and the anchors joined; a full run took over 900 s on a
// loaded 2-core machine. The scaling scenarios add about a quarter of an hour more, most of it loading
// ledgerCheck's 10,000,000 entries (1,000,000 took 46 s on that machine, 10 to 13 of load average).
// BENCH_TIMEOUT_SECONDS sets it.
const BENCH_TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_SECONDS ?? 3_600) * 1000;
const OUTPUT_LINES_MAX = 40;

const POSTGRES_ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const POSTGRES_ENABLED = process.env.BENCH_POSTGRES !== '0';
/**
 * PgBouncer in transaction pooling in front of the same PostgreSQL (`bash .ci/pgbouncer` starts one
 * here): after the direct run, buyAirtime runs again through it, with DATABASE_PREPARED_STATEMENTS=0
 * as PgBouncer before 1.21 needs (decision 0027). BENCH_PGBOUNCER=0 leaves it out.
 */
const PGBOUNCER_URL = process.env.BENCH_PGBOUNCER_URL ?? 'postgres://postgres@127.0.0.1:6432/';
const PGBOUNCER_ENABLED = process.env.BENCH_PGBOUNCER !== '0';
const PGLITE_ENABLED = process.env.BENCH_PGLITE !== '0';
/** Issue 43's scenarios, on PostgreSQL only; `scaling` in BENCH_SCENARIOS names the three. */
const SCALING_SCENARIOS = ['ledgerPostings', 'buyAirtimeX2', 'ledgerCheck'];
const ALL_SCENARIOS = `getWallet,otp,signIn,webhook,buyAirtime,createSavingsLock,transferToUser,savingsMaturity,scheduledRuns,bulkOrder,listNotifications,broadcastPush,reconciliation,webClient,${SCALING_SCENARIOS.join(',')}`;
const SCENARIOS = new Set(
  (process.env.BENCH_SCENARIOS ?? ALL_SCENARIOS)
    .split(',')
    .map((s) => s.trim())
    .flatMap((s) => (s === 'scaling' ? SCALING_SCENARIOS : [s])),
);
/** Whether a scenario that runs against the service started on a database (PGlite, PostgreSQL) is asked for. */
const SERVICE_SCENARIOS_SELECTED = [...SCENARIOS].some((s) => !SCALING_SCENARIOS.includes(s));
/** The scaling scenarios' sizes: a quick run (BENCH_DURATION) loads a small ledger unless told. */
const LEDGER_POSTINGS = { clients: 16, batch: 20, shards: [1, 8], seconds: loadSeconds(8) };
const CLUSTER_SHARDS = [1, 8];
const LEDGER_CHECK_ENTRIES = Number(
  process.env.BENCH_LEDGER_ENTRIES ?? (durationOverrideSeconds() === null ? 10_000_000 : 200_000),
);
const LEDGER_CHECK_NEW = Number(
  process.env.BENCH_LEDGER_NEW_ENTRIES ?? Math.min(100_000, Math.floor(LEDGER_CHECK_ENTRIES / 10)),
);
/** 40 entries a wallet (ledger-check.ts's own 10,000,000 over 250,000), at least 2. */
const LEDGER_CHECK_USERS = Math.max(2, Math.min(250_000, Math.floor(LEDGER_CHECK_ENTRIES / 40)));
const reportFile = path.resolve(process.env.BENCH_REPORT_FILE ?? path.join(repoRoot, 'bench', 'RESULTS.md'));

type DatabaseRun = {
  database: string;
  startupMs: number;
  scenarios: ScenarioResult[];
  serverPeakRssMb: number | null;
  /** What the bench verified after the webhook and purchase scenarios; `ok: false` fails the run. */
  checks: { name: string; ok: boolean; detail: string }[];
  /** buyAirtime: from acceptance to success on the service's clock, when that scenario ran. */
  acceptedToSuccess: PurchaseRun['acceptedToSuccess'] | null;
  /** savingsMaturity: each round's figures and profile, when that scenario ran. */
  maturity: MaturityRound[];
  /** broadcastPush: its figures and profile, when that scenario ran. */
  broadcast: BroadcastRound | null;
  /** scheduledRuns: each round's figures, when that scenario ran. */
  scheduledRuns: ScheduledRunsRound[];
  /** reconciliation: the run's figures, when that scenario ran. */
  reconciliation: ReconciliationRound | null;
  /** webClient: the browser measures against this database's service, when they ran. */
  webClient: WebClientRun | null;
};

/**
 * webClient: the build measured before any service starts (null when the scenario is not selected or
 * the build failed), and why the browser measures cannot run here (null when they can).
 */
let webClientBuild: { built: boolean; buildMs: number; initialJs: InitialJs } | null = null;
let webBrowserSkipped: string | null = null;

class SetupError extends Error {
  override name = 'SetupError';
}

// ---------------------------------------------------------------------------------------------
// The service under test

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

/** The database a service started with `env` uses on PostgreSQL; null when it runs on PGlite. */
function postgresDatabaseOf(env: Record<string, string>): string | null {
  if (env.DATABASE_URL === undefined) return null;
  return decodeURIComponent(new URL(env.DATABASE_URL).pathname.slice(1)) || 'postgres';
}

/** What the bench starts by default: the service, ready when /readyz on PORT answers 200. */
const SERVICE_PROCESS = { args: ['src/main.ts'], readyPath: '/readyz', portEnv: 'PORT' };

/**
 * A process of the bench with the service's environment and `extraEnv` over it: the service by
 * default, or (`program`) a worker or the standalone sandbox, ready when `readyPath` answers 200 on the
 * port `portEnv` names (extraEnv's, else a free one).
 */
async function startServer(
  extraEnv: Record<string, string>,
  program: { args: string[]; readyPath: string; portEnv: string } = SERVICE_PROCESS,
): Promise<Server> {
  const port = Number(extraEnv[program.portEnv] ?? (await freePort()));
  const env: Record<string, string | undefined> = { ...process.env };
  // The bench decides the database and the rate-limit store, not the caller's shell.
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  Object.assign(env, {
    NODE_ENV: 'development',
    SANDBOX: '1',
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '1000000',
    RATE_LIMIT_PHONE_PER_MINUTE: '1000000',
    LOG_LEVEL: 'warn',
    WORKER: '1',
    // Tier 1's limits raised (still judged, so still measured): see BENCH_LIMITS.
    ...BENCH_LIMITS,
    ...extraEnv,
    [program.portEnv]: String(port),
  });
  // npm start's flags (V8's heap sizing), then BENCH_SERVICE_NODE_ARGS:
  // "--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the service under load.
  const nodeArgs = [
    ...startScriptNodeFlags(),
    ...(process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter((a) => a !== ''),
  ];
  const child = spawn(process.execPath, [...nodeArgs, ...program.args], {
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
      const response = await fetch(`${baseUrl}${program.readyPath}`, { signal: AbortSignal.timeout(2_000) });
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
    postgresDatabase: postgresDatabaseOf(extraEnv),
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

// ---------------------------------------------------------------------------------------------
// Scenarios

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
  const { value, usage } = await measured(server, () =>
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
    usage,
  );
}

async function requestOtpScenario(
  server: Server,
  database: string,
): Promise<{ result: ScenarioResult; phones: string[] }> {
  const phones: string[] = [];
  const { value, usage } = await measured(server, () =>
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
      usage,
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
  const { value, usage } = await measured(server, () =>
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
    usage,
  );
}

async function fullSignInScenario(server: Server, database: string): Promise<ScenarioResult> {
  const latencies: number[] = [];
  let failures = 0;
  let firstFailure: string | undefined;
  const startedAt = performance.now();
  const deadline = startedAt + SIGN_IN_DURATION_SECONDS * 1000;
  const { usage } = await measured(server, () =>
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
    serverPeakRssMb: usage.serverPeakRssMb,
    usage,
  };
}

async function walletBalancesNaira(baseUrl: string, tokens: string[]): Promise<number> {
  const balances = await mapConcurrent(tokens, SETUP_CONCURRENCY, (token) => balanceNaira(baseUrl, token));
  return balances.reduce((a, b) => a + b, 0);
}

type Check = DatabaseRun['checks'][number];

async function webhookScenarios(
  server: Server,
  database: string,
  adminToken: string,
  databaseUrl: string | undefined,
): Promise<{ results: ScenarioResult[]; checks: Check[] }> {
  // Signed-in users and their top-up intents, through the API like a client.
  let tokens: string[];
  let intents: { reference: string; token: string }[];
  try {
    tokens = await mapConcurrent(
      Array.from({ length: WEBHOOK_USERS }, () => nextPhone()),
      SETUP_CONCURRENCY,
      (phone) => signIn(server.baseUrl, phone),
    );
    intents = await mapConcurrent(
      Array.from({ length: WEBHOOK_INTENTS }, (_, i) => tokens[i % tokens.length] as string),
      SETUP_CONCURRENCY,
      async (token) => {
        const created = await postOperation(
          server.baseUrl,
          'createTopupIntent',
          { amount: WEBHOOK_TOPUP_NAIRA },
          token,
        );
        return { reference: (created.data as { reference: string }).reference, token };
      },
    );
  } catch (error) {
    throw new SetupError(
      `creating the webhook scenario's users and top-ups failed: ${(error as Error).message}`,
    );
  }
  const balanceBefore = await walletBalancesNaira(server.baseUrl, tokens);

  // Every body distinct (the service de-duplicates identical bytes), signed before the run.
  const unknownPrefix = `bench-${randomBytes(4).toString('hex')}-`;
  const topupKobo = WEBHOOK_TOPUP_NAIRA * 100;
  let nextIntent = 0;
  const bodyAt = (i: number): SignedBody =>
    i % WEBHOOK_KNOWN_EVERY === 0 && nextIntent < intents.length
      ? signedChargeSuccess(i, (intents[nextIntent++] as { reference: string }).reference, topupKobo)
      : signedChargeSuccess(i, `${unknownPrefix}${i}`, 100 * (100 + (i % 10_000)));
  const bodies = Array.from({ length: WEBHOOK_BODIES }, (_, i) => bodyAt(i));
  const probe = await deliver(server.baseUrl, signedChargeSuccess(-1, `${unknownPrefix}probe`, 10_000));
  if (probe !== 200) throw new SetupError(`the webhook answered ${probe} to a signed body`);

  let built = 0;
  const webhookRequest = (next: () => SignedBody): autocannon.Request => ({
    method: 'POST',
    path: WEBHOOK_PATH,
    setupRequest: (request) => {
      const signed = next();
      return {
        ...request,
        headers: { 'content-type': 'application/json', 'x-payment-signature': signed.signature },
        body: signed.body,
      };
    },
  });
  const distinct = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: WEBHOOK_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [
        webhookRequest(() => {
          const i = built++;
          // Kept once built: the duplicate pass and the crediting check re-deliver them.
          const body = bodies[i] ?? bodyAt(i);
          bodies[i] = body;
          return body;
        }),
      ],
    }),
  );
  const results = [
    fromAutocannon(
      database,
      'webhook',
      `POST, distinct signed charge.success, 1/${WEBHOOK_KNOWN_EVERY} known ref, ${CONNECTIONS} conns, ${WEBHOOK_DURATION_SECONDS}s`,
      distinct.value,
      distinct.usage,
    ),
  ];
  const answered = distinct.value['2xx'];

  // Re-deliveries of bodies already stored (answered 200 above): the de-duplication path.
  const delivered = Math.max(1, Math.min(answered, built) - CONNECTIONS);
  let again = 0;
  const duplicate = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: WEBHOOK_DUPLICATE_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      requests: [webhookRequest(() => bodies[again++ % delivered] as SignedBody)],
    }),
  );
  results.push(
    fromAutocannon(
      database,
      'webhook dup',
      `POST, re-delivered bodies, ${CONNECTIONS} conns, ${WEBHOOK_DUPLICATE_DURATION_SECONDS}s`,
      duplicate.value,
      duplicate.usage,
    ),
  );

  // Every top-up body built is delivered (again): each must credit its wallet once, never twice.
  const knownBuilt = bodies.slice(0, built).filter((b) => !b.reference.startsWith(unknownPrefix));
  const redelivered = await mapConcurrent(knownBuilt, SETUP_CONCURRENCY, (b) => deliver(server.baseUrl, b));
  const checks: Check[] = [];
  checks.push({
    name: 'top-up bodies re-delivered',
    ok: redelivered.every((status) => status === 200),
    detail: `${redelivered.filter((status) => status === 200).length}/${knownBuilt.length} answered 200`,
  });
  const expectedNaira = balanceBefore + knownBuilt.length * WEBHOOK_TOPUP_NAIRA;
  let balanceAfter = await walletBalancesNaira(server.baseUrl, tokens);
  const drainDeadline = Date.now() + WEBHOOK_DRAIN_TIMEOUT_MS;
  const drainStartedAt = performance.now();
  while (balanceAfter < expectedNaira && Date.now() < drainDeadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    balanceAfter = await walletBalancesNaira(server.baseUrl, tokens);
  }
  checks.push({
    name: 'wallets credited once per top-up',
    ok: balanceAfter === expectedNaira,
    detail: `${knownBuilt.length} top-ups of ₦${WEBHOOK_TOPUP_NAIRA}: wallets hold ₦${balanceAfter}, expected ₦${expectedNaira} (settled in ${Math.round(performance.now() - drainStartedAt)} ms)`,
  });

  if (databaseUrl !== undefined) {
    // Straight from the service's database: the scenario's answered events are all there, and all
    // processed (webhook-events.ts: only its own, for earlier scenarios top up wallets too).
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 5_000 });
    await client.connect();
    try {
      const scope = { unknownPrefix, topupReferences: knownBuilt.map((b) => b.reference) };
      const query: Query = async (text, values) => client.query(text, values);
      let row = await countWebhookScenarioEvents(query, scope);
      while (row.unprocessed > 0 && Date.now() < drainDeadline) {
        await new Promise((resolve) => setTimeout(resolve, 500));
        row = await countWebhookScenarioEvents(query, scope);
      }
      // Requests in flight when autocannon stopped may be stored without an answer it counted.
      const sentMax = built + 1 + knownBuilt.length;
      checks.push({
        name: 'payment_events stored',
        ok: row.stored >= answered && row.stored <= sentMax,
        detail: `${row.stored} rows (${row.unknown} unknown-reference, ${row.credited} credited) for ${answered} distinct bodies answered 200, at most ${sentMax} sent; ${row.unprocessed} unprocessed`,
      });
      checks.push({
        name: 'payment_events processed',
        ok: eachTopupCreditedOnce(row, knownBuilt.length),
        detail: `${row.unprocessed} unprocessed, ${row.credited} credited (${row.creditedReferences} references) of ${knownBuilt.length} top-ups`,
      });
    } finally {
      await client.end();
    }
  }

  const ledger = await getOperation(server.baseUrl, 'adminLedgerCheck', adminToken);
  const check = ledger.data as { ok: boolean; accounts: number; entries: number; imbalances: unknown[] };
  checks.push({
    name: 'adminLedgerCheck',
    ok: check.ok,
    detail: `ok ${check.ok}, ${check.accounts} accounts, ${check.entries} entries, ${check.imbalances.length} imbalances`,
  });
  return { results, checks };
}

async function benchDatabase(
  database: 'pglite' | 'postgres',
  extraEnv: Record<string, string>,
  databaseUrl?: string,
): Promise<DatabaseRun> {
  // Before the service starts: on PGlite only one process may open the database.
  const inboxPhones = SCENARIOS.has('listNotifications') ? await seedInboxes(extraEnv) : [];
  process.stdout.write(`\n${database}: starting the service\n`);
  const admin = { phone: nextPhone() };
  const startedAt = performance.now();
  const server = await startServer({ ...extraEnv, ADMIN_PHONES: admin.phone });
  const startupMs = Math.round(performance.now() - startedAt);
  const scenarios: ScenarioResult[] = [];
  let acceptedToSuccess: DatabaseRun['acceptedToSuccess'] = null;
  let webClient: WebClientRun | null = null;
  const checks: Check[] = [];
  const step = (result: ScenarioResult) => {
    scenarios.push(result);
    process.stdout.write(
      `${database}: ${result.scenario}: ${result.requestsPerSecond}/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms\n`,
    );
  };
  const checked = (check: Check) => {
    checks.push(check);
    process.stdout.write(
      `${database}: check ${check.name}: ${check.ok ? 'ok' : 'FAILED'}: ${check.detail}\n`,
    );
  };
  try {
    const adminToken = await signIn(server.baseUrl, admin.phone).catch((error: unknown) => {
      throw new SetupError(`signing in the admin failed: ${(error as Error).message}`);
    });
    // First, while the service is idle: the browser measures are of one person, not of the load.
    if (SCENARIOS.has('webClient') && webClientBuild !== null && webBrowserSkipped === null) {
      try {
        webClient = await webClientScenario(server);
        const { load, loadDevtoolsAdjusted: adjusted, pay } = webClient;
        process.stdout.write(
          `${database}: webClient /sign-in cold: FCP ${load.fcpMedianMs} ms, LCP ${load.lcpMedianMs} ms (${load.loads.map((l) => l.lcpMs).join(', ')}; ${Math.round((load.loads[0]?.transferredBytes ?? 0) / 1000)} kB over ${load.loads[0]?.requests} requests, LCP element ${load.loads[0]?.lcpElement}); DevTools-adjusted: FCP ${adjusted.fcpMedianMs} ms, LCP ${adjusted.lcpMedianMs} ms; Pay → Successful ${pay.medianMs} ms (${pay.payments.map((p) => `${p.ms}${p.sawProcessing ? ' after Processing' : ''}`).join(', ')})\n`,
        );
      } catch (error) {
        checked({
          name: 'webClient in the browser',
          ok: false,
          detail: (error as Error).message.split('\n')[0] ?? '',
        });
      }
    }
    if (SCENARIOS.has('getWallet')) step(await walletScenario(server, database));
    if (SCENARIOS.has('otp')) {
      const otp = await requestOtpScenario(server, database);
      step(otp.result);
      step(await verifyOtpScenario(server, database, otp.phones));
    }
    if (SCENARIOS.has('signIn')) step(await fullSignInScenario(server, database));
    if (SCENARIOS.has('webhook')) {
      const webhook = await webhookScenarios(server, database, adminToken, databaseUrl);
      for (const result of webhook.results) step(result);
      for (const check of webhook.checks) checked(check);
    }
    if (SCENARIOS.has('buyAirtime')) {
      const purchases = await buyAirtimeScenario(server, database, adminToken);
      step(purchases.result);
      acceptedToSuccess = purchases.acceptedToSuccess;
      process.stdout.write(
        `${database}: buyAirtime accepted → success: p50 ${acceptedToSuccess.p50Ms} ms, p99 ${acceptedToSuccess.p99Ms} ms, max ${acceptedToSuccess.maxMs} ms over ${acceptedToSuccess.purchases} purchases\n`,
      );
      for (const check of purchases.checks) checked(check);
    }
    if (SCENARIOS.has('createSavingsLock')) {
      const savings = await createSavingsLockScenario(server, database, adminToken);
      step(savings.result);
      for (const check of savings.checks) checked(check);
    }
    if (SCENARIOS.has('transferToUser')) {
      const transfers = await transferToUserScenario(server, database, adminToken);
      step(transfers.result);
      for (const check of transfers.checks) checked(check);
    }
    if (SCENARIOS.has('bulkOrder')) {
      const bulk = await bulkOrderScenario(server, database, adminToken);
      step(bulk.result);
      process.stdout.write(`${database}: createBulkOrder: ${bulk.linesPerSecond} lines/s\n`);
      for (const check of bulk.checks) checked(check);
    }
    if (SCENARIOS.has('listNotifications')) {
      const inbox = await listNotificationsScenario(server, database, inboxPhones);
      step(inbox.result);
      for (const check of inbox.checks) checked(check);
    }
  } catch (error) {
    if (error instanceof SetupError) error.message += `\nservice output:\n${server.output()}`;
    throw error;
  } finally {
    await server.stop();
  }
  const peaks = scenarios.map((s) => s.serverPeakRssMb).filter((p): p is number => p !== null);
  // The service has stopped: its workers must not take part in the pushing, and on PGlite the
  // worker process needs the database to itself.
  let broadcast: BroadcastRound | null = null;
  if (SCENARIOS.has('broadcastPush')) {
    const run = await broadcastPushScenario(database, extraEnv, (child) => {
      liveChildren.add(child);
      child.once('exit', () => liveChildren.delete(child));
    });
    step(withWorkerUsage(run.result, run.round));
    broadcast = run.round;
    const r = run.round;
    process.stdout.write(
      `${database}: broadcastPush: ${r.distinct}/${r.subscriptions} subscriptions in ${r.seconds} s (first push after ${r.firstPushMs} ms; seeded in ${r.seedSeconds} s); worker: peak RSS ${r.worker.peakRssMb ?? 'n/a'} MB (sampled ${r.worker.sampledPeakRssMb} MB, ${r.worker.rssAtGoMb} MB at start), CPU ${r.worker.cpuSeconds} s, event loop ${Math.round(r.worker.eventLoopUtilization * 100)}% busy, ${r.worker.sockets} TLS connections; push service CPU ${r.pushServiceCpuSeconds} s; pushes p50 ${r.worker.push.p50Ms} ms, p99 ${r.worker.push.p99Ms} ms, encrypt+sign p50 ${r.worker.push.syncP50Ms} ms (${r.worker.push.syncTotalMs} ms in all); ${r.pages.count} pages, run p50 ${r.pages.runP50Ms} ms, p99 ${r.pages.runP99Ms} ms, wait p50 ${r.pages.waitP50Ms} ms, max ${r.pages.waitMaxMs} ms\n`,
    );
    for (const check of run.checks) checked(check);
  }
  // The service has stopped: its own maturity job must not take part in the timed one.
  let maturity: MaturityRound[] = [];
  if (SCENARIOS.has('savingsMaturity')) {
    const run = await savingsMaturityScenario(database, extraEnv);
    for (const result of run.results) step(result);
    for (const check of run.checks) checked(check);
    maturity = run.rounds;
  }
  let scheduledRuns: ScheduledRunsRound[] = [];
  if (SCENARIOS.has('scheduledRuns')) {
    const run = await scheduledRunsScenario(database, extraEnv);
    for (const result of run.results) step(result);
    for (const check of run.checks) checked(check);
    scheduledRuns = run.rounds;
  }
  let reconciliation: ReconciliationRound | null = null;
  if (SCENARIOS.has('reconciliation')) {
    const run = await reconciliationScenario(database, extraEnv);
    step(run.result);
    reconciliation = run.round;
    const r = run.round;
    process.stdout.write(
      `${database}: reconciliation: ${r.items} items in ${r.seconds} s (${r.itemsPerSecond} items/s; the job ${r.jobMs} ms): matched ${r.counts.matched}, missingHere ${r.counts.missingHere}, missingThere ${r.counts.missingThere}, amountMismatch ${r.counts.amountMismatch}, statusMismatch ${r.counts.statusMismatch}; ${r.providerPages} provider pages, ${r.verifyCalls} verified by reference; the job's phases: run row ${r.phases.startMs} ms, listing ${r.phases.listingMs} ms, our side ${r.phases.ourSideMs} ms, verify-by-reference ${r.phases.verifyByReferenceMs} ms, writing the items ${r.phases.writingMs} ms (seeded in ${r.seed.seconds} s: intents ${r.seed.intentsSeconds} s, payments and credits ${r.seed.paymentsSeconds} s)\n`,
    );
    for (const check of run.checks) checked(check);
  }
  return {
    database,
    startupMs,
    scenarios,
    serverPeakRssMb: peaks.length > 0 ? Math.max(...peaks) : null,
    checks,
    acceptedToSuccess,
    maturity,
    broadcast,
    scheduledRuns,
    reconciliation,
    webClient,
  };
}

/** broadcastPush's "service" is its worker process: its CPU and peak RSS, as it measured them. */
function withWorkerUsage(result: ScenarioResult, round: BroadcastRound): ScenarioResult {
  const usage: ScenarioUsage = {
    serverPeakRssMb: round.worker.peakRssMb,
    serverSampledPeakRssMb: round.worker.sampledPeakRssMb,
    serviceCpuMs: Math.round(round.worker.cpuSeconds * 1000),
    postgresCpuMs: null,
    postgresDatabaseCpuMs: null,
  };
  return { ...result, usage };
}

async function benchPglite(): Promise<DatabaseRun> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-bench-'));
  try {
    return await benchDatabase('pglite', { DATA_DIR: dataDir });
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Whether a PostgreSQL server (or a pooler in front of one) answers a query at the URL. */
async function reachable(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 3_000 });
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

/** The same database name on the pooler's address (its host, port and user). */
function viaPgbouncer(databaseUrl: string): string {
  const url = new URL(PGBOUNCER_URL);
  url.pathname = new URL(databaseUrl).pathname;
  return url.toString();
}

/**
 * buyAirtime alone, on a fresh database that the service reaches through PgBouncer (its pool and
 * pg-boss's), with named prepared statements off; migrations go direct (MIGRATION_DATABASE_URL), as
 * Kysely's migrator holds a session lock. Labelled `pgbouncer` beside the direct `postgres` run.
 */
async function benchThroughPgbouncer(): Promise<DatabaseRun> {
  const database = 'pgbouncer';
  const name = `billrail_bench_${randomBytes(6).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-bench-'));
  await adminQuery(`create database ${name}`);
  const direct = new URL(POSTGRES_ADMIN_URL);
  direct.pathname = `/${name}`;
  const checks: Check[] = [];
  const scenarios: ScenarioResult[] = [];
  let acceptedToSuccess: DatabaseRun['acceptedToSuccess'] = null;
  let startupMs = 0;
  try {
    process.stdout.write(
      `\n${database}: starting the service (through ${PGBOUNCER_URL}, prepared statements off)\n`,
    );
    const admin = nextPhone();
    const startedAt = performance.now();
    const server = await startServer({
      DATABASE_URL: viaPgbouncer(direct.toString()),
      MIGRATION_DATABASE_URL: direct.toString(),
      DATABASE_PREPARED_STATEMENTS: '0',
      DATA_DIR: dataDir,
      ADMIN_PHONES: admin,
    });
    startupMs = Math.round(performance.now() - startedAt);
    try {
      const adminToken = await signIn(server.baseUrl, admin);
      const purchases = await buyAirtimeScenario(server, database, adminToken);
      const r = purchases.result;
      scenarios.push(r);
      process.stdout.write(
        `${database}: ${r.scenario}: ${r.requestsPerSecond}/s, p50 ${r.latencyP50Ms} ms, p99 ${r.latencyP99Ms} ms\n`,
      );
      acceptedToSuccess = purchases.acceptedToSuccess;
      for (const check of purchases.checks) {
        checks.push(check);
        process.stdout.write(
          `${database}: check ${check.name}: ${check.ok ? 'ok' : 'FAILED'}: ${check.detail}\n`,
        );
      }
    } catch (error) {
      if (error instanceof SetupError) error.message += `\nservice output:\n${server.output()}`;
      throw error;
    } finally {
      await server.stop();
    }
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    database,
    startupMs,
    scenarios,
    serverPeakRssMb: scenarios[0]?.serverPeakRssMb ?? null,
    checks,
    acceptedToSuccess,
    maturity: [],
    broadcast: null,
    scheduledRuns: [],
    reconciliation: null,
    webClient: null,
  };
}

/**
 * Issue 43's scenarios, on PostgreSQL, each on scratch databases of its own, labelled `scaling`:
 * ledgerPostings (bench/ledger-postings.ts) at K = 1 and 8, buyAirtime through two API processes
 * and one worker at K = 1 and 8 (bench/purchases-cluster.ts), the ledger checks on a bulk-loaded
 * ledger (bench/ledger-check.ts). A ledger check that finds the ledger not whole fails the run.
 */
async function benchScaling(): Promise<{ run: DatabaseRun; scaling: ScalingResults }> {
  const database = 'scaling';
  const scenarios: ScenarioResult[] = [];
  const checks: Check[] = [];
  const report = (result: ScenarioResult) => {
    scenarios.push(result);
    process.stdout.write(
      `${database}: ${result.scenario}: ${result.requestsPerSecond}/s, p50 ${result.latencyP50Ms} ms, p99 ${result.latencyP99Ms} ms\n`,
    );
  };
  const checked = (check: Check) => {
    checks.push(check);
    process.stdout.write(
      `${database}: check ${check.name}: ${check.ok ? 'ok' : 'FAILED'}: ${check.detail}\n`,
    );
  };
  const scaling: ScalingResults = {
    ledgerPostings: null,
    buyAirtimeCluster: [],
    ledgerCheck: null,
    singleProcessLedgerShards: process.env.LEDGER_SHARDS ?? null,
  };
  let startupMs = 0;
  if (SCENARIOS.has('ledgerPostings')) {
    process.stdout.write(`\n${database}: ledgerPostings\n`);
    const run: LedgerPostingsRun = await runLedgerPostings(
      { ...LEDGER_POSTINGS, adminUrl: POSTGRES_ADMIN_URL },
      (line) => process.stdout.write(`${database}: ${line}\n`),
    );
    scaling.ledgerPostings = run;
    for (const round of run.rounds) {
      report({
        database,
        scenario: `ledgerPostings K=${round.shards}`,
        measures: `postBatch in this process: ${run.clients} clients, ${run.batch} postings a transaction, acceptance then settlement, LEDGER_SHARDS=${round.shards}, ${round.seconds} s; req/s is postings/s (two a purchase), p50/p99 per transaction`,
        requestsPerSecond: round.postingsPerSecond,
        latencyP50Ms: round.transactionP50Ms,
        latencyP99Ms: round.transactionP99Ms,
        requests: round.postings,
        errors: 0,
        non2xx: 0,
        // In the bench's own process, not the service's.
        serverPeakRssMb: null,
      });
    }
    checked({
      name: 'ledgerPostings: checkLedger and vtu_in_flight after every round',
      ok: run.check.ok,
      detail: `${run.check.entries} entries, ${run.check.imbalances} imbalances, vtu_in_flight ${run.check.vtuInFlightKobo} kobo`,
    });
  }
  if (SCENARIOS.has('buyAirtimeX2')) {
    for (const shards of CLUSTER_SHARDS) {
      process.stdout.write(`\n${database}: buyAirtime through 2 API processes and 1 worker, K=${shards}\n`);
      const { round, checks: roundChecks } = await buyAirtimeClusterRound(
        shards,
        POSTGRES_ADMIN_URL,
        adminQuery,
        startServer,
      );
      scaling.buyAirtimeCluster.push(round);
      startupMs ||= round.startupMs;
      report(round.result);
      process.stdout.write(
        `${database}: ${round.result.scenario}: ${round.processes.map((p) => `${p.name} peak RSS ${p.peakRssMb ?? 'n/a'} MB, CPU ${p.cpuMs ?? 'n/a'} ms`).join('; ')}; accepted → success p50 ${round.acceptedToSuccess.p50Ms} ms, p99 ${round.acceptedToSuccess.p99Ms} ms\n`,
      );
      for (const check of roundChecks) checked(check);
    }
  }
  if (SCENARIOS.has('ledgerCheck')) {
    process.stdout.write(
      `\n${database}: ledgerCheck, ${LEDGER_CHECK_ENTRIES} entries and ${LEDGER_CHECK_NEW} after the checkpoint\n`,
    );
    try {
      const run: LedgerCheckRun = await runLedgerCheck({
        entries: LEDGER_CHECK_ENTRIES,
        new: LEDGER_CHECK_NEW,
        users: LEDGER_CHECK_USERS,
        adminUrl: POSTGRES_ADMIN_URL,
      });
      scaling.ledgerCheck = run;
      checked({
        name: 'ledgerCheck: the incremental run and the full check find the ledger whole',
        ok: true,
        detail: `${run.entries + run.added} entries: incremental ${run.incrementalSeconds.toFixed(2)} s (${run.added} new), full ${run.fullSeconds.toFixed(2)} s`,
      });
    } catch (error) {
      checked({
        name: 'ledgerCheck: the incremental run and the full check find the ledger whole',
        ok: false,
        detail: (error as Error).message.split('\n')[0] ?? '',
      });
    }
  }
  return {
    run: {
      database,
      startupMs,
      scenarios,
      serverPeakRssMb: null,
      checks,
      acceptedToSuccess: null,
      maturity: [],
      broadcast: null,
      scheduledRuns: [],
      reconciliation: null,
      webClient: null,
    },
    scaling,
  };
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
    return await benchDatabase(
      'postgres',
      { DATABASE_URL: url.toString(), DATA_DIR: dataDir },
      url.toString(),
    );
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

type WebhookTargets = {
  lines: string[];
  summary: {
    postgresRequestsPerSecond: number | null;
    pgbenchTps: number | null;
    ratioToPgbench: number | null;
    ratioTarget: number;
    ratioMet: boolean | null;
    pgliteRequestsPerSecond: number | null;
    pgliteTarget: number;
    pgliteMet: boolean | null;
  };
};

/** Issue 4's targets for webhook ingestion (distinct bodies), met or not. */
function webhookTargets(runs: DatabaseRun[], pgbench: PgbenchResult | null): WebhookTargets {
  const rate = (database: string) =>
    runs.find((r) => r.database === database)?.scenarios.find((s) => s.scenario === 'webhook')
      ?.requestsPerSecond ?? null;
  const postgres = rate('postgres');
  const pglite = rate('pglite');
  const ratio = postgres !== null && pgbench !== null ? postgres / pgbench.tps : null;
  const lines: string[] = [];
  if (ratio !== null && pgbench !== null) {
    lines.push(
      `webhook on postgres / pgbench -N: ${postgres}/s ÷ ${pgbench.tps.toFixed(0)} tps = ${ratio.toFixed(2)} (target ≥ ${WEBHOOK_TARGET_PGBENCH_RATIO}): ${ratio >= WEBHOOK_TARGET_PGBENCH_RATIO ? 'met' : 'NOT met'}`,
    );
  }
  if (pglite !== null) {
    lines.push(
      `webhook on pglite: ${pglite}/s (target ≥ ${WEBHOOK_TARGET_PGLITE_RPS}/s): ${pglite >= WEBHOOK_TARGET_PGLITE_RPS ? 'met' : 'NOT met'}`,
    );
  }
  return {
    lines,
    summary: {
      postgresRequestsPerSecond: postgres,
      pgbenchTps: pgbench?.tps ?? null,
      ratioToPgbench: ratio === null ? null : Math.round(ratio * 100) / 100,
      ratioTarget: WEBHOOK_TARGET_PGBENCH_RATIO,
      ratioMet: ratio === null ? null : ratio >= WEBHOOK_TARGET_PGBENCH_RATIO,
      pgliteRequestsPerSecond: pglite,
      pgliteTarget: WEBHOOK_TARGET_PGLITE_RPS,
      pgliteMet: pglite === null ? null : pglite >= WEBHOOK_TARGET_PGLITE_RPS,
    },
  };
}

type PurchaseTargets = { lines: string[]; summary: Record<string, number | boolean | null> };

/** Issue 5's targets for buyAirtime: against `pgbench -N` with a p99 bound on PostgreSQL, req/s on PGlite. */
function purchaseTargets(runs: DatabaseRun[], pgbench: PgbenchResult | null): PurchaseTargets {
  const scenario = (database: string) =>
    runs.find((r) => r.database === database)?.scenarios.find((s) => s.scenario === 'buyAirtime') ?? null;
  const postgres = scenario('postgres');
  const pglite = scenario('pglite');
  const pooled = scenario('pgbouncer');
  const ratio = postgres !== null && pgbench !== null ? postgres.requestsPerSecond / pgbench.tps : null;
  const ratioMet = ratio === null ? null : ratio >= PURCHASE_TARGET_PGBENCH_RATIO;
  const p99Met = postgres === null ? null : postgres.latencyP99Ms <= PURCHASE_TARGET_P99_MS;
  const pgliteMet = pglite === null ? null : pglite.requestsPerSecond >= PURCHASE_TARGET_PGLITE_RPS;
  const lines: string[] = [];
  if (postgres !== null && ratio !== null && pgbench !== null) {
    lines.push(
      `buyAirtime on postgres / pgbench -N: ${postgres.requestsPerSecond}/s ÷ ${pgbench.tps.toFixed(0)} tps = ${ratio.toFixed(2)} (target ≥ ${PURCHASE_TARGET_PGBENCH_RATIO}): ${ratioMet ? 'met' : 'NOT met'}; p99 ${postgres.latencyP99Ms} ms (target ≤ ${PURCHASE_TARGET_P99_MS}): ${p99Met ? 'met' : 'NOT met'}`,
    );
  }
  if (pglite !== null) {
    lines.push(
      `buyAirtime on pglite: ${pglite.requestsPerSecond}/s (target ≥ ${PURCHASE_TARGET_PGLITE_RPS}/s): ${pgliteMet ? 'met' : 'NOT met'}`,
    );
  }
  const pooledRatio =
    pooled !== null && postgres !== null ? pooled.requestsPerSecond / postgres.requestsPerSecond : null;
  if (pooled !== null && pooledRatio !== null && postgres !== null) {
    lines.push(
      `buyAirtime through PgBouncer (transaction pooling, statements unnamed): ${pooled.requestsPerSecond}/s, p99 ${pooled.latencyP99Ms} ms; ${pooledRatio.toFixed(2)}× direct (${postgres.requestsPerSecond}/s, p99 ${postgres.latencyP99Ms} ms)`,
    );
  }
  return {
    lines,
    summary: {
      pgbouncerRequestsPerSecond: pooled?.requestsPerSecond ?? null,
      pgbouncerP99Ms: pooled?.latencyP99Ms ?? null,
      pgbouncerRatioToDirect: pooledRatio === null ? null : Math.round(pooledRatio * 100) / 100,
      postgresRequestsPerSecond: postgres?.requestsPerSecond ?? null,
      postgresP99Ms: postgres?.latencyP99Ms ?? null,
      ratioToPgbench: ratio === null ? null : Math.round(ratio * 100) / 100,
      ratioTarget: PURCHASE_TARGET_PGBENCH_RATIO,
      ratioMet,
      p99TargetMs: PURCHASE_TARGET_P99_MS,
      p99Met,
      pgliteRequestsPerSecond: pglite?.requestsPerSecond ?? null,
      pgliteTarget: PURCHASE_TARGET_PGLITE_RPS,
      pgliteMet,
    },
  };
}

type SavingsTargets = { lines: string[]; summary: Record<string, number | boolean | null> };

/**
 * Issue 17's targets for maturity (one runner, the job's batchMax): 100,000 locks due at once credited
 * within 60 s on PostgreSQL, 10,000 within 30 s on PGlite; createSavingsLock is reported, not targeted.
 */
function savingsTargets(runs: DatabaseRun[]): SavingsTargets {
  const lines: string[] = [];
  const summary: SavingsTargets['summary'] = {};
  for (const database of ['postgres', 'pglite'] as const) {
    const run = runs.find((r) => r.database === database);
    const locks = run?.scenarios.find((s) => s.scenario === 'createSavingsLock');
    if (locks !== undefined) {
      lines.push(
        `createSavingsLock on ${database}: ${locks.requestsPerSecond}/s, p99 ${locks.latencyP99Ms} ms, ${locks.non2xx} non-2xx`,
      );
      summary[`${database}CreateSavingsLockPerSecond`] = locks.requestsPerSecond;
      summary[`${database}CreateSavingsLockP99Ms`] = locks.latencyP99Ms;
    }
    const target = MATURITY_TARGET_SECONDS[database];
    for (const round of run?.maturity ?? []) {
      const met = round.seconds <= target;
      lines.push(
        `savingsMaturity on ${database}: ${round.locks} locks, batchMax ${round.batchMax}, ${round.runners} runner${round.runners === 1 ? '' : 's'}: ${round.seconds} s, ${round.locksPerSecond} locks/s (target ≤ ${target} s): ${met ? 'met' : 'NOT met'}`,
      );
    }
    const first = run?.maturity.find((r) => r.runners === 1);
    if (first !== undefined) {
      summary[`${database}MaturityLocks`] = first.locks;
      summary[`${database}MaturitySeconds`] = first.seconds;
      summary[`${database}MaturityTargetSeconds`] = target;
      summary[`${database}MaturityMet`] = first.seconds <= target;
    }
  }
  return { lines, summary };
}

type TransferResults = { lines: string[]; summary: Record<string, number | null> };

/**
 * transferToUser (issue 19) is reported, not targeted: req/s and p99 on each database, and on
 * PostgreSQL as a ratio of `pgbench -N` tps (a transfer is one write transaction, as pgbench's are).
 */
function transferResults(runs: DatabaseRun[], pgbench: PgbenchResult | null): TransferResults {
  const lines: string[] = [];
  const summary: TransferResults['summary'] = {};
  for (const database of ['postgres', 'pglite'] as const) {
    const transfers = runs
      .find((r) => r.database === database)
      ?.scenarios.find((s) => s.scenario === 'transferToUser');
    if (transfers === undefined) continue;
    const ratio =
      database === 'postgres' && pgbench !== null ? transfers.requestsPerSecond / pgbench.tps : null;
    lines.push(
      `transferToUser on ${database}${ratio !== null && pgbench !== null ? ` / pgbench -N: ${transfers.requestsPerSecond}/s ÷ ${pgbench.tps.toFixed(0)} tps = ${ratio.toFixed(2)}` : `: ${transfers.requestsPerSecond}/s`}; p50 ${transfers.latencyP50Ms} ms, p99 ${transfers.latencyP99Ms} ms, ${transfers.non2xx} non-2xx`,
    );
    summary[`${database}RequestsPerSecond`] = transfers.requestsPerSecond;
    summary[`${database}P50Ms`] = transfers.latencyP50Ms;
    summary[`${database}P99Ms`] = transfers.latencyP99Ms;
    summary[`${database}Non2xx`] = transfers.non2xx;
    if (database === 'postgres') {
      summary.pgbenchTps = pgbench?.tps ?? null;
      summary.ratioToPgbench = ratio === null ? null : Math.round(ratio * 100) / 100;
    }
  }
  return { lines, summary };
}

type NotificationTargets = { lines: string[]; summary: Record<string, number | boolean | null> };

/**
 * Issue 18: listNotifications is reported; a broadcast's pushes per second are targeted on PostgreSQL
 * (≥ 500/s), with the worker's peak RSS beside them.
 */
function notificationTargets(runs: DatabaseRun[]): NotificationTargets {
  const lines: string[] = [];
  const summary: NotificationTargets['summary'] = {};
  for (const database of ['postgres', 'pglite'] as const) {
    const run = runs.find((r) => r.database === database);
    const list = run?.scenarios.find((s) => s.scenario === 'listNotifications');
    if (list !== undefined) {
      lines.push(
        `listNotifications on ${database}: ${list.requestsPerSecond}/s, p50 ${list.latencyP50Ms} ms, p99 ${list.latencyP99Ms} ms, ${list.non2xx} non-2xx`,
      );
      summary[`${database}ListNotificationsPerSecond`] = list.requestsPerSecond;
      summary[`${database}ListNotificationsP99Ms`] = list.latencyP99Ms;
    }
    const round = run?.broadcast;
    if (round !== null && round !== undefined) {
      const met = round.pushesPerSecond >= BROADCAST_TARGET_PUSHES_PER_SECOND;
      lines.push(
        `broadcastPush on ${database}: ${round.distinct} pushes in ${round.seconds} s = ${round.pushesPerSecond}/s${database === 'postgres' ? ` (target ≥ ${BROADCAST_TARGET_PUSHES_PER_SECOND}/s): ${met ? 'met' : 'NOT met'}` : ''}; worker peak RSS ${round.worker.peakRssMb ?? round.worker.sampledPeakRssMb} MB`,
      );
      summary[`${database}BroadcastSubscriptions`] = round.subscriptions;
      summary[`${database}BroadcastPushesPerSecond`] = round.pushesPerSecond;
      summary[`${database}BroadcastSeconds`] = round.seconds;
      summary[`${database}BroadcastWorkerPeakRssMb`] =
        round.worker.peakRssMb ?? round.worker.sampledPeakRssMb;
      if (database === 'postgres') {
        summary.broadcastTargetPushesPerSecond = BROADCAST_TARGET_PUSHES_PER_SECOND;
        summary.broadcastTargetMet = met;
      }
    }
  }
  return { lines, summary };
}

type WebClientTargets = { lines: string[]; summary: Record<string, unknown> | null };

/**
 * Issue 20's targets for the web client: its initial JS ≤ 150 KB gzipped, LCP ≤ 2.5 s on Slow 4G;
 * the time from Pay to the success screen is reported beside them, not targeted.
 */
function webClientTargets(runs: DatabaseRun[]): WebClientTargets {
  if (webClientBuild === null) return { lines: [], summary: null };
  const js = webClientBuild.initialJs;
  const lines = [
    `webClient initial JS: ${js.gzipKb} KB gzipped (${js.files.length} files: entry and module preloads; ${Math.round(js.bytes / 1000)} KB raw) (target ≤ ${js.targetKb} KB): ${js.met ? 'met' : 'NOT met'}; all JS in web/dist: ${js.allJs.gzipKb} KB gzipped in ${js.allJs.files} files`,
  ];
  const browser: Record<string, unknown> = {};
  for (const run of runs) {
    const web = run.webClient;
    if (web === null) continue;
    lines.push(
      `webClient on ${run.database}, /sign-in cold on ${SLOW_4G.name} (median of ${web.load.loads.length}): FCP ${web.load.fcpMedianMs} ms, LCP ${web.load.lcpMedianMs} ms (target ≤ ${web.load.lcpTargetMs} ms): ${web.load.lcpMet ? 'met' : 'NOT met'}; DevTools-adjusted (${web.loadDevtoolsAdjusted.profile.latencyMs} ms latency): LCP ${web.loadDevtoolsAdjusted.lcpMedianMs} ms: ${web.loadDevtoolsAdjusted.lcpMet ? 'met' : 'NOT met'}`,
      `webClient on ${run.database}, Pay → Successful on ${SLOW_4G.name} (median of ${web.pay.payments.length}): ${web.pay.medianMs} ms (no target)`,
    );
    browser[run.database] = {
      fcpMedianMs: web.load.fcpMedianMs,
      lcpMedianMs: web.load.lcpMedianMs,
      lcpTargetMs: web.load.lcpTargetMs,
      lcpMet: web.load.lcpMet,
      devtoolsAdjustedFcpMedianMs: web.loadDevtoolsAdjusted.fcpMedianMs,
      devtoolsAdjustedLcpMedianMs: web.loadDevtoolsAdjusted.lcpMedianMs,
      devtoolsAdjustedLcpMet: web.loadDevtoolsAdjusted.lcpMet,
      payToSuccessMedianMs: web.pay.medianMs,
      payToSuccessMs: web.pay.payments.map((p) => p.ms),
    };
  }
  return {
    lines,
    summary: {
      built: webClientBuild.built,
      buildMs: webClientBuild.buildMs,
      initialJs: js,
      initialJsGzipKb: js.gzipKb,
      initialJsTargetKb: js.targetKb,
      initialJsMet: js.met,
      profile: profileText(SLOW_4G),
      browserSkipped: webBrowserSkipped,
      ...browser,
    },
  };
}

function gitCommit(): string | null {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
  } catch {
    return null;
  }
}

/** Whether the worktree had changes not in `commit` (the figures are then not quite that commit's). */
function gitUncommittedChanges(): boolean | null {
  try {
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repoRoot,
      encoding: 'utf8',
    });
    return status.trim() !== '';
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
  webhookTargets: WebhookTargets['summary'],
  purchaseTargets: PurchaseTargets['summary'],
  savingsTargets: SavingsTargets['summary'],
  notificationTargets: NotificationTargets['summary'],
  transferResults: TransferResults['summary'],
  webClient: WebClientTargets['summary'],
  fastifyAnchor: ScenarioResult | null,
  scaling: ScalingResults | null,
): ReportInput {
  const report = {
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    commit: gitCommit(),
    uncommittedChanges: gitUncommittedChanges(),
    node: process.version,
    machine: {
      cpus: os.cpus().length,
      cpuModel: os.cpus()[0]?.model ?? null,
      memoryMb: Math.round(os.totalmem() / 2 ** 20),
      // Other work on the machine skews every figure; the 1-minute load average tells whether there was any.
      loadAverage1mBefore: loadBefore[0] ?? null,
      loadAverage1mAfter: os.loadavg()[0] ?? null,
    },
    selection: {
      scenarios: [...SCENARIOS],
      allScenarios: ALL_SCENARIOS.split(','),
      durationSeconds: durationOverrideSeconds(),
    },
    settings: {
      connections: CONNECTIONS,
      signedInUsers: SIGNED_IN_USERS,
      walletDurationSeconds: WALLET_DURATION_SECONDS,
      requestOtpDurationSeconds: REQUEST_OTP_DURATION_SECONDS,
      verifyOtpAmountMax: VERIFY_OTP_AMOUNT_MAX,
      signInConcurrency: SIGN_IN_CONCURRENCY,
      signInDurationSeconds: SIGN_IN_DURATION_SECONDS,
      webhookDurationSeconds: WEBHOOK_DURATION_SECONDS,
      webhookDuplicateDurationSeconds: WEBHOOK_DUPLICATE_DURATION_SECONDS,
      webhookUsers: WEBHOOK_USERS,
      webhookIntents: WEBHOOK_INTENTS,
      webhookKnownEvery: WEBHOOK_KNOWN_EVERY,
      transfers: transferSettings,
      ledgerPostings: LEDGER_POSTINGS,
      buyAirtimeClusterShards: CLUSTER_SHARDS,
      ledgerCheck: { entries: LEDGER_CHECK_ENTRIES, newEntries: LEDGER_CHECK_NEW, users: LEDGER_CHECK_USERS },
    },
    notes: [
      'The load generator runs on the same machine as the service and competes for its cores.',
      'requestOtp includes the service calling the sandbox SMS gateway over HTTP (same process).',
      'full sign-in: req/s is completed sign-ins per second; latency is the whole sign-in.',
      'peak RSS is VmHWM of the service process, reset before each scenario where Linux allows.',
      'webhook: every body distinct and signed before the run; 1 in webhookKnownEvery names a top-up intent (credits a wallet) while they last, the rest unknown references.',
      'webhook dup: re-deliveries of bodies stored by the webhook scenario (the de-duplication path).',
      'buyAirtime: Tier-1 buyers with a PIN, one per connection, ₦100 MTN airtime the sandbox delivers at once; acceptedToSuccess is createdAt → updatedAt of each purchase read back through the API.',
      'createSavingsLock: 1,000 funded users, the user changing on every request (round-robin), ₦100 for 365 days each.',
      'transferToUser: Tier-2 senders (made through the API: profile, Tier 1, Tier 2 by NIN, PIN, a funded wallet), the sender changing on every request (round-robin) and the Tier-1 recipient with it, ₦100 each, every request with its own Idempotency-Key; each transfer is one posting locking both wallets, and publishes the recipient’s wallet.transfer_received event (a job the service’s own workers run during the load).',
      'savingsMaturity: in the bench process on the service database after the service stopped; locks seeded in bulk (SQL and postBatch), all due at one instant; req/s is locks matured per second, p50/p99 the batch transaction; runs.maturity has each round with its per-statement profile.',
      'scheduledRuns: in the bench process on the service database after the service stopped, with the app listening (the purchases reach the sandbox VTpass over HTTP); 1,000 schedules seeded in bulk over 100 Tier-1 users with funded wallets, all due at one instant; req/s is runs delivered (purchase success) per second from the first claim; runs.scheduledRuns has each round.',
      'reconciliation: in the bench process on the service database after the service stopped, with the app listening; the sandbox clock a week ahead, so the day holds only its own top-ups: created through createTopupIntent over HTTP, paid through the sandbox checkout’s Pay over HTTP, credited by the sandbox’s webhooks; one payments run from adminRunReconciliation over HTTP through its job (fetched, run, completed as a worker does) to adminGetReconciliation reading it done; runs.reconciliation has the counts, the provider pages and the phases.',
      'listNotifications: 50 users with 200 inbox entries each (50 unread), written in bulk before the service started (so its startup skips the migrations), one user per connection; limit 20.',
      'webClient: initialJs is the entry <script type="module"> of web/dist/index.html and its <link rel="modulepreload">s, each gzipped at level 9 (1 KB = 1,000 bytes); allJs every .js in web/dist. In headless Chromium (playwright-core, 360×800 phone) throttled per page through DevTools to Lighthouse’s Slow 4G (150 ms latency per request, 1,638.4 kbit/s down, 675 kbit/s up, CPU 4×): /sign-in loaded cold (a new context each: no cache, no service worker), FCP and LCP from the buffered paint and largest-contentful-paint entries once the network is idle, median of 3; the same with DevTools’ adjusted latency (562.5 ms) and throughput (1,474.56 kbit/s) for context. Pay: one Tier-1 user signed in through the API (refresh token in localStorage), 5 purchases of ₦100 MTN airtime the sandbox delivers at once through /buy/airtime in one context, from the Pay click event to the frame after the status read Successful, on the page’s clock; the service is idle (this runs before the load scenarios).',
      'scaling (issue 43, PostgreSQL only, each on scratch databases of its own): ledgerPostings K=1 and K=8 is bench/ledger-postings.ts in the bench process (postBatch with LEDGER_SHARDS=K, req/s postings/s); buyAirtime ×2 K=… is buyAirtime through two API processes (WORKER=0) and one worker (--worker-only) with the standalone sandbox, LEDGER_SHARDS=K, the connections split between the APIs, service CPU summed over the three processes and peak RSS the largest (scaling.buyAirtimeCluster has each process); ledgerCheck is bench/ledger-check.ts (scaling.ledgerCheck).',
      'broadcastPush: after the service stopped, a worker process (context with job workers, push agent trusting the local push service) creates a broadcast and fans it out in pages of 500, 50 pushes at once; the push service runs in the bench process and checks the JWT and payload of the first BENCH_PUSH_CHECK_FIRST pushes only; req/s is pushes/s from creation to the last arrival, p50/p99 per push at the sender, peak RSS the worker’s VmHWM; runs.broadcast has the profile.',
    ],
    runs,
    fastifyAnchor,
    pgbench,
    webhookTargets,
    purchaseTargets,
    savingsTargets,
    notificationTargets,
    transferResults,
    webClient,
    scaling,
    skipped,
  };
  fs.mkdirSync(path.dirname(resultsFile), { recursive: true });
  // Written beside and renamed, so that an interrupted run never leaves half a file.
  const temporary = `${resultsFile}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(report, null, 2)}\n`);
  fs.renameSync(temporary, resultsFile);
  return report;
}

/** The HTTP anchor, measured once per run before the databases' scenarios; null (and why) if it fails. */
async function benchFastifyAnchor(skipped: string[]): Promise<ScenarioResult | null> {
  try {
    const anchor = await fastifyAnchorScenario((child) => {
      liveChildren.add(child);
      child.once('exit', () => liveChildren.delete(child));
    });
    process.stdout.write(
      `anchor: ${anchor.scenario}: ${anchor.requestsPerSecond}/s, p50 ${anchor.latencyP50Ms} ms, p99 ${anchor.latencyP99Ms} ms\n`,
    );
    return anchor;
  } catch (error) {
    skipped.push(`Fastify anchor: ${(error as Error).message.split('\n')[0]}`);
    return null;
  }
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const runs: DatabaseRun[] = [];
  const skipped: string[] = [];
  if (SCENARIOS.has('webClient')) {
    try {
      webClientBuild = await prepareWebClient();
      if (webClientBuild.built)
        process.stdout.write(`webClient: web/dist built in ${webClientBuild.buildMs} ms\n`);
    } catch (error) {
      skipped.push(`webClient: the web client did not build: ${(error as Error).message.split('\n')[0]}`);
    }
    webBrowserSkipped = browserUnavailable();
    if (webBrowserSkipped !== null)
      skipped.push(`webClient in the browser (LCP, Pay → Successful): ${webBrowserSkipped}`);
  }
  const fastifyAnchor = await benchFastifyAnchor(skipped);
  let scaling: ScalingResults | null = null;
  // The scaling scenarios alone start what they need themselves: no service on either database.
  if (SERVICE_SCENARIOS_SELECTED) {
    if (PGLITE_ENABLED) runs.push(await benchPglite());
    else skipped.push('pglite: BENCH_PGLITE=0');
  }
  if (!POSTGRES_ENABLED) skipped.push('postgres: BENCH_POSTGRES=0');
  else if (!(await reachable(POSTGRES_ADMIN_URL))) {
    skipped.push(`postgres: not reachable at ${POSTGRES_ADMIN_URL}`);
  } else {
    if (SERVICE_SCENARIOS_SELECTED) runs.push(await benchPostgres());
    // Right after the direct run, so that both buyAirtime rows meet the machine in the same state;
    // only buyAirtime runs through PgBouncer.
    if (SCENARIOS.has('buyAirtime')) {
      if (!PGBOUNCER_ENABLED) skipped.push('pgbouncer: BENCH_PGBOUNCER=0');
      else if (!(await reachable(viaPgbouncer(POSTGRES_ADMIN_URL))))
        skipped.push(
          `pgbouncer: nothing answers at ${PGBOUNCER_URL} (bash .ci/pgbouncer starts PgBouncer there)`,
        );
      else runs.push(await benchThroughPgbouncer());
    }
    if (SCALING_SCENARIOS.some((s) => SCENARIOS.has(s))) {
      const bench = await benchScaling();
      runs.push(bench.run);
      scaling = bench.scaling;
    }
  }
  let pgbench: PgbenchResult | null = null;
  if (runs.some((r) => r.database === 'postgres' || r.database === 'scaling')) {
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
  const targets = webhookTargets(runs, pgbench);
  for (const line of targets.lines) process.stdout.write(`${line}\n`);
  const purchases = purchaseTargets(runs, pgbench);
  for (const line of purchases.lines) process.stdout.write(`${line}\n`);
  const savings = savingsTargets(runs);
  for (const line of savings.lines) process.stdout.write(`${line}\n`);
  const notifications = notificationTargets(runs);
  for (const line of notifications.lines) process.stdout.write(`${line}\n`);
  const transfers = transferResults(runs, pgbench);
  for (const line of transfers.lines) process.stdout.write(`${line}\n`);
  const web = webClientTargets(runs);
  for (const line of web.lines) process.stdout.write(`${line}\n`);
  for (const run of runs) process.stdout.write(`${run.database}: service ready in ${run.startupMs} ms\n`);
  process.stdout.write(
    `load average (1 min) before/after: ${loadBefore[0]?.toFixed(2)} / ${os.loadavg()[0]?.toFixed(2)} on ${os.cpus().length} cpus\n`,
  );
  const report = writeResults(
    runs,
    skipped,
    startedAt,
    loadBefore,
    pgbench,
    targets.summary,
    purchases.summary,
    savings.summary,
    notifications.summary,
    transfers.summary,
    web.summary,
    fastifyAnchor,
    scaling,
  );
  writeReport(reportFile, report);
  const failed = runs.flatMap((run) =>
    run.checks.filter((c) => !c.ok).map((c) => `${run.database}: ${c.name}`),
  );
  if (failed.length > 0) {
    process.stderr.write(`bench: checks failed: ${failed.join('; ')}\n`);
    process.exitCode = 1;
  }
  process.stdout.write(
    `results: ${path.relative(process.cwd(), resultsFile)}, ${path.relative(process.cwd(), reportFile)} (${Math.round((Date.now() - startedAt.getTime()) / 1000)} s)\n`,
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
// An exception thrown inside the load generator's callbacks escapes main(): the service must not
// outlive the bench (one did, holding its PostgreSQL database, after such a crash).
process.on('exit', killChildren);

try {
  await main();
  clearTimeout(watchdog);
} catch (error) {
  killChildren();
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
