import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort } from '../../test/helpers/free-port.ts';
import { type PgProxy, startPgProxy } from '../../test/helpers/pg-proxy.ts';
import { type Check, nextPhone } from '../common.ts';
import { startBalancer } from './balancer.ts';
import {
  actualEnds,
  adminLedgerCheck,
  finalPurchases,
  ledgerCheckCli,
  outcomesCheck,
  readScheduleOutcomes,
  refundsCheck,
  refundsSqlCheck,
  schedulesAndPollCheck,
  topupsCheck,
  walletsCheck,
} from './checks.ts';
import { type Session, sandboxPost, signIn, soakClient } from './client.ts';
import { type FaultReport, runFaults } from './faults.ts';
import { limitsCheck, serviceLagosDay, soakLimitsText } from './limits.ts';
import { takeSnapshot } from './metrics.ts';
import { newModel } from './model.ts';
import { checkinRewardKobo, createPoll, driveMoneyMoves } from './money-moves.ts';
import { driveOrders } from './orders.ts';
import { setUpPeople } from './people.ts';
import { drivePurchases, readCatalogue } from './purchases.ts';
import { type Quiet, quieten } from './quiet.ts';
import { rateLimitCheck } from './rate-limit.ts';
import { type RunFacts, renderReport } from './report.ts';
import { PIN, type Soak } from './soak-context.ts';
import { buildTopology, startTopology, type Topology } from './topology.ts';
import { driveTopups } from './topups.ts';

// `npm run soak [-- --short]`: the service as several processes on PostgreSQL and Redis, driven for
// SOAK_SECONDS by people who sign in, top up, buy, transfer, save, check in, vote, schedule and
// order in bulk, while the soak kills processes, cuts the database and makes the providers fail;
// then brought to rest and checked against the soak's own reckoning. Writes SOAK_REPORT (markdown)
// and exits non-zero when a check fails. README.md "More" describes the settings.

const repoRoot = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));
const short = process.argv.includes('--short');
const settings = {
  seconds: Number(process.env.SOAK_SECONDS ?? (short ? 90 : 600)),
  people: Number(process.env.SOAK_PEOPLE ?? (short ? 8 : 20)),
  buyers: Number(process.env.SOAK_BUYERS ?? 3),
  cutSeconds: Number(process.env.SOAK_CUT_SECONDS ?? 10),
  cuts: (process.env.SOAK_CUTS ?? 'reset,silent')
    .split(',')
    .filter((c): c is 'reset' | 'silent' => c === 'reset' || c === 'silent'),
  rateLimit: Number(process.env.SOAK_RATE_LIMIT ?? 600),
  postgresUrl: process.env.SOAK_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  redisUrl: process.env.SOAK_REDIS_URL ?? 'redis://127.0.0.1:6379',
  report: process.env.SOAK_REPORT ?? path.join(repoRoot, 'bench', 'soak-report.md'),
  keep: process.env.SOAK_KEEP === '1',
};
const PROVIDER_FLOAT_NAIRA = 100_000_000;

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: settings.postgresUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(settings.postgresUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Everything before the clock starts: people, the admin's poll, the providers' float. */
async function prepare(soak: Soak, adminPhone: string) {
  soak.admin = await signIn(soak.client, adminPhone);
  for (const provider of ['bills', 'data', 'social'])
    await sandboxPost(soak.client, `/__sandbox/providers/${provider}/balance`, {
      amount: PROVIDER_FLOAT_NAIRA,
    });
  await setUpPeople(soak, settings.people);
  const someone = soak.model.people[0];
  if (someone === undefined) throw new Error('SOAK_PEOPLE must be at least 2');
  return {
    catalogue: await readCatalogue(soak, someone.session),
    poll: await createPoll(soak),
    reward: await checkinRewardKobo(soak, someone),
    burstCaller: await signIn(soak.client, nextPhone()),
  };
}

async function drive(
  soak: Soak,
  topology: Topology,
  proxy: PgProxy,
  databaseUrl: string,
  prepared: Awaited<ReturnType<typeof prepare>>,
) {
  const startedAt = performance.now();
  const drivers = [
    ...Array.from({ length: settings.buyers }, () => drivePurchases(soak, prepared.catalogue)),
    driveTopups(soak),
    driveMoneyMoves(soak, prepared.poll, prepared.reward),
    driveMoneyMoves(soak, prepared.poll, prepared.reward),
    driveOrders(soak),
  ];
  const faults = runFaults(
    {
      soak,
      proxy,
      databaseUrl,
      apis: topology.apis,
      workers: topology.workers,
      standaloneSandbox: topology.kind === 'standalone',
      cuts: settings.cuts,
      cutSeconds: settings.cutSeconds,
      startedAt,
      metricsTargets: topology.metricsTargets,
    },
    settings.seconds,
  );
  // The drivers stop when the time is over and the last fault has ended: every fault under load.
  const timeOver = new Promise((resolve) => setTimeout(resolve, settings.seconds * 1000));
  const stopping = Promise.allSettled([faults, timeOver]).then(() => {
    soak.stopped.value = true;
  });
  try {
    const [reports] = await Promise.all([faults, Promise.all(drivers), stopping]);
    return reports;
  } finally {
    soak.stopped.value = true;
  }
}

async function finalChecks(
  soak: Soak,
  topology: Topology,
  url: string,
  pollId: string,
  burstCaller: Session,
  quiet: Quiet,
  firstDay: string,
): Promise<Check[]> {
  const purchases = await finalPurchases(soak);
  await readScheduleOutcomes(soak);
  const ready = await Promise.all(
    topology.all().map(async (p) => `${p.spec.name} ${(await p.ready()) ? 'ready' : 'NOT READY'}`),
  );
  return [
    await ledgerCheckCli(repoRoot, url),
    await adminLedgerCheck(soak),
    await walletsCheck(soak, purchases),
    ...outcomesCheck(soak, purchases),
    await refundsCheck(soak, purchases),
    await refundsSqlCheck(url),
    await topupsCheck(soak),
    ...(await schedulesAndPollCheck(soak, pollId)),
    await limitsCheck(soak, actualEnds(purchases), firstDay),
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
    await rateLimitCheck(soak, burstCaller, settings.rateLimit),
  ];
}

async function main(): Promise<number> {
  const name = `soak_${new Date().toISOString().replace(/\D/g, '').slice(0, 14)}_${process.pid}`;
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-soak-'));
  const url = databaseUrl(name);
  const adminPhone = nextPhone();
  const facts: RunFacts = {
    startedAt: new Date().toISOString(),
    topology: '',
    drivingSeconds: settings.seconds,
    database: `PostgreSQL ${name} (through the soak's TCP proxy) and Redis`,
    people: settings.people,
    records: [],
    faults: [],
    quiet: null,
    metricsBefore: null,
    metricsAfter: null,
    checks: [],
    error: null,
  };
  await admin(`create database ${name}`);
  const proxy = await startPgProxy(url);
  const apiPorts = [await freePort(), await freePort()];
  const balancer = await startBalancer(apiPorts.map((port) => `http://127.0.0.1:${port}`));
  const topology = await buildTopology({
    repoRoot,
    logDir,
    dataDir: logDir,
    databaseUrl: proxy.url,
    redisUrl: settings.redisUrl,
    adminPhone,
    rateLimitPerMinute: settings.rateLimit,
    serviceUrl: balancer.url,
    apiPorts,
  });
  facts.topology =
    topology.kind === 'standalone'
      ? '2 API processes (WORKER=0), 2 workers, the standalone sandbox; webhooks through a balancer'
      : 'ONE API process with its workers and the sandbox in process (no src/sandbox/main.ts yet): kills skipped';
  facts.topology += `; ${soakLimitsText}`;
  const apiUrls = topology.apis.map((a) => a.spec.baseUrl as string);
  const soak: Soak = {
    client: soakClient(apiUrls, topology.sandboxUrl),
    model: newModel(),
    serviceUrl: topology.kind === 'standalone' ? balancer.url : (apiUrls[0] as string),
    admin: undefined as unknown as Session,
    pin: PIN,
    stopped: { value: false },
    errors: [],
    sequence: { next: Math.floor(Date.now() / 1000) * 1000 },
  };
  process.stdout.write(`soak: ${facts.topology}; logs in ${logDir}\n`);
  try {
    await startTopology(topology);
    const prepared = await prepare(soak, adminPhone);
    facts.metricsBefore = await takeSnapshot('before', topology.metricsTargets);
    const firstDay = await serviceLagosDay(soak);
    process.stdout.write(`soak: ${settings.people} people ready; driving for ${settings.seconds} s\n`);
    facts.faults = await drive(soak, topology, proxy, url, prepared);
    process.stdout.write('soak: driving over; bringing the run to rest\n');
    facts.quiet = await quieten(soak);
    facts.checks = await finalChecks(
      soak,
      topology,
      url,
      prepared.poll.id,
      prepared.burstCaller,
      facts.quiet,
      firstDay,
    );
    facts.metricsAfter = await takeSnapshot('after', topology.metricsTargets);
  } catch (error) {
    facts.error = (error as Error).stack ?? String(error);
    for (const p of topology.all())
      process.stderr.write(`--- ${p.spec.name}\n${p.output().split('\n').slice(-15).join('\n')}\n`);
  } finally {
    facts.records = soak.client.records;
    await Promise.all(topology.all().map((p) => p.stop()));
    await balancer.close();
    await proxy.close();
    if (!settings.keep) await admin(`drop database if exists ${name} with (force)`);
  }
  fs.writeFileSync(settings.report, renderReport(facts, soak.model));
  const failedFaults: FaultReport[] = facts.faults.filter((f) => !f.ok);
  const failed = facts.checks.filter((c) => !c.ok);
  for (const c of facts.checks) process.stdout.write(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}: ${c.detail}\n`);
  for (const f of facts.faults)
    process.stdout.write(`${f.ok ? 'ok  ' : 'FAIL'} fault: ${f.name}: ${f.observations.join(' | ')}\n`);
  process.stdout.write(
    `soak: report in ${settings.report}${settings.keep ? `; database ${name} kept` : ''}\n`,
  );
  return facts.error === null && failed.length === 0 && failedFaults.length === 0 ? 0 : 1;
}

// `--peak` (or SOAK_PROFILE=peak): the peak profile instead, its own module (peak.ts).
const peak = process.argv.includes('--peak') || process.env.SOAK_PROFILE === 'peak';
process.exitCode = peak ? await (await import('./peak.ts')).runPeak(repoRoot) : await main();
