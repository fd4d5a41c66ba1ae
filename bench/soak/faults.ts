import pg from 'pg';
import type { PgProxy } from '../../test/helpers/pg-proxy.ts';
import { REQUEST_TIMEOUT_SECONDS } from '../common.ts';
import { listAll, type RequestRecord, sandboxPost } from './client.ts';
import { type FaultKind, type MetricsTarget, type Snapshot, takeSnapshot } from './metrics.ts';
import { type ServiceProcess, untilReady } from './processes.ts';
import type { Soak } from './soak-context.ts';

// The faults of the soak (issue 29 item 4), each one at its moment of the driving time, each with
// what it showed: a worker and an API process SIGKILLed and started again (time until ready); the
// database cut away for a while at the TCP proxy every process connects through (what the clients
// saw meanwhile, the worst latency, time until every API process is ready by itself); providers
// timing out then answering 5xx; the payment provider dropping its webhooks. Each one scrapes every
// process's /metrics before it, at its worst moment and after its recovery (report.ts shows the
// series it should move).

export type FaultReport = {
  name: string;
  atSeconds: number;
  ok: boolean;
  observations: string[];
  /** Which series the report shows for it (metrics.ts FAULT_SERIES), over `snapshots`. */
  kind?: FaultKind;
  snapshots?: Snapshot[];
};

export type FaultPlan = {
  soak: Soak;
  proxy: PgProxy;
  /** The soak's database, past the proxy: what the cuts left behind is read there. */
  databaseUrl: string;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  /** Whether the service uses a standalone sandbox (in process, killing an API loses its state). */
  standaloneSandbox: boolean;
  cutSeconds: number;
  /** Which database cuts to make (SOAK_CUTS). */
  cuts: ('reset' | 'silent')[];
  startedAt: number;
  /** Every process serving /metrics (topology.ts metricsTargets). */
  metricsTargets: MetricsTarget[];
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const since = (plan: FaultPlan) => Math.round((performance.now() - plan.startedAt) / 1000);
const snapshot = (plan: FaultPlan, label: string) => takeSnapshot(label, plan.metricsTargets);
/** When a scrape made during a fault starts: once the fault has taken hold. */
const SCRAPE_INTO_FAULT_MS = 1_000;

/**
 * Waits out a fault's window, scraping /metrics during it: started once the fault has taken hold
 * and bounded to end within the window, so that a slow scrape (the money gauges wait on the
 * database and the providers) neither lengthens the fault nor reads figures from after it.
 */
async function scrapeDuring(plan: FaultPlan, label: string, windowMs: number): Promise<Snapshot> {
  const bound = Math.max(500, windowMs - SCRAPE_INTO_FAULT_MS - 500);
  const [during] = await Promise.all([
    sleep(SCRAPE_INTO_FAULT_MS).then(() => takeSnapshot(label, plan.metricsTargets, bound)),
    sleep(windowMs),
  ]);
  return during;
}

/**
 * A scrape begun at the end of a provider fault's phase (`windowMs` after now, less half a second),
 * let run past it (the fault's schedule does not wait for it): the float gauge asks each provider its
 * balance at scrape time, so the scrape lasts as long as a timing-out provider (VTU_TIMEOUT_MS, 20 s).
 * Its figures are still those of the phase's end: prom-client reads the counters when the scrape
 * begins, and the database gauges answer at once.
 */
function scrapeProviderPhaseEnd(plan: FaultPlan, label: string, windowMs: number): Promise<Snapshot> {
  return sleep(Math.max(0, windowMs - 500)).then(() => takeSnapshot(label, plan.metricsTargets, 30_000));
}
/** How long after a provider fault ends purchases are still taken as decided by it (a slow sender). */
const DISPATCH_LAG_MS = 15_000;

async function killAndRestart(plan: FaultPlan, service: ServiceProcess): Promise<FaultReport> {
  const before = await snapshot(plan, 'before');
  const at = since(plan);
  const killedAt = performance.now();
  await service.kill();
  const dead = await snapshot(plan, 'killed');
  const restarted = performance.now();
  // start() returns once the process answers as ready (/readyz, or a worker's started line).
  await service.start();
  const readyMs = Math.round(performance.now() - restarted);
  const after = await snapshot(plan, 'started again');
  const api = plan.apis.indexOf(service);
  const sinceKill = plan.soak.client.records.filter((r) => r.at >= killedAt - 1_000);
  const lost = sinceKill.filter((r) => r.api === api && r.status === 0).length;
  // A request the dead process had begun holds its Idempotency-Key "in progress" until it is stale.
  const held = sinceKill.filter((r) => r.code === 'IDEMPOTENCY_IN_PROGRESS').length;
  return {
    name: `SIGKILL ${service.spec.name}, then start it again`,
    atSeconds: at,
    ok: true,
    kind: 'kill',
    snapshots: [before, dead, after],
    observations: [
      `ready again ${readyMs} ms after it was started again`,
      ...(api >= 0
        ? [
            `${lost} requests to it got no answer (retried on the other API process); ${held} retries since were answered 409 IDEMPOTENCY_IN_PROGRESS (a key the dead process held stays taken until it is stale, 5 minutes of the service's clock: such requests are sent again after the quiet)`,
          ]
        : []),
    ],
  };
}

export function duringCut(records: RequestRecord[], from: number, to: number) {
  const seen = records.filter((r) => r.at >= from && r.at <= to);
  const byStatus = new Map<string, number>();
  for (const r of seen) {
    const key = r.status === 0 ? 'no answer' : `${r.status}${r.code === undefined ? '' : ` ${r.code}`}`;
    byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
  }
  const worst = Math.round(seen.reduce((max, r) => Math.max(max, r.ms), 0));
  const hung = seen.filter((r) => r.status === 0 && r.ms >= REQUEST_TIMEOUT_SECONDS * 1000 - 50).length;
  return { seen: seen.length, byStatus, worst, hung };
}

/** The Idempotency-Keys held now (a request running with them), read past the proxy. */
export async function heldKeys(databaseUrl: string): Promise<Set<string>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(
      `select scope || '/' || key as id from idempotency_keys where state = 'in_progress'`,
    );
    return new Set(rows.map((row) => row.id));
  } finally {
    await client.end();
  }
}
/** How long a key must stay held after the cut's recovery to count as left behind by it. */
const HELD_AFTER_MS = 3_000;

async function cutDatabase(plan: FaultPlan, mode: 'reset' | 'silent'): Promise<FaultReport> {
  const heldBefore = await heldKeys(plan.databaseUrl);
  const before = await snapshot(plan, 'before');
  const at = since(plan);
  const from = performance.now();
  const cut = plan.proxy.cutAll(mode);
  const during = await scrapeDuring(plan, 'during the cut', plan.cutSeconds * 1000);
  cut.restore();
  const restoredAt = performance.now();
  const readyMs = await Promise.all(plan.apis.map((api) => untilReady(api)));
  // Requests sent during the cut may still be waiting for their answer: give them the timeout.
  await sleep(REQUEST_TIMEOUT_SECONDS * 1000);
  const after = await snapshot(plan, 'recovered');
  // A request the cut cut off must give its key back once the database returns: a key still held
  // would refuse the client's retries with 409 until it is stale (5 minutes). Held at the recovery
  // and still a little later, and not before the cut (a killed process's keys wait to go stale).
  const heldAtRecovery = await heldKeys(plan.databaseUrl);
  await sleep(HELD_AFTER_MS);
  const leftHeld = [...(await heldKeys(plan.databaseUrl))].filter(
    (id) => heldAtRecovery.has(id) && !heldBefore.has(id),
  );
  const seen = duringCut(plan.soak.client.records, from, restoredAt);
  const statuses = [...seen.byStatus].map(([s, n]) => `${s}: ${n}`).join(', ');
  const statusesSeen = [...seen.byStatus.keys()];
  const got503 = statusesSeen.some((k) => k.startsWith('503 SERVICE_UNAVAILABLE'));
  // The database's outage is the service's own: a 500 would call it a bug.
  const got500 = statusesSeen.some((k) => k.startsWith('500'));
  return {
    name:
      mode === 'reset'
        ? `database cut for ${plan.cutSeconds} s at the TCP proxy (connections reset, new ones refused)`
        : `database silent for ${plan.cutSeconds} s at the TCP proxy (a partition: nothing passes, nothing is refused)`,
    atSeconds: at,
    ok:
      seen.hung === 0 &&
      seen.worst < REQUEST_TIMEOUT_SECONDS * 1000 &&
      !got500 &&
      (got503 || seen.seen === 0) &&
      leftHeld.length === 0,
    kind: 'database',
    snapshots: [before, during, after],
    observations: [
      `${seen.seen} requests sent during the cut: ${statuses || 'none'}`,
      `worst latency during the cut ${seen.worst} ms (client timeout ${REQUEST_TIMEOUT_SECONDS * 1000} ms); requests that hung to the timeout: ${seen.hung}`,
      `every API process ready (/readyz 200) again ${Math.max(...readyMs)} ms after the database came back`,
      `workers alive after the cut: ${(await Promise.all(plan.workers.map((w) => w.ready()))).every(Boolean)}`,
      `Idempotency-Keys the cut left held (409 to their retries until stale): ${leftHeld.length}`,
    ],
  };
}

/**
 * Which purchases a provider fault may decide: every one still processing when it begins (it may be
 * waiting for its dispatch in a queue the earlier faults lengthened), and, while it lasts, each one
 * accepted (purchases.ts and orders.ts read providerFaultOn).
 */
async function providerDecides(plan: FaultPlan): Promise<number> {
  const processing = new Set<string>();
  for (const person of plan.soak.model.people) {
    const items = await listAll<{ id: string }>(plan.soak.client, 'listMyVtuTransactions', person.session, {
      status: 'processing',
    });
    for (const item of items) processing.add(item.id);
  }
  for (const purchase of plan.soak.model.purchases) {
    if (processing.has(purchase.id)) purchase.expected = null;
  }
  // A schedule made so far may run during the fault (its run is due a minute or two on).
  for (const schedule of plan.soak.model.schedules) schedule.expected = null;
  return processing.size;
}

async function providerFaults(plan: FaultPlan, seconds: number): Promise<FaultReport> {
  const before = await snapshot(plan, 'before');
  const at = since(plan);
  const providers = ['bills', 'data'];
  const set = (mode: string) =>
    Promise.all(
      providers.map((p) => sandboxPost(plan.soak.client, `/__sandbox/providers/${p}/faults`, { mode })),
    );
  const probe = await set('timeout');
  if (probe.some((answer) => answer.status === 404)) {
    return {
      name: 'providers time out, then answer 5xx',
      atSeconds: at,
      ok: true,
      observations: ['skipped: this sandbox has no /__sandbox/providers/<name>/faults control'],
    };
  }
  plan.soak.model.providerFaultOn.value = true;
  const processing = await providerDecides(plan);
  const timingOut = scrapeProviderPhaseEnd(plan, 'timeouts end', (seconds / 2) * 1000);
  await sleep((seconds / 2) * 1000);
  const error = await set('error');
  const failing = scrapeProviderPhaseEnd(plan, '5xx end', (seconds / 2) * 1000);
  await sleep((seconds / 2) * 1000);
  const normal = await set('normal');
  // Purchases accepted up to now may still be dispatched into the fault's last moments.
  await sleep(DISPATCH_LAG_MS);
  plan.soak.model.providerFaultOn.value = false;
  const after = await snapshot(plan, `${DISPATCH_LAG_MS / 1000} s after`);
  const statuses = [probe, error, normal].map((answers) => answers.map((a) => a.status).join('/')).join(', ');
  return {
    name: `providers (${providers.join(', ')}) time out for ${seconds / 2} s, then answer 5xx for ${seconds / 2} s`,
    atSeconds: at,
    ok: [probe, error, normal].every((answers) => answers.every((a) => a.status === 200)),
    kind: 'providers',
    snapshots: [before, await timingOut, await failing, after],
    observations: [
      `fault control answered ${statuses}`,
      `purchases sent meanwhile, and the ${processing} still processing when it began, are decided by the provider: checked as refunded exactly when failed`,
    ],
  };
}

async function dropWebhooks(plan: FaultPlan, seconds: number): Promise<FaultReport> {
  const before = await snapshot(plan, 'before');
  const at = since(plan);
  const dropped = await sandboxPost(plan.soak.client, '/__sandbox/webhooks', { mode: 'drop' });
  const checkoutsBefore = [...plan.soak.model.topups.values()].filter((t) => t.via === 'checkout').length;
  const during = await scrapeDuring(plan, 'dropping', seconds * 1000);
  const delivered = await sandboxPost(plan.soak.client, '/__sandbox/webhooks', { mode: 'deliver' });
  // The inbox drains as the webhooks come again and the sweep and reconciliation run.
  await sleep(seconds * 1000);
  const after = await snapshot(plan, `${seconds} s after`);
  const checkoutsDuring =
    [...plan.soak.model.topups.values()].filter((t) => t.via === 'checkout').length - checkoutsBefore;
  return {
    name: `payment provider drops its webhooks for ${seconds} s`,
    atSeconds: at,
    ok: dropped.status === 200 && delivered.status === 200,
    kind: 'webhooks',
    snapshots: [before, during, after],
    observations: [
      `${checkoutsDuring} checkout payments made while dropped: their credit must come from verifyTopup or reconciliation`,
    ],
  };
}

/**
 * Runs the faults at their moments of the driving time, one after the other (the drivers go on
 * until the last is over, however long the restarts take); resolves with what each showed.
 */
export async function runFaults(plan: FaultPlan, drivingSeconds: number): Promise<FaultReport[]> {
  const reports: FaultReport[] = [];
  const at = async (fraction: number) => {
    const wait = plan.startedAt + fraction * drivingSeconds * 1000 - performance.now();
    if (wait > 0) await sleep(wait);
  };
  const skipped = (name: string, why: string) =>
    reports.push({ name, atSeconds: since(plan), ok: true, observations: [`skipped: ${why}`] });
  await at(0.1);
  const worker = plan.workers[0];
  if (worker !== undefined) reports.push(await killAndRestart(plan, worker));
  else skipped('SIGKILL a worker', 'no worker-only process in this topology');
  await at(0.2);
  const api = plan.apis[plan.apis.length - 1];
  if (plan.standaloneSandbox && api !== undefined && plan.apis.length > 1)
    reports.push(await killAndRestart(plan, api));
  else skipped('SIGKILL an API process', 'the sandbox lives in the only API process here');
  for (const [fraction, mode] of [
    [0.3, 'reset'],
    [0.45, 'silent'],
  ] as const) {
    await at(fraction);
    if (plan.cuts.includes(mode)) reports.push(await cutDatabase(plan, mode));
  }
  await at(0.6);
  reports.push(await providerFaults(plan, 20));
  await at(0.75);
  reports.push(await dropWebhooks(plan, 15));
  return reports;
}
