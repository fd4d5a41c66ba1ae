import { Agent } from 'node:https';
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { createBroadcast } from '../src/notifications/broadcasts.ts';
import { broadcastPushJob } from '../src/notifications/jobs.ts';
import type { PushSender } from '../src/providers/push/web-push-sender.ts';
import { benchContext, peakRssMb, percentile, resetPeakRss } from './common.ts';

// The worker process of the broadcastPush scenario (bench/notifications.ts forks it): a context on
// the service's database with its job workers started, as `npm run worker` runs them, except that
// its push agent trusts the bench's local push service (the service's own refuses loopback). On
// `go` it creates a broadcast, and its broadcast.push workers fan it out page by page; on `finish`
// it waits for the broadcast's jobs to settle and reports what it measured of itself: CPU, event
// loop, peak RSS, each push's time and each page's from pg-boss's job rows.

export type WorkerStart = {
  type: 'start';
  /** DATA_DIR, DATABASE_URL: the service's database. */
  env: Record<string, string>;
  /** PEM of the push service's certificate. */
  ca: string;
  /** created_by of the broadcast. */
  adminId: string;
};
export type ToWorker = WorkerStart | { type: 'go' } | { type: 'finish' };

export type WorkerReport = {
  broadcastId: string;
  /** From `go` to `finish` (all pushes arrived, by the parent's count). */
  cpuSeconds: number;
  eventLoopUtilization: number;
  /** VmHWM since `go` (null where /proc is not there), and process.memoryUsage.rss() sampled. */
  peakRssMb: number | null;
  sampledPeakRssMb: number;
  rssAtGoMb: number;
  /** TLS connections the push agent opened. */
  sockets: number;
  push: {
    count: number;
    failed: number;
    p50Ms: number;
    p99Ms: number;
    maxMs: number;
    /** Time on this process's thread per push before it goes out: payload encryption and VAPID JWT. */
    syncP50Ms: number;
    syncTotalMs: number;
    maxInFlight: number;
  };
  /** One row per broadcast.push job of this broadcast, oldest first. */
  pages: { state: string; retries: number; waitMs: number | null; runMs: number | null }[];
};
export type FromWorker =
  | { type: 'ready' }
  | { type: 'created'; broadcastId: string }
  | { type: 'report'; report: WorkerReport }
  | { type: 'error'; message: string };

const SETTLE_TIMEOUT_MS = 60_000;
const RSS_SAMPLE_MS = 50;

const send = (message: FromWorker) => process.send?.(message);
const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

const waiting: Array<(message: ToWorker) => void> = [];
const inbox: ToWorker[] = [];
process.on('message', (message: ToWorker) => {
  const next = waiting.shift();
  if (next !== undefined) next(message);
  else inbox.push(message);
});
const receive = (): Promise<ToWorker> =>
  inbox.length > 0 ? Promise.resolve(inbox.shift()!) : new Promise((resolve) => waiting.push(resolve));

async function main(): Promise<void> {
  const start = await receive();
  if (start.type !== 'start') throw new Error(`expected start, got ${start.type}`);
  // As the service's own push agent (src/push/push-agent.ts): keep-alive, 64 sockets at most.
  const agent = new Agent({ ca: start.ca, keepAlive: true, maxSockets: 64 });
  let sockets = 0;
  // Every TLS connection the agent opens is counted: keep-alive should make it about maxSockets.
  const counted = agent as unknown as { createConnection: (...args: unknown[]) => Socket };
  const createConnection = counted.createConnection.bind(agent);
  counted.createConnection = (...args) => {
    sockets += 1;
    return createConnection(...args);
  };
  const ctx = await benchContext(start.env, { worker: true, overrides: { pushAgent: agent } });

  // Each push timed; the job handlers read ctx.push when they run.
  const latencies: number[] = [];
  const syncTimes: number[] = [];
  let failed = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const sender: PushSender = ctx.push;
  ctx.push = {
    publicKey: sender.publicKey,
    async send(subscription, payload, ttlSeconds) {
      const startedAt = performance.now();
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      // web-push encrypts and signs before its first await: that part is on this thread.
      const sending = sender.send(subscription, payload, ttlSeconds);
      syncTimes.push(performance.now() - startedAt);
      try {
        return await sending;
      } catch (error) {
        failed += 1;
        throw error;
      } finally {
        inFlight -= 1;
        latencies.push(performance.now() - startedAt);
      }
    },
  };
  try {
    await ctx.jobs.startWorkers();
    send({ type: 'ready' });
    const go = await receive();
    if (go.type !== 'go') throw new Error(`expected go, got ${go.type}`);

    resetPeakRss(process.pid);
    const rssAtGo = process.memoryUsage.rss();
    let sampledPeak = rssAtGo;
    const sampler = setInterval(() => {
      sampledPeak = Math.max(sampledPeak, process.memoryUsage.rss());
    }, RSS_SAMPLE_MS);
    const cpuAtGo = process.cpuUsage();
    const eluAtGo = performance.eventLoopUtilization();
    const broadcast = await createBroadcast(
      ctx.db,
      ctx.jobs,
      start.adminId,
      { title: 'Bench broadcast', body: 'Maintenance tonight from 1 am to 2 am; payments keep working.' },
      ctx.clock.now(),
    );
    send({ type: 'created', broadcastId: broadcast.id });

    const finish = await receive();
    if (finish.type !== 'finish') throw new Error(`expected finish, got ${finish.type}`);
    const cpu = process.cpuUsage(cpuAtGo);
    const elu = performance.eventLoopUtilization(eluAtGo);
    clearInterval(sampler);
    const peak = peakRssMb(process.pid);

    const pagesOf = () =>
      sql<{
        state: string;
        retry_count: number;
        created_on: Date;
        started_on: Date | null;
        completed_on: Date | null;
      }>`
        select state, retry_count, created_on, started_on, completed_on from pgboss.job
        where name = ${broadcastPushJob.name} and data->>'broadcastId' = ${broadcast.id}
        order by created_on`.execute(ctx.db);
    // The last page may still be running (a failed push makes it retry later): wait for it to settle.
    const deadline = Date.now() + SETTLE_TIMEOUT_MS;
    let pages = await pagesOf();
    while (pages.rows.some((p) => p.state !== 'completed' && p.state !== 'failed') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      pages = await pagesOf();
    }
    const sortedLatencies = latencies.toSorted((a, b) => a - b);
    const sortedSync = syncTimes.toSorted((a, b) => a - b);
    send({
      type: 'report',
      report: {
        broadcastId: broadcast.id,
        cpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 100) / 100,
        eventLoopUtilization: Math.round(elu.utilization * 100) / 100,
        peakRssMb: peak,
        sampledPeakRssMb: mb(sampledPeak),
        rssAtGoMb: mb(rssAtGo),
        sockets,
        push: {
          count: latencies.length,
          failed,
          p50Ms: percentile(sortedLatencies, 50),
          p99Ms: percentile(sortedLatencies, 99),
          maxMs: Math.round(sortedLatencies.at(-1) ?? 0),
          syncP50Ms: percentile(sortedSync, 50),
          syncTotalMs: Math.round(syncTimes.reduce((a, b) => a + b, 0)),
          maxInFlight,
        },
        pages: pages.rows.map((p) => ({
          state: p.state,
          retries: Number(p.retry_count),
          waitMs: p.started_on === null ? null : p.started_on.getTime() - p.created_on.getTime(),
          runMs:
            p.started_on === null || p.completed_on === null
              ? null
              : p.completed_on.getTime() - p.started_on.getTime(),
        })),
      },
    });
  } finally {
    await ctx.close();
    agent.destroy();
  }
}

main().then(
  () => process.disconnect?.(),
  (error: unknown) => {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exitCode = 1;
    process.disconnect?.();
  },
);
