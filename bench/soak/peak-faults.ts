import { REQUEST_TIMEOUT_SECONDS } from '../common.ts';
import { duringCut, type FaultReport, heldKeys } from './faults.ts';
import type { Cluster } from './peak-cluster.ts';
import { type ServiceProcess, untilReady } from './processes.ts';
import type { Soak } from './soak-context.ts';

// The peak profile's faults, under the full load: an API process SIGKILLed and started again, and
// the database restarted for real (`pg_ctl restart -m fast` of the profile's own cluster: every
// connection of every process is closed, PostgreSQL is down for the shutdown's checkpoint and the
// start's recovery). Each reports what the clients saw from the fault's start until every API process
// was ready again: requests by answer, the worst latency, and Idempotency-Keys left held.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type PeakFaultPlan = {
  soak: Soak;
  cluster: Cluster;
  /** The soak's database (the cluster's): held keys are read there. */
  databaseUrl: string;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  startedAt: number;
};

/** A fault's window, [from, to] in performance.now(), for the figures outside the faults. */
export type Window = { from: number; to: number };

const since = (plan: PeakFaultPlan) => Math.round((performance.now() - plan.startedAt) / 1000);

function seenText(plan: PeakFaultPlan, from: number, to: number): string[] {
  const seen = duringCut(plan.soak.client.records, from, to);
  const statuses = [...seen.byStatus].map(([s, n]) => `${s}: ${n}`).join(', ');
  return [
    `${seen.seen} requests sent from the fault until every API process was ready again: ${statuses || 'none'}`,
    `worst latency meanwhile ${seen.worst} ms (client timeout ${REQUEST_TIMEOUT_SECONDS * 1000} ms); requests that hung to the timeout: ${seen.hung}`,
  ];
}

export async function killApi(
  plan: PeakFaultPlan,
  service: ServiceProcess,
): Promise<{ report: FaultReport; window: Window }> {
  const at = since(plan);
  const from = performance.now();
  await service.kill();
  const restarted = performance.now();
  await service.start();
  const to = performance.now();
  const api = plan.apis.indexOf(service);
  const records = plan.soak.client.records.filter((r) => r.at >= from - 1_000);
  const lost = records.filter((r) => r.api === api && r.status === 0).length;
  const held = records.filter((r) => r.code === 'IDEMPOTENCY_IN_PROGRESS').length;
  return {
    window: { from, to },
    report: {
      name: `SIGKILL ${service.spec.name}, then start it again`,
      atSeconds: at,
      ok: true,
      observations: [
        `ready again ${Math.round(to - restarted)} ms after it was started again`,
        `${lost} requests to it got no answer (retried with the same key on the other API process); ${held} retries since were answered 409 IDEMPOTENCY_IN_PROGRESS (a key the dead process held stays taken until it is stale: sent again after the quiet)`,
        ...seenText(plan, from, to),
      ],
    },
  };
}

/** How long after the recovery a key must stay held to count as left behind by the restart. */
const HELD_AFTER_MS = 3_000;

export async function restartDatabase(plan: PeakFaultPlan): Promise<{ report: FaultReport; window: Window }> {
  const heldBefore = await heldKeys(plan.databaseUrl);
  const at = since(plan);
  const from = performance.now();
  const restartMs = await plan.cluster.restart();
  const back = performance.now();
  const readyMs = await Promise.all(plan.apis.map((api) => untilReady(api)));
  const to = performance.now();
  // Requests sent while it was down may still be waiting for their answer: give them the timeout.
  await sleep(REQUEST_TIMEOUT_SECONDS * 1000);
  const heldAtRecovery = await heldKeys(plan.databaseUrl);
  await sleep(HELD_AFTER_MS);
  const leftHeld = [...(await heldKeys(plan.databaseUrl))].filter(
    (id) => heldAtRecovery.has(id) && !heldBefore.has(id),
  );
  const seen = duringCut(plan.soak.client.records, from, to);
  const statuses = [...seen.byStatus.keys()];
  // The database's outage is the service's own to answer (503): a 500 would call it a bug.
  const got500 = statusesHave(statuses, '500');
  const workersAlive = (await Promise.all(plan.workers.map((w) => w.ready()))).every(Boolean);
  return {
    window: { from, to },
    report: {
      name: `database restarted (pg_ctl restart -m fast of the profile's own PostgreSQL ${plan.cluster.version})`,
      atSeconds: at,
      ok:
        seen.hung === 0 &&
        seen.worst < REQUEST_TIMEOUT_SECONDS * 1000 &&
        !got500 &&
        leftHeld.length === 0 &&
        workersAlive,
      observations: [
        `pg_ctl restart took ${restartMs} ms (fast shutdown: every connection closed, a checkpoint, then the start)`,
        ...seenText(plan, from, to),
        `every API process ready (/readyz 200) again ${Math.round(to - back)} ms after the database was back (${readyMs.join(', ')} ms each)`,
        `workers alive after the restart: ${workersAlive}`,
        `Idempotency-Keys the restart left held (409 to their retries until stale): ${leftHeld.length}`,
      ],
    },
  };
}

const statusesHave = (statuses: string[], prefix: string) => statuses.some((s) => s.startsWith(prefix));
