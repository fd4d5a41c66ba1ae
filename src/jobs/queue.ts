import type { Kysely, Transaction } from 'kysely';
import { fromKysely, fromPglite, PgBoss, type SendOptions, type WorkOptions } from 'pg-boss';
import type { Logger } from 'pino';
import type { Database } from '../db/database.ts';
import type { DB } from '../db/schema.ts';

// pg-boss on the same database as the data, so that a job can be enqueued in the very transaction
// that moves the money (fromKysely(trx)): the job exists exactly when the change committed.

export type JobDefinition = {
  name: string;
  /** Cron (UTC) for recurring jobs. */
  cron?: string;
  retryLimit: number;
  retryDelaySeconds: number;
  expireInSeconds: number;
  /**
   * Jobs a worker fetches at once (default 1), handled concurrently; a failure retries the whole
   * batch, so only idempotent handlers that are safe to run side by side may take more than one.
   */
  batchSize?: number;
  /** Time-driven work (maturity, expiry, clean-up) that the sandbox clock runs when it moves. */
  runOnClockAdvance?: boolean;
  handler: (data: unknown) => Promise<void>;
  /**
   * The jobs of one fetch at once, in place of `handler` one by one (which still serves runNow): for
   * work that is cheaper as one transaction over many jobs' data (the inbox of a burst of purchases).
   * A failure retries the whole fetch, as with `handler`.
   */
  batchHandler?: (data: unknown[]) => Promise<void>;
};

export type JobQueue = {
  boss: PgBoss;
  send(
    name: string,
    data: object,
    options?: { db?: Kysely<DB> | Transaction<DB>; singletonKey?: string; startAfter?: Date },
  ): Promise<string | null>;
  /** Enqueues many jobs with one statement, in the caller's transaction (group commit). */
  insert(
    name: string,
    jobs: Array<{ data: object }>,
    options: { db: Kysely<DB> | Transaction<DB> },
  ): Promise<void>;
  /** Runs the handler of every job definition once now (sandbox clock, adminReconcile-style triggers). */
  runNow(name: string, data?: unknown): Promise<void>;
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

export async function createJobQueue(
  database: Database,
  options: {
    logger: Logger;
    runWorkers: boolean;
    /**
     * Awaited before a worker runs the jobs it fetched: a process following a standalone sandbox's
     * clock reads it first if its last reading is old, so a job a clock move made due sees the move.
     */
    beforeBatch?: () => Promise<void>;
  },
): Promise<JobQueue> {
  const common = {
    schema: 'pgboss',
    supervise: options.runWorkers,
    schedule: options.runWorkers,
    migrate: true,
  };
  const boss =
    database.kind === 'pglite'
      ? new PgBoss({ ...common, db: fromPglite(database.pglite!), backend: 'pglite' })
      : new PgBoss({ ...common, connectionString: database.url!, max: 4 });
  boss.on('error', (error: unknown) => options.logger.error({ err: error }, 'job queue error'));
  await boss.start();

  const definitions: JobDefinition[] = [];
  const byName = new Map<string, JobDefinition>();

  const send: JobQueue['send'] = async (name, data, sendOptions = {}) => {
    if (!byName.has(name)) throw new Error(`unknown job queue ${name}`);
    const opts: SendOptions = {};
    if (sendOptions.db !== undefined) opts.db = fromKysely(sendOptions.db);
    if (sendOptions.singletonKey !== undefined) opts.singletonKey = sendOptions.singletonKey;
    if (sendOptions.startAfter !== undefined) opts.startAfter = sendOptions.startAfter;
    return boss.send(name, data, opts);
  };

  const insert: JobQueue['insert'] = async (name, jobs, insertOptions) => {
    if (!byName.has(name)) throw new Error(`unknown job queue ${name}`);
    if (jobs.length === 0) return;
    await boss.insert(name, jobs, { db: fromKysely(insertOptions.db) });
  };

  let workersStarted = false;
  return {
    boss,
    send,
    insert,
    async runNow(name, data) {
      const d = byName.get(name);
      if (d === undefined) throw new Error(`unknown job queue ${name}`);
      await d.handler(data ?? {});
    },
    async define(moduleJobs) {
      if (definitions.length > 0) throw new Error('the jobs are defined once, by the composition root');
      // Every queue must be in pg-boss's queue cache before any transaction enqueues into it: on
      // PGlite, pg-boss looks an uncached queue up on its own handle, which waits forever behind the
      // open transaction. createQueue evicts the queue from that cache and getQueue does not fill
      // it; a job look-up by id goes through the cache and fills it (pg-boss 12.35).
      for (const d of moduleJobs) {
        if (byName.has(d.name)) throw new Error(`job ${d.name} is defined twice`);
        definitions.push(d);
        byName.set(d.name, d);
        await boss.createQueue(d.name, {
          retryLimit: d.retryLimit,
          retryDelay: d.retryDelaySeconds,
          retryBackoff: true,
          expireInSeconds: d.expireInSeconds,
        });
        await boss.getJobById(d.name, NIL_UUID);
      }
    },
    async runClockDrivenJobs() {
      for (const d of definitions) if (d.runOnClockAdvance === true) await d.handler({});
    },
    async startWorkers() {
      if (workersStarted) return;
      workersStarted = true;
      for (const d of definitions) {
        const workOptions: WorkOptions = {
          batchSize: d.batchSize ?? 1,
          pollingIntervalSeconds: 0.5,
        };
        await boss.work(d.name, workOptions, async (jobs) => {
          await options.beforeBatch?.();
          if (d.batchHandler !== undefined) return d.batchHandler(jobs.map((job) => job.data));
          const results = await Promise.allSettled(jobs.map((job) => d.handler(job.data)));
          const failed = results.find((r) => r.status === 'rejected');
          if (failed !== undefined) throw failed.reason;
        });
        if (d.cron !== undefined) await boss.schedule(d.name, d.cron, {}, { tz: 'UTC' });
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
