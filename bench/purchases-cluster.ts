import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import webPush from 'web-push';
import { freePort } from '../test/helpers/free-port.ts';
import { type Check, nextPhone, type ScenarioResult, type Server, signIn } from './common.ts';
import { buyAirtimeScenario, type PurchaseRun } from './purchases.ts';
import { type ScenarioUsage, startUsage } from './usage.ts';

// buyAirtime ×2 (issue 43): the buyAirtime scenario of bench/purchases.ts against TWO API processes
// (WORKER=0) and ONE worker process (--worker-only) on one fresh PostgreSQL database, with the
// standalone sandbox (src/sandbox/main.ts) as every process's outside party, so that the providers'
// float and the sign-in codes are one state rather than one per process. The load generator's 50
// connections are split between the two API processes (autocannon sends connection i to API i mod 2);
// the buyers are made and checked through the first. One round per LEDGER_SHARDS value (K), each on
// a database of its own, so that every round starts from the same state. Reports the rate, p50 and
// p99 of the row as bench/purchases.ts measures them, and each process's peak RSS and CPU.

/** How run.ts starts a process of the bench: its environment on top of the service's, and its readiness. */
export type StartProcess = (
  env: Record<string, string>,
  process: { args: string[]; readyPath: string; portEnv: string },
) => Promise<Server>;

export type ClusterProcessUsage = {
  name: string;
  peakRssMb: number | null;
  sampledPeakRssMb: number | null;
  cpuMs: number | null;
};

export type ClusterRound = {
  /** LEDGER_SHARDS of every process. */
  shards: number;
  apis: number;
  workers: number;
  /** Until every process answered ready, the sandbox first. */
  startupMs: number;
  result: ScenarioResult;
  acceptedToSuccess: PurchaseRun['acceptedToSuccess'];
  processes: ClusterProcessUsage[];
};

const API_PROCESSES = 2;
const SERVICE = { args: ['src/main.ts'], readyPath: '/readyz', portEnv: 'PORT' };
// A worker has no API port: it is ready when its own listener (METRICS_PORT) answers /readyz.
const WORKER = { args: ['src/main.ts', '--worker-only'], readyPath: '/readyz', portEnv: 'METRICS_PORT' };
const SANDBOX = { args: ['src/sandbox/main.ts'], readyPath: '/__sandbox/clock', portEnv: 'PORT' };

/**
 * Every process measured over the same load: the row's CPU is their sum, its RSS the largest one,
 * PostgreSQL's CPU measured once; each process's own figures are pushed to `processes`.
 */
function measureAll(named: { name: string; server: Server }[], processes: ClusterProcessUsage[]) {
  return async <T>(run: () => Promise<T>): Promise<{ value: T; usage: ScenarioUsage }> => {
    const meters = named.map(({ server }, i) =>
      startUsage(server.pid, i === 0 ? server.postgresDatabase : null),
    );
    let each: ScenarioUsage[] = [];
    let value: T;
    try {
      value = await run();
    } finally {
      each = meters.map((meter) => meter.stop());
    }
    processes.push(
      ...each.map((u, i) => ({
        name: named[i]?.name ?? '',
        peakRssMb: u.serverPeakRssMb,
        sampledPeakRssMb: u.serverSampledPeakRssMb,
        cpuMs: u.serviceCpuMs,
      })),
    );
    const known = (values: (number | null)[]) => values.filter((v): v is number => v !== null);
    const cpu = known(each.map((u) => u.serviceCpuMs));
    const peaks = known(each.map((u) => u.serverPeakRssMb));
    const sampled = known(each.map((u) => u.serverSampledPeakRssMb));
    return {
      value,
      usage: {
        serverPeakRssMb: peaks.length > 0 ? Math.max(...peaks) : null,
        serverSampledPeakRssMb: sampled.length > 0 ? Math.max(...sampled) : null,
        serviceCpuMs: cpu.length === each.length ? cpu.reduce((a, b) => a + b, 0) : null,
        postgresCpuMs: each[0]?.postgresCpuMs ?? null,
        postgresDatabaseCpuMs: each[0]?.postgresDatabaseCpuMs ?? null,
      },
    };
  };
}

/**
 * One round at K = `shards` on a fresh database of the server at `adminUrl` (made with
 * `adminQuery`, dropped after): the sandbox, the API processes and the worker started, buyAirtime run
 * through them, everything stopped.
 */
export async function buyAirtimeClusterRound(
  shards: number,
  adminUrl: string,
  adminQuery: (statement: string) => Promise<void>,
  start: StartProcess,
): Promise<{ round: ClusterRound; checks: Check[] }> {
  const name = `billrail_bench_${randomBytes(6).toString('hex')}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'billrail-bench-'));
  await adminQuery(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const started: Server[] = [];
  try {
    const vapid = webPush.generateVAPIDKeys();
    const clockToken = randomBytes(16).toString('hex');
    const apiPorts: number[] = [];
    for (let i = 0; i < API_PROCESSES; i += 1) apiPorts.push(await freePort());
    const admin = nextPhone();
    const startedAt = performance.now();
    // The sandbox calls the service (webhooks, the clock) at the first API process.
    const sandbox = await start(
      {
        SERVICE_URL: `http://127.0.0.1:${apiPorts[0]}`,
        SANDBOX_CLOCK_TOKEN: clockToken,
        VAPID_PUBLIC_KEY: vapid.publicKey,
      },
      SANDBOX,
    );
    started.push(sandbox);
    const service = {
      DATABASE_URL: url.toString(),
      DATA_DIR: dataDir,
      ADMIN_PHONES: admin,
      LEDGER_SHARDS: String(shards),
      SANDBOX_URL: sandbox.baseUrl,
      SANDBOX_CLOCK_TOKEN: clockToken,
      VAPID_PUBLIC_KEY: vapid.publicKey,
      VAPID_PRIVATE_KEY: vapid.privateKey,
    };
    // The first API process alone: it migrates the database.
    const first = await start({ ...service, PORT: String(apiPorts[0]), WORKER: '0' }, SERVICE);
    started.push(first);
    const rest = await Promise.all([
      ...apiPorts.slice(1).map((port) => start({ ...service, PORT: String(port), WORKER: '0' }, SERVICE)),
      start({ ...service, WORKER: '1' }, WORKER),
    ]);
    started.push(...rest);
    const startupMs = Math.round(performance.now() - startedAt);
    const apis = [first, ...rest.slice(0, -1)];
    const worker = rest.at(-1) as Server;
    const adminToken = await signIn(first.baseUrl, admin, sandbox.baseUrl);
    const processes: ClusterProcessUsage[] = [];
    const run = await buyAirtimeScenario(first, 'scaling', adminToken, {
      scenario: `buyAirtime ×${API_PROCESSES} K=${shards}`,
      loadUrls: apis.map((a) => a.baseUrl),
      sandboxUrl: sandbox.baseUrl,
      measure: measureAll(
        [...apis.map((server, i) => ({ name: `api-${i + 1}`, server })), { name: 'worker', server: worker }],
        processes,
      ),
      describe: `, ${API_PROCESSES} API processes (WORKER=0) + 1 worker, LEDGER_SHARDS=${shards}`,
    });
    return {
      round: {
        shards,
        apis: API_PROCESSES,
        workers: 1,
        startupMs,
        result: run.result,
        acceptedToSuccess: run.acceptedToSuccess,
        processes,
      },
      checks: run.checks.map((c) => ({ ...c, name: `buyAirtime ×${API_PROCESSES} K=${shards}: ${c.name}` })),
    };
  } catch (error) {
    const output = started.map((s) => s.output()).join('\n---\n');
    throw new Error(`${(error as Error).message}\nprocesses' output:\n${output}`);
  } finally {
    // The sandbox last: the others may still call it while they stop.
    for (const server of started.toReversed()) await server.stop();
    await adminQuery(`drop database if exists ${name} with (force)`);
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
