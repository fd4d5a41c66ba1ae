import type { Kysely, Transaction } from 'kysely';
import {
  type Job as FetchedJob,
  fromKysely,
  fromPglite,
  type JobResult,
  PgBoss,
  type SendOptions,
  type WorkOptions,
} from 'pg-boss';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';
import type { Job, JobData, JobInput } from './job.ts';

// pg-boss on the same database as the data, so that a job can be enqueued in the very transaction
// that moves the money (fromKysely(trx)): the job exists exactly when the change committed.

export type JobDefinition<Schema extends z.ZodType = z.ZodType> = {
  /** The declared job (jobs/job.ts): its queue and the schema its payloads are parsed with. */
  job: Job<Schema>;
  /** Cron (UTC) for recurring jobs. */
  cron?: string;
  retryLimit: number;
  retryDelaySeconds: number;
  expireInSeconds: number;
  /**
   * Jobs a worker fetches at once (default 1), handled concurrently, each completed or failed (and
   * retried) on its own; only idempotent handlers that are safe to run side by side may take more.
   */
  batchSize?: number;
  /** Time-driven work (maturity, expiry, clean-up) that the sandbox clock runs when it moves. */
  runOnClockAdvance?: boolean;
  /**
   * pg-boss's queue policy (default standard): `short` keeps at most one job waiting per singletonKey,
   * for work where a second waiting copy would do the same thing again (the figures' refresh).
   */
  policy?: 'standard' | 'short';
  /**
   * How an idle worker learns of a new job (decision 0036). `notify` (the default): pg-boss's
   * LISTEN/NOTIFY wakes it when a job is created, and it polls every 30 s only as a backstop. `poll`:
   * it asks every 0.5 s, for queues enqueued in the money's own transactions (a purchase's dispatch,
   * the domain events of a settlement), whose commits a NOTIFY would serialise on PostgreSQL's one
   * notification lock.
   */
  wake?: 'notify' | 'poll';
  // Methods, not function properties: a module's list holds definitions of different payloads, and
  // the worker hands each handler only what its own schema parsed.
  handler(data: JobData<Schema>): Promise<void>;
  /**
   * The jobs of one fetch at once, in place of `handler` one by one (which still serves runNow): for
   * work that is cheaper as one transaction over many jobs' data (the inbox of a burst of purchases).
   * A failure fails (and retries) every job of the fetch that reached it.
   */
  batchHandler?(data: JobData<Schema>[]): Promise<void>;
};

/**
 * A module's definition of one of its declared jobs (`jobs: [jobDefinition(vtuDispatchJob, {...})]`):
 * the handler's parameter is typed by the job's schema.
 */
export function jobDefinition<Schema extends z.ZodType>(
  job: Job<Schema>,
  definition: Omit<JobDefinition<Schema>, 'job'>,
): JobDefinition<Schema> {
  return { job, ...definition };
}

/** runNow's payload: optional where the schema takes an empty object (work that carries none). */
type RunNowData<Schema extends z.ZodType> =
  Record<string, never> extends JobInput<Schema> ? [data?: JobInput<Schema>] : [data: JobInput<Schema>];

export type JobQueue = {
  boss: PgBoss;
  /**
   * Enqueues one job, typed by its declaration; not parsed here (the type holds it, and the purchase
   * path enqueues on every acceptance): the worker parses it.
   */
  send<Schema extends z.ZodType>(
    job: Job<Schema>,
    data: JobInput<Schema> & object,
    options?: { db?: Kysely<DB> | Transaction<DB>; singletonKey?: string; startAfter?: Date },
  ): Promise<string | null>;
  /** Enqueues many jobs with one statement, in the caller's transaction (group commit). */
  insert<Schema extends z.ZodType>(
    job: Job<Schema>,
    jobs: Array<{ data: JobInput<Schema> & object }>,
    options: { db: Kysely<DB> | Transaction<DB> },
  ): Promise<void>;
  /**
   * Runs the job's handler once now, on this payload parsed as a worker parses it (sandbox clock,
   * adminReconcile-style triggers, tests).
   */
  runNow<Schema extends z.ZodType>(job: Job<Schema>, ...data: RunNowData<Schema>): Promise<void>;
  /** Runs every time-driven job once, in declaration order (POST /__sandbox/clock). */
  runClockDrivenJobs(): Promise<void>;
  /**
   * Registers the jobs of every module, once, before anything is enqueued: the queue exists before
   * the modules (they enqueue through it), and their jobs are known only once they are built.
   */
  define(definitions: readonly JobDefinition[]): Promise<void>;
  startWorkers(): Promise<void>;
  stop(): Promise<void>;
  /**
   * Every queue's jobs by state, as pg-boss last counted them (getQueues: its queue table, refreshed
   * by the monitor of a process running workers, so up to its interval old): for /metrics.
   */
  queueCounts(): Promise<QueueCounts[]>;
};

export type QueueCounts = {
  name: string;
  /** Waiting to run, the deferred (startAfter, retry backoff) among them. */
  queued: number;
  deferred: number;
  active: number;
  /** Failed for good (retries spent) and still kept by the queue's retention: recent failures. */
  failed: number;
};

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** How often an idle worker asks for new jobs of a `poll` queue, as before LISTEN/NOTIFY (decision 0036). */
const pollIntervalSeconds = 0.5;
/**
 * A `notify` queue's backstop poll while the listener is up: a notification missed (a listener
 * reconnecting) is found within it. pg-boss's default, written out (STYLE.md rule 12).
 */
const notifyBackstopSeconds = 30;
/**
 * A cron queue's poll (its backstop's place when the listener is down or absent, behind PgBouncer in
 * transaction pooling): its jobs come once a minute at most, so a few seconds late costs nothing and
 * saves nine polls in ten. The figures' half-minute follow-up, deferred, is found within it.
 */
const cronPollIntervalSeconds = 5;

/**
 * pg-boss on the service's database, not started: it supervises and schedules only where workers
 * run, and its errors and warnings go to the log.
 */
function createBoss(database: Database, options: { logger: Logger; runWorkers: boolean }): PgBoss {
  const common = {
    schema: 'pgboss',
    supervise: options.runWorkers,
    schedule: options.runWorkers,
    migrate: true,
    // Only workers listen (one connection of their own on PostgreSQL); any process's enqueue into a
    // `notify` queue sends the NOTIFY. Off where the connection is not the session's own (decision 0036).
    useListenNotify: options.runWorkers && database.listenNotify,
  };
  const boss =
    database.kind === 'pglite'
      ? new PgBoss({ ...common, db: fromPglite(database.pglite!), backend: 'pglite' })
      : new PgBoss({ ...common, connectionString: database.url!, max: 4 });
  boss.on('error', (error: unknown) => options.logger.error({ err: error }, 'job queue error'));
  // pg-boss's own findings: a slow query, a queue over its size, clock skew, a listener it could not
  // open (then it polls), ...
  boss.on('warning', (warning) =>
    options.logger.warn({ data: warning.data }, `job queue warning: ${warning.message}`),
  );
  return boss;
}

export async function createJobQueue(
  database: Database,
  options: {
    logger: Logger;
    runWorkers: boolean;
    /**
     * Days a completed or failed job is kept before pg-boss's own maintenance deletes it
     * (RETENTION_JOBS_DAYS, decision 0054; pg-boss's default of 7 when not given).
     */
    finishedJobsKeptDays?: number;
    /**
     * Awaited before a worker runs the jobs it fetched: a process following a standalone sandbox's
     * clock reads it first if its last reading is old, so a job a clock move made due sees the move.
     */
    beforeBatch?: () => Promise<void>;
  },
): Promise<JobQueue> {
  const boss = createBoss(database, options);
  await boss.start();

  const definitions: JobDefinition[] = [];
  const byName = new Map<string, JobDefinition>();
  /** The definition of a declared job; one name declared twice is refused, not silently merged. */
  const definitionOf = (job: Job): JobDefinition => {
    const d = byName.get(job.name);
    if (d === undefined) throw new Error(`unknown job queue ${job.name}`);
    if (d.job !== job) throw new Error(`job ${job.name} is declared twice`);
    return d;
  };

  const send: JobQueue['send'] = async (job, data, sendOptions = {}) => {
    definitionOf(job);
    const opts: SendOptions = {};
    if (sendOptions.db !== undefined) opts.db = fromKysely(sendOptions.db);
    if (sendOptions.singletonKey !== undefined) opts.singletonKey = sendOptions.singletonKey;
    if (sendOptions.startAfter !== undefined) opts.startAfter = sendOptions.startAfter;
    return boss.send(job.name, data, opts);
  };

  const insert: JobQueue['insert'] = async (job, jobs, insertOptions) => {
    definitionOf(job);
    if (jobs.length === 0) return;
    await boss.insert(job.name, jobs, { db: fromKysely(insertOptions.db) });
  };

  let workersStarted = false;
  return {
    boss,
    send,
    insert,
    async runNow(job, ...data) {
      const d = definitionOf(job);
      const parsed = d.job.payload.safeParse(data[0] ?? {});
      if (!parsed.success)
        throw new Error(`job ${job.name}: payload does not parse: ${parsed.error.message}`);
      await d.handler(parsed.data);
    },
    async define(moduleJobs) {
      if (definitions.length > 0) throw new Error('the jobs are defined once, by the composition root');
      // Every queue must be in pg-boss's queue cache before any transaction enqueues into it: on
      // PGlite, pg-boss looks an uncached queue up on its own handle, which waits forever behind the
      // open transaction. createQueue evicts the queue from that cache and getQueue does not fill
      // it; a job look-up by id goes through the cache and fills it (pg-boss 12.35).
      for (const d of moduleJobs) {
        if (byName.has(d.job.name)) throw new Error(`job ${d.job.name} is defined twice`);
        definitions.push(d);
        byName.set(d.job.name, d);
        const queue = {
          retryLimit: d.retryLimit,
          retryDelay: d.retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: d.expireInSeconds,
          notify: (d.wake ?? 'notify') === 'notify',
          // pg-boss deletes its finished jobs itself (retention.purge leaves its tables alone): a
          // completed or failed one after deleteAfterSeconds, one never started after retentionSeconds
          // past its start (its default of 14 days, written out).
          deleteAfterSeconds: (options.finishedJobsKeptDays ?? 7) * 86_400,
          retentionSeconds: 14 * 86_400,
        };
        await boss.createQueue(d.job.name, { ...queue, policy: d.policy ?? 'standard' });
        // createQueue leaves a queue that exists as it was: a database made before a change of these
        // options (notify, decision 0036) gets them here.
        await boss.updateQueue(d.job.name, queue);
        await boss.getJobById(d.job.name, NIL_UUID);
      }
    },
    async runClockDrivenJobs() {
      for (const d of definitions) {
        if (d.runOnClockAdvance === true) await d.handler(d.job.payload.parse({}));
      }
    },
    async startWorkers() {
      if (workersStarted) return;
      workersStarted = true;
      for (const d of definitions) {
        const batchSize = d.batchSize ?? 1;
        const workOptions: WorkOptions & { perJobResults: true } = {
          batchSize,
          pollingIntervalSeconds: d.cron !== undefined ? cronPollIntervalSeconds : pollIntervalSeconds,
          notifyPollingIntervalSeconds: notifyBackstopSeconds,
          perJobResults: true,
        };
        let workerId: string | undefined;
        workerId = await boss.work(d.job.name, workOptions, async (jobs) => {
          await options.beforeBatch?.();
          const results = await runFetched(d, jobs, options.logger);
          // A full fetch may have left more behind, and no NOTIFY comes for jobs already there: a
          // `notify` queue fetches again at once rather than after its 30 s backstop.
          if (d.wake !== 'poll' && jobs.length === batchSize && workerId !== undefined)
            boss.notifyWorker(workerId);
          return results;
        });
        if (d.cron !== undefined) await boss.schedule(d.job.name, d.cron, {}, { tz: 'UTC' });
      }
    },
    // graceful: finish the jobs in hand before the connection goes away.
    stop: () => boss.stop({ graceful: true, timeout: 20_000 }),
    async queueCounts() {
      const queues = await boss.getQueues();
      return queues.map((q) => ({
        name: q.name,
        queued: q.queuedCount,
        deferred: q.deferredCount,
        active: q.activeCount,
        failed: q.failedCount,
      }));
    },
  };
}

/**
 * The jobs of one fetch, each parsed by its job's schema, then handled: each job's outcome on its
 * own. A payload that does not parse can never succeed, so it fails for good (pg-boss's `deadletter`
 * outcome skips the retries left; the queues have no dead-letter queue) with one error line, and the
 * handler never sees it.
 */
export async function runFetched(
  d: JobDefinition,
  jobs: ReadonlyArray<FetchedJob<unknown>>,
  logger: Pick<Logger, 'error'>,
): Promise<JobResult[]> {
  const results: JobResult[] = [];
  const parsed: Array<{ id: string; data: unknown }> = [];
  for (const job of jobs) {
    const payload = d.job.payload.safeParse(job.data);
    if (payload.success) {
      parsed.push({ id: job.id, data: payload.data });
      continue;
    }
    const issues = payload.error.issues;
    logger.error(
      { job: d.job.name, jobId: job.id, issues },
      'job payload does not parse: failed, not retried',
    );
    results.push({ id: job.id, status: 'deadletter', output: { message: 'payload does not parse', issues } });
  }
  if (d.batchHandler !== undefined) {
    if (parsed.length === 0) return results;
    const [outcome] = await Promise.allSettled([d.batchHandler(parsed.map((p) => p.data))]);
    for (const { id } of parsed) results.push(resultOf(id, outcome!));
    return results;
  }
  const outcomes = await Promise.allSettled(parsed.map((p) => d.handler(p.data)));
  for (const [i, { id }] of parsed.entries()) results.push(resultOf(id, outcomes[i]!));
  return results;
}

/** A job's result from its handler's: failed (and retried) with the error as pg-boss stores a thrown one. */
function resultOf(id: string, outcome: PromiseSettledResult<void>): JobResult {
  return outcome.status === 'fulfilled'
    ? { id, status: 'completed' }
    : { id, status: 'failed', output: outcome.reason };
}
