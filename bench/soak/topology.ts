import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import webPush from 'web-push';
import { freePort } from '../../test/helpers/free-port.ts';
import { SOAK_LIMITS } from './limits.ts';
import type { MetricsTarget } from './metrics.ts';
import { type ServiceProcess, type ServiceSpec, serviceProcess } from './processes.ts';

// The processes of the soak and their environment. Standalone (when src/sandbox/main.ts exists):
// two API processes (WORKER=0), two workers (--worker-only) and the sandbox process, every service
// process on the database through the soak's TCP proxy and on the same Redis, sharing the VAPID
// keys and the sandbox clock token; the sandbox calls the service through the balancer; each worker
// serves /metrics on a METRICS_PORT of its own, so that what the workers did is seen too. Single
// (before the standalone sandbox exists, or SOAK_TOPOLOGY=single): one API process with its
// workers and the sandbox in process.

export type Topology = {
  kind: 'standalone' | 'single';
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  sandbox: ServiceProcess | null;
  sandboxUrl: string;
  /** Every process serving /metrics: the API processes, the workers on their METRICS_PORT. */
  metricsTargets: MetricsTarget[];
  all(): ServiceProcess[];
};

export type TopologyInput = {
  repoRoot: string;
  logDir: string;
  dataDir: string;
  databaseUrl: string;
  redisUrl: string;
  adminPhone: string;
  rateLimitPerMinute: number;
  /** Where the sandbox reaches the service (the balancer); decided before the APIs listen. */
  serviceUrl: string;
  apiPorts: number[];
  /** How many worker-only processes (standalone): 2 unless said (the peak profile runs one). */
  workers?: number;
};

export function standaloneSandboxExists(repoRoot: string): boolean {
  return fs.existsSync(`${repoRoot}/src/sandbox/main.ts`) && process.env.SOAK_TOPOLOGY !== 'single';
}

function serviceEnv(input: TopologyInput, extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  // The soak decides the service's environment; the caller's PATH and HOME stay for node itself.
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG'])
    if (process.env[name] !== undefined) env[name] = process.env[name];
  return {
    ...env,
    NODE_ENV: 'development',
    SANDBOX: '1',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    DATA_DIR: input.dataDir,
    DATABASE_URL: input.databaseUrl,
    REDIS_URL: input.redisUrl,
    ADMIN_PHONES: input.adminPhone,
    RATE_LIMIT_PER_MINUTE: String(input.rateLimitPerMinute),
    // The CBN limits above what the soak's Tier-2 people move (limits.ts).
    ...SOAK_LIMITS,
    ...extra,
  };
}

export async function buildTopology(input: TopologyInput): Promise<Topology> {
  const make = (spec: ServiceSpec) => serviceProcess(spec, input.repoRoot, input.logDir);
  if (!standaloneSandboxExists(input.repoRoot)) {
    const port = input.apiPorts[0] as number;
    const baseUrl = `http://127.0.0.1:${port}`;
    const api = make({
      name: 'api-1',
      kind: 'api',
      args: ['src/main.ts'],
      baseUrl,
      env: serviceEnv(input, { PORT: String(port), WORKER: '1' }),
    });
    return {
      kind: 'single',
      apis: [api],
      workers: [],
      sandbox: null,
      sandboxUrl: baseUrl,
      metricsTargets: [{ name: 'api-1', url: baseUrl }],
      all: () => [api],
    };
  }
  const vapid = webPush.generateVAPIDKeys();
  const sandboxPort = await freePort();
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const shared = {
    SANDBOX_URL: sandboxUrl,
    SANDBOX_CLOCK_TOKEN: randomBytes(16).toString('hex'),
    VAPID_PUBLIC_KEY: vapid.publicKey,
    VAPID_PRIVATE_KEY: vapid.privateKey,
    PUBLIC_BASE_URL: input.serviceUrl,
  };
  const sandbox = make({
    name: 'sandbox',
    kind: 'sandbox',
    args: ['src/sandbox/main.ts'],
    baseUrl: sandboxUrl,
    env: serviceEnv(input, {
      PORT: String(sandboxPort),
      SERVICE_URL: input.serviceUrl,
      SANDBOX_CLOCK_TOKEN: shared.SANDBOX_CLOCK_TOKEN,
      VAPID_PUBLIC_KEY: vapid.publicKey,
    }),
  });
  const apis = input.apiPorts.map((port, i) =>
    make({
      name: `api-${i + 1}`,
      kind: 'api',
      args: ['src/main.ts'],
      baseUrl: `http://127.0.0.1:${port}`,
      env: serviceEnv(input, { ...shared, PORT: String(port), WORKER: '0' }),
    }),
  );
  const workers = await metricsServingWorkers(input, (spec) => make(spec), shared);
  const metricsTargets = [
    ...apis.map((api) => ({ name: api.spec.name, url: api.spec.baseUrl as string })),
    ...workers.map((w) => w.target),
  ];
  return {
    kind: 'standalone',
    apis,
    workers: workers.map((w) => w.process),
    sandbox,
    sandboxUrl,
    metricsTargets,
    all: () => [sandbox, ...apis, ...workers.map((w) => w.process)],
  };
}

/** The worker-only processes (two by default), each serving /metrics on a free METRICS_PORT of its own. */
async function metricsServingWorkers(
  input: TopologyInput,
  make: (spec: ServiceSpec) => ServiceProcess,
  shared: Record<string, string>,
): Promise<{ process: ServiceProcess; target: MetricsTarget }[]> {
  const ports: number[] = [];
  for (let i = 0; i < (input.workers ?? 2); i++) ports.push(await freePort());
  return ports.map((metricsPort, i) => ({
    // baseUrl stays null: a worker is ready by its started line (processes.ts), as without METRICS_PORT.
    process: make({
      name: `worker-${i + 1}`,
      kind: 'worker',
      args: ['src/main.ts', '--worker-only'],
      baseUrl: null,
      env: serviceEnv(input, { ...shared, WORKER: '1', METRICS_PORT: String(metricsPort) }),
    }),
    target: { name: `worker-${i + 1}`, url: `http://127.0.0.1:${metricsPort}` },
  }));
}

/**
 * Starts everything: the sandbox, then one API process alone (it migrates the database and builds
 * the web client once), then the others together.
 */
export async function startTopology(topology: Topology): Promise<void> {
  if (topology.sandbox !== null) await topology.sandbox.start();
  const [first, ...rest] = topology.apis;
  await first?.start();
  await Promise.all([...rest, ...topology.workers].map((p) => p.start()));
}
