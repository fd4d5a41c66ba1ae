import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { newId } from '../src/ids.ts';
import type { NotificationMessage } from '../src/notifications/messages.ts';
import { startPushService } from '../test/helpers/push-service.ts';
import {
  benchContext,
  type Check,
  CONNECTIONS,
  fromAutocannon,
  getOperation,
  insertUsers,
  loadSeconds,
  mapConcurrent,
  measured,
  percentile,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  signIn,
} from './common.ts';
import type { FromWorker, ToWorker, WorkerReport } from './push-worker.ts';

// Notifications (issue 18), two scenarios:
//
//   listNotifications  GET listNotifications?limit=20 through the running service, autocannon, 50
//                      connections, INBOX_USERS users (one per connection, round-robin) whose inboxes
//                      hold INBOX_SIZE entries each, a quarter of them unread. The inboxes are written
//                      in bulk before the service starts (on PGlite only one process may open the
//                      database), and their users sign in over the API with their phones.
//   broadcastPush      once the service has stopped: BENCH_BROADCAST_SUBSCRIPTIONS subscriptions
//                      (PostgreSQL 20,000, PGlite 5,000) of BENCH_BROADCAST_USERS users (2,000),
//                      written in bulk, at a local HTTPS push service in this process
//                      (test/helpers/push-service.ts). A worker process (bench/push-worker.ts: a
//                      context with its job workers started, as `npm run worker` runs them, its push
//                      agent trusting the local service's certificate) creates a broadcast; from then
//                      until the push service has received one push per subscription is the figure.
//                      Then every subscription must have had exactly one push, none refused, and
//                      every page job completed. Reported: pushes/s, the worker's peak RSS and CPU, the
//                      time of each push and of each page (from pg-boss's job rows), and this
//                      process's CPU (the push service's). The push service checks the JWT and decrypts
//                      the payload of the first BENCH_PUSH_CHECK_FIRST pushes (default 1,000, at least
//                      1; `all`), and answers the rest by path: on a machine of few cores, checking
//                      every push takes CPU from the sender and the database, which a real push service
//                      does not (on 2 cores, checking all 20,000 took about as much CPU as the worker's
//                      sending, and the rate fell by a third to a half).

const INBOX_USERS = 50;
const INBOX_SIZE = 200;
/** The newest quarter of each inbox is unread. */
const INBOX_UNREAD = 50;
const INBOX_ROWS_PER_STATEMENT = 1_000;
const LIST_DURATION_SECONDS = loadSeconds(10);
/** The operation with its query: a page of 20, the app's first screen. */
const LIST_OPERATION = 'listNotifications?limit=20';

const BROADCAST_SUBSCRIPTIONS = { postgres: 20_000, pglite: 5_000 } as const;
const BROADCAST_USERS = Number(process.env.BENCH_BROADCAST_USERS ?? 2_000);
/** Issue 18: pushes delivered per second on PostgreSQL. */
export const BROADCAST_TARGET_PUSHES_PER_SECOND = 500;
const PUSH_CHECK_FIRST =
  process.env.BENCH_PUSH_CHECK_FIRST === 'all'
    ? Number.POSITIVE_INFINITY
    : Math.max(1, Number(process.env.BENCH_PUSH_CHECK_FIRST ?? 1_000));
const SUBSCRIPTIONS_PER_STATEMENT = 1_000;
const BROADCAST_TIMEOUT_MS = 240_000;
const WORKER_TIMEOUT_MS = 60_000;
const ARRIVAL_POLL_MS = 10;

const workerModule = path.join(path.dirname(fileURLToPath(import.meta.url)), 'push-worker.ts');

// ---------------------------------------------------------------------------------------------
// listNotifications over HTTP

/** The entries of one inbox, oldest first, worded like the event subscribers' messages. */
function inboxOf(userId: string, now: Date): { message: NotificationMessage; at: Date; read: boolean }[] {
  return Array.from({ length: INBOX_SIZE }, (_, i) => {
    const naira = 500 + ((i * 37) % 20_000);
    const reference = `bench_${userId.slice(-8)}_${i}`;
    const message: NotificationMessage =
      i % 3 === 0
        ? {
            userId,
            kind: 'topup_credited',
            title: 'Wallet funded',
            body: `₦${naira.toLocaleString('en-NG')}.00 was added to your wallet.`,
            data: { amount: naira * 100, reference },
            source: `bench:${i}`,
          }
        : i % 3 === 1
          ? {
              userId,
              kind: 'purchase_succeeded',
              title: 'Airtime delivered',
              body: `₦${naira.toLocaleString('en-NG')}.00 MTN airtime to 0803 555 0123 was delivered.`,
              data: { amount: naira * 100, reference, service: 'airtime' },
              source: `bench:${i}`,
            }
          : {
              userId,
              kind: 'lock_created',
              title: 'Savings locked',
              body: `₦${naira.toLocaleString('en-NG')}.00 is locked for 30 days.`,
              data: { amount: naira * 100, lockId: reference },
              source: `bench:${i}`,
            };
    return {
      message,
      at: new Date(now.getTime() - (INBOX_SIZE - i) * 60_000),
      read: i < INBOX_SIZE - INBOX_UNREAD,
    };
  });
}

/**
 * Before the service starts, on its database: INBOX_USERS users with full inboxes, written in bulk.
 * Answers their phones, to sign in with once the service runs.
 */
export async function seedInboxes(env: Record<string, string>): Promise<string[]> {
  const ctx = await benchContext(env);
  try {
    const now = ctx.clock.now();
    const users = await insertUsers(ctx.db, INBOX_USERS, now);
    const rows = users.flatMap((user) =>
      inboxOf(user.id, now).map(({ message, at, read }) => ({
        id: newId(),
        user_id: message.userId,
        kind: message.kind,
        title: message.title,
        body: message.body,
        data: JSON.stringify(message.data),
        source: message.source,
        read_at: read ? new Date(at.getTime() + 30_000) : null,
        created_at: at,
      })),
    );
    for (let from = 0; from < rows.length; from += INBOX_ROWS_PER_STATEMENT) {
      await ctx.db
        .insertInto('notifications')
        .values(rows.slice(from, from + INBOX_ROWS_PER_STATEMENT))
        .execute();
    }
    return users.map((u) => u.phone);
  } finally {
    await ctx.close();
  }
}

type Inbox = { items: { createdAt: string }[]; total: number; unread: number; limit: number };

export async function listNotificationsScenario(
  server: Server,
  database: string,
  phones: string[],
): Promise<{ result: ScenarioResult; checks: Check[] }> {
  const tokens = await mapConcurrent(phones, SETUP_CONCURRENCY, (phone) => signIn(server.baseUrl, phone));
  const read = (token: string) =>
    getOperation(server.baseUrl, LIST_OPERATION, token).then((e) => e.data as Inbox);
  const before = await mapConcurrent(tokens, SETUP_CONCURRENCY, read);
  const whole = before.filter(
    (inbox) =>
      inbox.total === INBOX_SIZE &&
      inbox.unread === INBOX_UNREAD &&
      inbox.items.length === 20 &&
      inbox.items.every((item, i) => i === 0 || item.createdAt <= inbox.items[i - 1]!.createdAt),
  );
  const checks: Check[] = [
    {
      name: 'listNotifications: each inbox as seeded',
      ok: whole.length === tokens.length,
      detail: `${whole.length}/${tokens.length} users see 20 entries newest first, total ${INBOX_SIZE}, unread ${INBOX_UNREAD}`,
    },
  ];

  let nextToken = 0;
  const { value, usage } = await measured(server, () =>
    autocannon({
      url: `${server.baseUrl}/_serverFn/${LIST_OPERATION}`,
      connections: CONNECTIONS,
      duration: LIST_DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      // One signed-in user per connection, handed out round-robin.
      setupClient: (client) => {
        client.setHeaders({ authorization: `Bearer ${tokens[nextToken++ % tokens.length]}` });
      },
    }),
  );
  const result = fromAutocannon(
    database,
    'listNotifications',
    `GET limit 20, ${INBOX_USERS} users × ${INBOX_SIZE} entries, ${CONNECTIONS} conns, ${LIST_DURATION_SECONDS}s`,
    value,
    usage,
  );
  return { result, checks };
}

// ---------------------------------------------------------------------------------------------
// A broadcast pushed to many subscriptions by a worker process

export type BroadcastRound = {
  subscriptions: number;
  users: number;
  /** Pushes the push service checked (JWT, decryption); the rest it answered by path. */
  checkedPushes: number | null;
  seedSeconds: number;
  /** From the broadcast's creation to the arrival of the last subscription's push. */
  seconds: number;
  pushesPerSecond: number;
  /** From the broadcast's creation to the first push's arrival (the worker's polling included). */
  firstPushMs: number | null;
  received: number;
  distinct: number;
  refused: number;
  /** CPU of this process (the push service, mostly) over the run. */
  pushServiceCpuSeconds: number;
  worker: Omit<WorkerReport, 'pages' | 'broadcastId'>;
  pages: {
    count: number;
    completed: number;
    retries: number;
    runP50Ms: number;
    runP99Ms: number;
    runMaxMs: number;
    /** From a page's job being enqueued to a worker starting it. */
    waitP50Ms: number;
    waitMaxMs: number;
  };
  /** Each page's run in ms, oldest first. */
  pageMs: (number | null)[];
};

type WorkerChild = {
  child: ChildProcess;
  next(): Promise<FromWorker>;
  send(message: ToWorker): void;
  output(): string;
};

function startWorker(track: (child: ChildProcess) => void): WorkerChild {
  // BENCH_WORKER_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the pushing process.
  const execArgv = (process.env.BENCH_WORKER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = fork(workerModule, [], { execArgv, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] });
  track(child);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    lines.splice(0, Math.max(0, lines.length - 40));
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const queue: FromWorker[] = [];
  const waiting: Array<{ resolve: (m: FromWorker) => void; reject: (e: Error) => void }> = [];
  child.on('message', (message: FromWorker) => {
    const waiter = waiting.shift();
    if (waiter !== undefined) waiter.resolve(message);
    else queue.push(message);
  });
  child.once('exit', (code) => {
    for (const waiter of waiting.splice(0))
      waiter.reject(new Error(`the push worker exited (code ${code}):\n${lines.join('\n')}`));
  });
  return {
    child,
    output: () => lines.join('\n'),
    send: (message) => child.send(message),
    async next() {
      const message =
        queue.shift() ??
        (await new Promise<FromWorker>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`the push worker said nothing for ${WORKER_TIMEOUT_MS / 1000} s`)),
            WORKER_TIMEOUT_MS,
          );
          waiting.push({
            resolve: (m) => {
              clearTimeout(timer);
              resolve(m);
            },
            reject: (e) => {
              clearTimeout(timer);
              reject(e);
            },
          });
        }));
      if (message.type === 'error') throw new Error(`the push worker failed: ${message.message}`);
      return message;
    },
  };
}

async function expect<T extends FromWorker['type']>(
  worker: WorkerChild,
  type: T,
): Promise<Extract<FromWorker, { type: T }>> {
  const message = await worker.next();
  if (message.type !== type) throw new Error(`the push worker said ${message.type}, not ${type}`);
  return message as Extract<FromWorker, { type: T }>;
}

export async function broadcastPushScenario(
  database: 'pglite' | 'postgres',
  env: Record<string, string>,
  track: (child: ChildProcess) => void,
): Promise<{ result: ScenarioResult; round: BroadcastRound; checks: Check[] }> {
  const count = Number(process.env.BENCH_BROADCAST_SUBSCRIPTIONS ?? BROADCAST_SUBSCRIPTIONS[database]);
  const pushService = await startPushService({ checkFirst: PUSH_CHECK_FIRST });
  try {
    // Users and their subscriptions at the local push service, straight into the database: the
    // API refuses loopback endpoints by design.
    const seedStartedAt = performance.now();
    const subscriptions = Array.from({ length: count }, () => pushService.subscribe());
    const ctx = await benchContext(env);
    let adminId: string;
    try {
      const now = ctx.clock.now();
      const users = await insertUsers(ctx.db, Math.min(BROADCAST_USERS, count), now);
      adminId = users[0]!.id;
      for (let from = 0; from < count; from += SUBSCRIPTIONS_PER_STATEMENT) {
        await ctx.db
          .insertInto('push_subscriptions')
          .values(
            subscriptions.slice(from, from + SUBSCRIPTIONS_PER_STATEMENT).map((s, i) => ({
              ...s,
              user_id: users[(from + i) % users.length]!.id,
              created_at: now,
              updated_at: now,
            })),
          )
          .execute();
      }
    } finally {
      // PGlite: the worker process opens the database next.
      await ctx.close();
    }
    const seedSeconds = (performance.now() - seedStartedAt) / 1000;

    const worker = startWorker(track);
    try {
      worker.send({ type: 'start', env, ca: pushService.ca.toString('utf8'), adminId });
      await expect(worker, 'ready');
      const before = pushService.received.length;
      const cpuAtGo = process.cpuUsage();
      const startedAt = performance.now();
      worker.send({ type: 'go' });
      const { broadcastId } = await expect(worker, 'created');
      let firstAt: number | null = null;
      let lastAt = startedAt;
      let seen = before;
      const deadline = startedAt + BROADCAST_TIMEOUT_MS;
      while (pushService.received.length - before < count && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, ARRIVAL_POLL_MS));
        if (pushService.received.length > seen) {
          seen = pushService.received.length;
          lastAt = performance.now();
          firstAt ??= lastAt;
        }
      }
      const seconds = (lastAt - startedAt) / 1000;
      const cpu = process.cpuUsage(cpuAtGo);
      worker.send({ type: 'finish' });
      const { report } = await expect(worker, 'report');
      await new Promise<void>((resolve) => {
        if (worker.child.exitCode !== null) resolve();
        else worker.child.once('exit', () => resolve());
      });

      const pushes = pushService.received.slice(before);
      const distinct = new Set(pushes.map((p) => p.path)).size;
      const checkedPayload = pushes.find((p) => p.payload !== '');
      const runs = report.pages.map((p) => p.runMs).filter((ms): ms is number => ms !== null);
      const waits = report.pages.map((p) => p.waitMs).filter((ms): ms is number => ms !== null);
      runs.sort((a, b) => a - b);
      waits.sort((a, b) => a - b);
      const { pages, broadcastId: _broadcastId, ...workerFigures } = report;
      const round: BroadcastRound = {
        subscriptions: count,
        users: Math.min(BROADCAST_USERS, count),
        checkedPushes: Number.isFinite(PUSH_CHECK_FIRST) ? Math.min(PUSH_CHECK_FIRST, count) : count,
        seedSeconds: Math.round(seedSeconds * 10) / 10,
        seconds: Math.round(seconds * 100) / 100,
        pushesPerSecond: Math.round(distinct / seconds),
        firstPushMs: firstAt === null ? null : Math.round(firstAt - startedAt),
        received: pushes.length,
        distinct,
        refused: pushService.rejected.length,
        pushServiceCpuSeconds: Math.round(((cpu.user + cpu.system) / 1e6) * 100) / 100,
        worker: workerFigures,
        pages: {
          count: pages.length,
          completed: pages.filter((p) => p.state === 'completed').length,
          retries: pages.reduce((a, p) => a + p.retries, 0),
          runP50Ms: percentile(runs, 50),
          runP99Ms: percentile(runs, 99),
          runMaxMs: runs.at(-1) ?? 0,
          waitP50Ms: percentile(waits, 50),
          waitMaxMs: waits.at(-1) ?? 0,
        },
        pageMs: pages.map((p) => p.runMs),
      };
      const checks: Check[] = [
        {
          name: 'broadcastPush: every subscription pushed exactly once',
          ok: distinct === count && pushes.length === count && round.refused === 0,
          detail: `${pushes.length} pushes received for ${distinct} of ${count} subscriptions, ${round.refused} refused, ${report.push.failed} failed at the sender`,
        },
        {
          name: 'broadcastPush: the checked pushes decrypt to the broadcast',
          ok:
            checkedPayload !== undefined &&
            (JSON.parse(checkedPayload.payload) as { broadcastId?: string }).broadcastId === broadcastId,
          detail: `${round.checkedPushes} pushes had their VAPID JWT verified and payload decrypted`,
        },
        {
          name: 'broadcastPush: every page job completed once',
          ok: round.pages.completed === pages.length && round.pages.retries === 0,
          detail: `${round.pages.completed}/${pages.length} page jobs completed, ${round.pages.retries} retries`,
        },
      ];
      const result: ScenarioResult = {
        database,
        scenario: 'broadcastPush',
        measures: `${count} subscriptions of ${round.users} users at a local push service, pages of 500; req/s is pushes/s, p50/p99 per push; ${round.seconds} s; peak RSS is the worker's`,
        requestsPerSecond: round.pushesPerSecond,
        latencyP50Ms: report.push.p50Ms,
        latencyP99Ms: report.push.p99Ms,
        requests: pushes.length,
        errors: report.push.failed,
        non2xx: round.refused,
        serverPeakRssMb: report.peakRssMb ?? report.sampledPeakRssMb,
      };
      return { result, round, checks };
    } catch (error) {
      throw new Error(`${(error as Error).message}\npush worker output:\n${worker.output()}`);
    } finally {
      if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
  } finally {
    await pushService.close();
  }
}
