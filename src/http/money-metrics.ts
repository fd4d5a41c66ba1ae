import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { PaymentInbox } from '../funding/inbox-figures.ts';
import type { QueueCounts } from '../jobs/queue.ts';
import type { LedgerCheckRun } from '../ledger/check-runs.ts';
import type { FloatBalance, ProcessingPurchases } from '../vtu/operator-figures.ts';

// The money's gauges (docs/operations.md): read at each scrape through the owning modules' api (a
// table is read only by its owner), never kept between scrapes. Each read is one indexed statement
// (or one balance call per provider); a read shared by two gauges runs once per scrape. They come
// from the database (or the providers), so every process serves the same values: aggregate them
// with max(), not sum(), across processes.

/** What the gauges read, each through the module that owns it (app.ts builds it from the context). */
export type MoneyReads = {
  clock: Clock;
  floatBalances(): Promise<FloatBalance[]>;
  processingPurchases(): Promise<ProcessingPurchases>;
  paymentInbox(): Promise<PaymentInbox>;
  queueCounts(): Promise<QueueCounts[]>;
  lastLedgerCheck(): Promise<LedgerCheckRun | null>;
  /** Whether the database answers (as /readyz asks it). */
  ready(): Promise<boolean>;
};

/**
 * The longest a scrape waits for one read. A provider that hangs (its float balance) or a database
 * that stopped answering must not hold /metrics past Prometheus's scrape timeout (10 s by default),
 * or the whole scrape is lost, the HTTP and provider error counters with it, exactly when they
 * matter; the read that ran out is told as failed.
 */
const readDeadlineMs = 2_500;

/** The read, or a failure once readDeadlineMs has passed without its answer. */
function withinDeadline<T>(read: () => Promise<T>): () => Promise<T> {
  return () => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${readDeadlineMs} ms`)), readDeadlineMs);
    });
    return Promise.race([read(), deadline]).finally(() => clearTimeout(timer));
  };
}

/** Told of a read that failed: its gauge is left out of that scrape, the rest are served. */
export type ReadFailed = (error: unknown, figure: string) => void;

const inboxBacklogName = 'billrail_payment_inbox_backlog';

export function moneyGaugesRegistered(registry: Registry): boolean {
  return registry.getSingleMetric(inboxBacklogName) !== undefined;
}

/**
 * The read, run once for the calls made while it runs: a scrape starts every gauge's collect at once
 * (prom-client's Registry.metrics), so the gauges of one figure share one statement, and the next
 * scrape reads afresh.
 */
function sharedPerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  const bounded = withinDeadline(read);
  let running: Promise<T> | undefined;
  return () => {
    running ??= bounded().finally(() => {
      running = undefined;
    });
    return running;
  };
}

/**
 * A gauge whose values are set at each scrape by `update`, after `reset` (a provider or queue gone
 * since the last scrape is not kept). A failed read leaves a labelled gauge empty for that scrape and
 * a gauge without labels NaN (prom-client serves such a gauge reset as 0, which an alert would read
 * as all clear: no purchase processing, no webhook waiting), and is told.
 */
function scrapedGauge<L extends string>(
  registry: Registry,
  options: { name: string; help: string; labelNames?: readonly L[] },
  update: (gauge: Gauge<L>) => Promise<void>,
  failed: ReadFailed,
): void {
  new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      this.reset();
      try {
        await update(this);
      } catch (error) {
        this.reset();
        if ((options.labelNames ?? []).length === 0) (this as Gauge).set(Number.NaN);
        failed(error, options.name);
      }
    },
  });
}

export function registerMoneyGauges(registry: Registry, reads: MoneyReads, failed: ReadFailed): void {
  const gauge = <L extends string>(
    options: { name: string; help: string; labelNames?: readonly L[] },
    update: (g: Gauge<L>) => Promise<void>,
  ) => scrapedGauge(registry, options, update, failed);

  const floats = sharedPerScrape(reads.floatBalances);
  gauge(
    {
      name: 'billrail_provider_float_balance_kobo',
      help: "Each VTU provider's float as it reports it now (absent when it could not be read)",
      labelNames: ['provider'],
    },
    async (g) => {
      for (const f of await floats())
        if (f.balanceKobo !== null) g.set({ provider: f.provider }, Number(f.balanceKobo));
    },
  );
  gauge(
    {
      name: 'billrail_provider_float_floor_kobo',
      help: 'The float below which operators are warned (VTU_FLOAT_FLOOR)',
      labelNames: ['provider'],
    },
    async (g) => {
      for (const f of await floats()) g.set({ provider: f.provider }, Number(f.floorKobo));
    },
  );

  const purchases = sharedPerScrape(reads.processingPurchases);
  gauge(
    { name: 'billrail_vtu_purchases_processing', help: 'Purchases still processing (pending or unknown)' },
    async (g) => g.set((await purchases()).processing),
  );
  gauge(
    {
      name: 'billrail_vtu_purchases_stuck',
      help: 'Purchases processing for longer than the stuck-alert window (30 minutes after acceptance)',
    },
    async (g) => g.set((await purchases()).stuck),
  );

  const inbox = sharedPerScrape(reads.paymentInbox);
  gauge({ name: inboxBacklogName, help: 'Stored payment webhooks not processed yet' }, async (g) =>
    g.set((await inbox()).backlog),
  );
  gauge(
    {
      name: 'billrail_payment_inbox_oldest_age_seconds',
      help: 'How long the oldest unprocessed payment webhook has waited (0 when none waits)',
    },
    async (g) => {
      const { oldestReceivedAt } = await inbox();
      const age =
        oldestReceivedAt === null ? 0 : (reads.clock.now().getTime() - oldestReceivedAt.getTime()) / 1000;
      g.set(Math.max(0, age));
    },
  );

  gauge(
    {
      name: 'billrail_job_queue_jobs',
      help: 'Jobs per pg-boss queue and state (queued includes deferred; failed: retries spent, still retained), as its monitor last counted',
      labelNames: ['queue', 'state'],
    },
    async (g) => {
      for (const q of await withinDeadline(reads.queueCounts)()) {
        for (const state of ['queued', 'deferred', 'active', 'failed'] as const) {
          g.set({ queue: q.name, state }, q[state]);
        }
      }
    },
  );

  const ledger = sharedPerScrape(reads.lastLedgerCheck);
  gauge(
    {
      name: 'billrail_ledger_check_ok',
      help: 'The latest ledger check: 1 balanced, 0 imbalances found or never run (then its last run is 0)',
    },
    async (g) => {
      const run = await ledger();
      if (run !== null) g.set(run.ok ? 1 : 0);
    },
  );
  gauge(
    { name: 'billrail_ledger_check_imbalances', help: 'Imbalances the latest ledger check found' },
    async (g) => {
      const run = await ledger();
      if (run !== null) g.set(run.imbalances);
    },
  );
  gauge(
    {
      name: 'billrail_ledger_check_last_run_timestamp_seconds',
      help: 'When the latest ledger check ran (Unix seconds; 0 before the first run)',
    },
    async (g) => {
      const run = await ledger();
      if (run !== null) g.set(run.checkedAt.getTime() / 1000);
    },
  );

  gauge(
    { name: 'billrail_ready', help: '1 when this process reaches its database (as /readyz), else 0' },
    // A database too slow to answer within the deadline is not ready either.
    async (g) => g.set((await withinDeadline(reads.ready)().catch(() => false)) ? 1 : 0),
  );
}
