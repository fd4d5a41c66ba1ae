import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from '../../test/helpers/free-port.ts';
import { type Check, nextPhone } from '../common.ts';
import { startBalancer } from './balancer.ts';
import {
  actualEnds,
  adminLedgerCheck,
  finalPurchases,
  ledgerCheckCli,
  outcomesCheck,
  refundsSqlCheck,
  topupsCheck,
  walletsCheck,
} from './checks.ts';
import { call, must, type Session, sandboxPost, signIn, soakClient } from './client.ts';
import type { FaultReport } from './faults.ts';
import { limitsCheck, serviceLagosDay, soakLimitsText } from './limits.ts';
import { newModel } from './model.ts';
import { type Cluster, startCluster } from './peak-cluster.ts';
import { killApi, type PeakFaultPlan, restartDatabase, type Window } from './peak-faults.ts';
import { type CalibrationStep, calibrate, closedLoop, type PeakLoad, peakLoad } from './peak-load.ts';
import { type PeakFacts, renderPeakReport, type Sample } from './peak-report.ts';
import { setUpPeople } from './people.ts';
import { quieten } from './quiet.ts';
import { PIN, type Soak } from './soak-context.ts';
import { buildTopology, startTopology, type Topology } from './topology.ts';

// `npm run soak -- --peak` (or SOAK_PROFILE=peak), issue 43 item 6: the highest purchase rate this
// machine sustains through two API processes (WORKER=0), ONE worker and the sandbox process, on a
// PostgreSQL cluster of the run's own (peak-cluster.ts) and Redis. Many funded buyers buy airtime in
// a closed loop of C callers (SOAK_PEAK_CONCURRENCY, or found by a short calibration) for
// SOAK_SECONDS (600), while one API process is SIGKILLed and started again and the database is
// restarted. Then the run is brought to rest (quiet.ts) and checked: every purchase the client saw
// accepted is in the database exactly once and no other, the wallets are the soak's reckoning, the
// ledger balances, refunds only for failures. Writes SOAK_REPORT (bench/soak-peak-report.md).

const settings = {
  seconds: Number(process.env.SOAK_SECONDS ?? 600),
  buyers: Number(process.env.SOAK_PEAK_BUYERS ?? 40),
  concurrency:
    process.env.SOAK_PEAK_CONCURRENCY === undefined ? null : Number(process.env.SOAK_PEAK_CONCURRENCY),
  calibrationSeconds: Number(process.env.SOAK_PEAK_CALIBRATION_SECONDS ?? 10),
  redisUrl: process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379',
  keep: process.env.SOAK_KEEP === '1',
};
const PROVIDER_FLOAT_NAIRA = 1_000_000_000;
/** The rate limit per caller, far above what a buyer sends: the peak measures the service, not the limit. */
const RATE_LIMIT_PER_MINUTE = 1_000_000;
const SAMPLE_EVERY_MS = 5_000;
const DATABASE = 'billrail_peak';

/** Purchases settled (no longer processing) and still processing, read past the service. */
async function purchaseCounts(url: string): Promise<{ settled: number; processing: number } | null> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ settled: string; processing: string }>(
      `select count(*) filter (where status <> 'processing') as settled,
              count(*) filter (where status = 'processing') as processing
         from vtu_transactions where direction = 'debit'`,
    );
    const row = rows[0];
    return row === undefined ? null : { settled: Number(row.settled), processing: Number(row.processing) };
  } catch {
    // The database is restarting: no sample this time.
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Every SAMPLE_EVERY_MS until stopped: purchases accepted and settled so far, the load average. */
async function sample(soak: Soak, url: string, startedAt: number, stopped: { value: boolean }) {
  const samples: Sample[] = [];
  const take = async () => {
    const counts = await purchaseCounts(url);
    samples.push({
      atSeconds: (performance.now() - startedAt) / 1000,
      accepted: soak.model.purchases.length,
      settled: counts?.settled ?? null,
      processing: counts?.processing ?? null,
      load1: os.loadavg()[0] as number,
    });
  };
  while (!stopped.value) {
    await take();
    await new Promise((resolve) => setTimeout(resolve, SAMPLE_EVERY_MS));
  }
  return { samples, take };
}

/** The driving time: the closed loop at `concurrency`, the faults at 30% and 60% of it. */
async function drive(
  soak: Soak,
  load: PeakLoad,
  plan: Omit<PeakFaultPlan, 'startedAt'>,
  concurrency: number,
) {
  const startedAt = performance.now();
  const full: PeakFaultPlan = { ...plan, startedAt };
  const stopped = soak.stopped;
  const sampling = sample(soak, plan.databaseUrl, startedAt, stopped);
  const loop = closedLoop(load, concurrency, stopped);
  const at = async (fraction: number) => {
    const wait = startedAt + fraction * settings.seconds * 1000 - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  };
  const faults = (async () => {
    const done: { report: FaultReport; window: Window }[] = [];
    await at(0.3);
    const api = plan.apis.at(-1);
    if (api !== undefined) done.push(await killApi(full, api));
    await at(0.6);
    done.push(await restartDatabase(full));
    return done;
  })();
  // The callers stop when the time is over and the last fault has ended: every fault under load.
  const [done] = await Promise.all([faults, at(1)]).finally(() => {
    stopped.value = true;
  });
  const endedAt = performance.now();
  await loop;
  // The last purchases' answers are in: one more sample, at the driving time's end.
  const sampler = await sampling;
  await sampler.take();
  return { startedAt, endedAt, faults: done, samples: sampler.samples };
}

const DRAIN_DEADLINE_MS = 10 * 60_000;
const DRAIN_CLOCK_SECONDS = 60 * 60;

export type Drain = {
  processingBefore: number | null;
  calls: number;
  ms: number;
  processingAfter: number | null;
};

/**
 * Before the quiet: the purchases left pending at the end (digits 2 and 3) are many more than the
 * requery job's 100 a minute can settle within the quiet's wait. The sandbox clock is moved an hour
 * (every one is then past its provider's pending time) and adminReconcile ("requery now", 100 each)
 * is called until none is processing; how many calls it took is reported.
 */
async function drainProcessing(soak: Soak, url: string): Promise<Drain> {
  const started = performance.now();
  const processingBefore = (await purchaseCounts(url))?.processing ?? null;
  for (let moved = 0; moved < DRAIN_CLOCK_SECONDS; moved += 300)
    await sandboxPost(soak.client, '/__sandbox/clock', { advanceSeconds: 300 });
  let calls = 0;
  let processing = processingBefore;
  while ((processing ?? 1) > 0 && performance.now() - started < DRAIN_DEADLINE_MS) {
    await must(call(soak.client, 'adminReconcile', {}, { session: soak.admin }), 'adminReconcile');
    calls++;
    processing = (await purchaseCounts(url))?.processing ?? null;
  }
  return {
    processingBefore,
    calls,
    ms: Math.round(performance.now() - started),
    processingAfter: processing,
  };
}

async function exactlyOnceCheck(soak: Soak, url: string): Promise<Check> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      `select id from vtu_transactions where direction = 'debit'`,
    );
    const inDatabase = new Set(rows.map((r) => r.id));
    const accepted = soak.model.purchases.map((p) => p.id);
    const acceptedSet = new Set(accepted);
    const missing = accepted.filter((id) => !inDatabase.has(id));
    const unseen = [...inDatabase].filter((id) => !acceptedSet.has(id));
    const twice = accepted.length - acceptedSet.size;
    return {
      name: 'every purchase the client saw accepted is in the database exactly once, and no other purchase is (retries with the same key doubled nothing)',
      ok: missing.length === 0 && unseen.length === 0 && twice === 0,
      detail: `${accepted.length} accepted, ${inDatabase.size} purchases in the database; ${missing.length} missing, ${unseen.length} the client never saw accepted, ${twice} answered twice`,
    };
  } finally {
    await client.end();
  }
}

async function finalChecks(
  soak: Soak,
  topology: Topology,
  repoRoot: string,
  url: string,
  quiet: Awaited<ReturnType<typeof quieten>>,
  firstDay: string,
): Promise<Check[]> {
  const purchases = await finalPurchases(soak);
  const ready = await Promise.all(
    topology.all().map(async (p) => `${p.spec.name} ${(await p.ready()) ? 'ready' : 'NOT READY'}`),
  );
  const refused = [...soak.model.counts].filter(([k]) => k.startsWith('buyAirtime → HTTP'));
  return [
    await exactlyOnceCheck(soak, url),
    await ledgerCheckCli(repoRoot, url),
    await adminLedgerCheck(soak),
    await walletsCheck(soak, purchases),
    ...outcomesCheck(soak, purchases).slice(0, 2),
    await refundsSqlCheck(url),
    await topupsCheck(soak),
    await limitsCheck(soak, actualEnds(purchases), firstDay),
    {
      name: 'no purchase was refused (every buyer funded, no error answered)',
      ok: refused.length === 0,
      detail: refused.map(([k, n]) => `${k}: ${n}`).join(', ') || 'none',
    },
    {
      name: 'no purchase is processing past the requery horizon',
      ok: quiet.processingLeft === 0,
      detail: `${quiet.processingLeft} processing`,
    },
    {
      name: 'every request left without an answer got one when sent again',
      ok: quiet.unresolvedAfter.length === 0,
      detail: quiet.unresolvedAfter.slice(0, 5).join('; ') || 'none left',
    },
    {
      name: 'no driver step failed',
      ok: soak.errors.length === 0,
      detail: soak.errors.slice(0, 5).join('; ') || 'none',
    },
    {
      name: 'every process is ready at the end, by itself',
      ok: ready.every((r) => r.endsWith(' ready')),
      detail: ready.join(', '),
    },
  ];
}

async function createDatabase(cluster: Cluster): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url('postgres') });
  await client.connect();
  try {
    await client.query(`create database ${DATABASE}`);
  } finally {
    await client.end();
  }
}

export async function runPeak(repoRoot: string): Promise<number> {
  const report = process.env.SOAK_REPORT ?? path.join(repoRoot, 'bench', 'soak-peak-report.md');
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-soak-peak-'));
  const adminPhone = nextPhone();
  const facts: PeakFacts = {
    startedAt: new Date().toISOString(),
    command: `SOAK_SECONDS=${settings.seconds} npm run soak -- --peak`,
    machine: `${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? 'unknown'}), ${Math.round(os.totalmem() / 2 ** 30)} GiB; load average at the start ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(', ')}`,
    topology: '',
    database: '',
    buyers: settings.buyers,
    drivingSeconds: settings.seconds,
    calibration: [] as CalibrationStep[],
    concurrency: 0,
    concurrencyFrom: settings.concurrency === null ? 'calibration' : 'SOAK_PEAK_CONCURRENCY',
    window: null,
    samples: [],
    records: [],
    purchases: [],
    faults: [],
    drain: null,
    quiet: null,
    checks: [],
    error: null,
  };
  const cluster = await startCluster();
  const url = cluster.url(DATABASE);
  facts.database = `its own PostgreSQL ${cluster.version} cluster (initdb in ${cluster.dir}; ${cluster.settings}), reached directly (no proxy), and Redis at ${settings.redisUrl}`;
  await createDatabase(cluster);
  const apiPorts = [await freePort(), await freePort()];
  const balancer = await startBalancer(apiPorts.map((port) => `http://127.0.0.1:${port}`));
  const topology = await buildTopology({
    repoRoot,
    logDir,
    dataDir: logDir,
    databaseUrl: url,
    redisUrl: settings.redisUrl,
    adminPhone,
    rateLimitPerMinute: RATE_LIMIT_PER_MINUTE,
    serviceUrl: balancer.url,
    apiPorts,
    workers: 1,
  });
  if (topology.kind !== 'standalone') throw new Error('the peak profile needs the standalone sandbox');
  facts.topology = `2 API processes (WORKER=0), 1 worker (--worker-only), the standalone sandbox; webhooks through a balancer; ${soakLimitsText}; rate limit ${RATE_LIMIT_PER_MINUTE}/min a caller`;
  const apiUrls = topology.apis.map((a) => a.spec.baseUrl as string);
  const soak: Soak = {
    client: soakClient(apiUrls, topology.sandboxUrl),
    model: newModel(),
    serviceUrl: balancer.url,
    admin: undefined as unknown as Session,
    pin: PIN,
    stopped: { value: false },
    errors: [],
    sequence: { next: Math.floor(Date.now() / 1000) * 1000 },
  };
  const load = peakLoad(soak);
  process.stdout.write(`soak --peak: ${facts.topology}; logs in ${logDir}\n`);
  try {
    await startTopology(topology);
    soak.admin = await signIn(soak.client, adminPhone);
    for (const provider of ['bills', 'data', 'social'])
      await sandboxPost(soak.client, `/__sandbox/providers/${provider}/balance`, {
        amount: PROVIDER_FLOAT_NAIRA,
      });
    await setUpPeople(soak, settings.buyers);
    const firstDay = await serviceLagosDay(soak);
    if (settings.concurrency === null) {
      process.stdout.write(`soak --peak: ${settings.buyers} buyers ready; calibrating\n`);
      const calibration = await calibrate(load, settings.calibrationSeconds);
      facts.calibration = calibration.steps;
      facts.concurrency = calibration.chosen;
    } else facts.concurrency = settings.concurrency;
    process.stdout.write(`soak --peak: ${facts.concurrency} callers; driving for ${settings.seconds} s\n`);
    const driven = await drive(
      soak,
      load,
      { soak, cluster, databaseUrl: url, apis: topology.apis, workers: topology.workers },
      facts.concurrency,
    );
    facts.window = { from: driven.startedAt, to: driven.endedAt };
    facts.faults = driven.faults;
    facts.samples = driven.samples;
    process.stdout.write('soak --peak: driving over; draining the pending purchases\n');
    facts.drain = await drainProcessing(soak, url);
    process.stdout.write('soak --peak: bringing the run to rest\n');
    facts.quiet = await quieten(soak);
    facts.checks = await finalChecks(soak, topology, repoRoot, url, facts.quiet, firstDay);
  } catch (error) {
    facts.error = (error as Error).stack ?? String(error);
    for (const p of topology.all())
      process.stderr.write(`--- ${p.spec.name}\n${p.output().split('\n').slice(-15).join('\n')}\n`);
  } finally {
    soak.stopped.value = true;
    facts.records = soak.client.records;
    facts.purchases = load.purchases;
    await Promise.all(topology.all().map((p) => p.stop()));
    await balancer.close();
    await cluster.close(settings.keep);
  }
  facts.loadAtEnd = os.loadavg();
  for (const c of facts.checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
  for (const { report: f } of facts.faults)
    process.stdout.write(`${f.ok ? 'ok  ' : 'FAIL'} fault: ${f.name}: ${f.observations.join(' | ')}\n`);
  fs.writeFileSync(report, renderPeakReport(facts, soak.model));
  process.stdout.write(
    `soak --peak: report in ${report}${settings.keep ? `; cluster kept in ${cluster.dir}, still running` : ''}\n`,
  );
  const failed = facts.checks.filter((c) => !c.ok).length + facts.faults.filter((f) => !f.report.ok).length;
  return facts.error === null && failed === 0 ? 0 : 1;
}
