import { Gauge, type Registry } from 'prom-client';
import type { Clock } from '../clock.ts';
import type { Figures, StoredFigures } from '../figures/snapshot.ts';
import { withinDeadline } from '../shared/deadline.ts';

// The money's gauges (docs/operations.md), served from the figures' snapshot (src/figures/, decision
// 0028): a job reads the providers' floats and the database's counts every 30 s and stores them in
// one row; a scrape reads that row with one statement and nothing else, so that no scrape, however
// frequent or whoever sends it, calls a provider or counts a table. Every process serves the same
// values: aggregate them with max(), not sum(), across processes. billrail_figures_age_seconds says
// how old they are, so that an alert sees the refresh stop.

/** What the gauges read (app.ts builds it from the context). */
export type MoneyReads = {
  clock: Clock;
  /** The latest snapshot, null before the first refresh (the figures module's api). */
  latestFigures(): Promise<StoredFigures | null>;
};

/**
 * The longest a scrape waits for the snapshot. A database that stopped answering must not hold
 * /metrics past Prometheus's scrape timeout (10 s by default), or the whole scrape is lost, the HTTP
 * and provider error counters with it, exactly when they matter; the read is then told as failed.
 */
const readDeadlineMs = 2_500;

/** Told when a scrape could not read the snapshot: every figure is left out (or NaN) for that scrape. */
export type ReadFailed = (error: unknown, figure: string) => void;

export const figuresAgeName = 'billrail_figures_age_seconds';

export function moneyGaugesRegistered(registry: Registry): boolean {
  return registry.getSingleMetric(figuresAgeName) !== undefined;
}

/**
 * The read, run once for the calls made while it runs: a scrape starts every gauge's collect at once
 * (prom-client's Registry.metrics), so all the gauges share one statement, and the next scrape reads
 * afresh. A failure is told once per scrape.
 */
function sharedPerScrape<T>(read: () => Promise<T>, failed: (error: unknown) => void): () => Promise<T> {
  const bounded = () => withinDeadline(read, readDeadlineMs);
  let running: Promise<T> | undefined;
  return () => {
    running ??= bounded()
      .catch((error: unknown) => {
        failed(error);
        throw error;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}

type Snapshot = () => Promise<StoredFigures | null>;

/**
 * A gauge set at each scrape from one figure of the snapshot, after `reset` (a provider or queue gone
 * since the last refresh is not kept). A figure that is not there (its read failed at the refresh,
 * the snapshot could not be read, or no refresh has run yet) leaves a labelled gauge empty and a
 * gauge without labels NaN: prom-client serves such a gauge reset as 0, which an alert would read as
 * all clear (no purchase processing, no webhook waiting).
 */
function figureGauge<L extends string, T>(
  registry: Registry,
  options: { name: string; help: string; labelNames?: readonly L[] },
  snapshot: Snapshot,
  pick: (figures: Figures) => T | null,
  set: (gauge: Gauge<L>, figure: T) => void,
): void {
  new Gauge<L>({
    name: options.name,
    help: options.help,
    labelNames: options.labelNames ?? [],
    registers: [registry],
    async collect() {
      this.reset();
      const stored = await snapshot().catch(() => null);
      const figure = stored === null ? null : pick(stored.figures);
      if (figure !== null) set(this, figure);
      else if ((options.labelNames ?? []).length === 0) (this as Gauge).set(Number.NaN);
    },
  });
}

/** A gauge of one figure of the snapshot, as registerMoneyGauges makes them (figureGauge). */
type FigureGauge = <L extends string, T>(
  options: { name: string; help: string; labelNames?: readonly L[] },
  pick: (figures: Figures) => T | null,
  set: (g: Gauge<L>, figure: T) => void,
) => void;

export function registerMoneyGauges(registry: Registry, reads: MoneyReads, failed: ReadFailed): void {
  const snapshot = sharedPerScrape(reads.latestFigures, (error) => failed(error, 'operator_figures'));
  const gauge: FigureGauge = (options, pick, set) => figureGauge(registry, options, snapshot, pick, set);
  floatGauges(gauge);
  purchaseAndInboxGauges(gauge, reads.clock);
  queueAndLedgerGauges(gauge);
  reconciliationGauges(gauge);
  snapshotGauges(registry, snapshot, reads.clock);
}

/** The providers' floats and their floors. */
function floatGauges(gauge: FigureGauge): void {
  gauge(
    {
      name: 'billrail_provider_float_balance_kobo',
      help: "Each VTU provider's float as it reported it at the last refresh (absent when it could not be read)",
      labelNames: ['provider'],
    },
    (f) => f.floats,
    (g, floats) => {
      for (const b of floats)
        if (b.balanceKobo !== null) g.set({ provider: b.provider }, Number(b.balanceKobo));
    },
  );
  gauge(
    {
      name: 'billrail_provider_float_floor_kobo',
      help: 'The float below which operators are warned (VTU_FLOAT_FLOOR)',
      labelNames: ['provider'],
    },
    (f) => f.floats,
    (g, floats) => {
      for (const b of floats) g.set({ provider: b.provider }, Number(b.floorKobo));
    },
  );
}

/** The purchases still processing or stuck, and the payment webhooks waiting. */
function purchaseAndInboxGauges(gauge: FigureGauge, clock: Clock): void {
  gauge(
    { name: 'billrail_vtu_purchases_processing', help: 'Purchases still processing (pending or unknown)' },
    (f) => f.purchases,
    (g, purchases) => g.set(purchases.processing),
  );
  gauge(
    {
      name: 'billrail_vtu_purchases_stuck',
      help: 'Purchases processing for longer than the stuck-alert window (30 minutes after acceptance)',
    },
    (f) => f.purchases,
    (g, purchases) => g.set(purchases.stuck),
  );

  gauge(
    { name: 'billrail_payment_inbox_backlog', help: 'Stored payment webhooks not processed yet' },
    (f) => f.inbox,
    (g, inbox) => g.set(inbox.backlog),
  );
  gauge(
    {
      name: 'billrail_payment_inbox_oldest_age_seconds',
      help: 'How long the oldest unprocessed payment webhook has waited (0 when none waits)',
    },
    (f) => f.inbox,
    // Measured now from when it arrived, so that it keeps growing between refreshes.
    (g, { oldestReceivedAt }) => {
      const age = oldestReceivedAt === null ? 0 : (clock.now().getTime() - oldestReceivedAt.getTime()) / 1000;
      g.set(Math.max(0, age));
    },
  );
}

/** The job queues' counts and the latest ledger check. */
function queueAndLedgerGauges(gauge: FigureGauge): void {
  gauge(
    {
      name: 'billrail_job_queue_jobs',
      help: 'Jobs per pg-boss queue and state (queued includes deferred; failed: retries spent, still retained), as its monitor last counted',
      labelNames: ['queue', 'state'],
    },
    (f) => f.queues,
    (g, queues) => {
      for (const q of queues) {
        for (const state of ['queued', 'deferred', 'active', 'failed'] as const) {
          g.set({ queue: q.name, state }, q[state]);
        }
      }
    },
  );

  // A ledger never checked leaves these at 0 (prom-client's reset value): its last run reads as
  // long ago (the not-running alert fires), and not as an imbalance.
  gauge(
    {
      name: 'billrail_ledger_check_ok',
      help: 'The latest ledger check: 1 balanced, 0 imbalances found or never run (then its last run is 0)',
    },
    (f) => f.ledgerCheck,
    (g, { run }) => {
      if (run !== null) g.set(run.ok ? 1 : 0);
    },
  );
  gauge(
    { name: 'billrail_ledger_check_imbalances', help: 'Imbalances the latest ledger check found' },
    (f) => f.ledgerCheck,
    (g, { run }) => {
      if (run !== null) g.set(run.imbalances);
    },
  );
  gauge(
    {
      name: 'billrail_ledger_check_last_run_timestamp_seconds',
      help: 'When the latest ledger check ran (Unix seconds; 0 before the first run)',
    },
    (f) => f.ledgerCheck,
    (g, { run }) => {
      if (run !== null) g.set(run.checkedAt.getTime() / 1000);
    },
  );
}

/** Each source's latest finished reconciliation run with the providers' records (API.md 17.5). */
function reconciliationGauges(gauge: FigureGauge): void {
  gauge(
    {
      name: 'billrail_reconciliation_items',
      help: "Items of each source's latest morning reconciliation run, per bucket: matched, and of the others those not resolved yet (absent before its first run)",
      labelNames: ['source', 'bucket'],
    },
    (f) => f.reconciliation,
    (g, sources) => {
      for (const { source, lastRun } of sources) {
        if (lastRun === null) continue;
        for (const [bucket, count] of Object.entries(lastRun.counts)) g.set({ source, bucket }, count);
      }
    },
  );
  // A source that never finished a run reads 0, as the ledger check does: its last run is long ago.
  gauge(
    {
      name: 'billrail_reconciliation_last_run_timestamp_seconds',
      help: "When each source's latest reconciliation run finished (Unix seconds; 0 before the first)",
      labelNames: ['source'],
    },
    (f) => f.reconciliation,
    (g, sources) => {
      for (const { source, lastRun } of sources) {
        g.set({ source }, lastRun === null ? 0 : lastRun.finishedAt.getTime() / 1000);
      }
    },
  );
}

/** How old the snapshot is, and whether this process could read it at all. */
function snapshotGauges(registry: Registry, snapshot: Snapshot, clock: Clock): void {
  new Gauge({
    name: figuresAgeName,
    help: 'Seconds since the figures above were read by the refresh job (every 30 s): +Inf before the first refresh, NaN when this process could not read them',
    registers: [registry],
    async collect() {
      try {
        const stored = await snapshot();
        this.set(
          stored === null
            ? Number.POSITIVE_INFINITY
            : Math.max(0, (clock.now().getTime() - stored.refreshedAt.getTime()) / 1000),
        );
      } catch {
        this.set(Number.NaN);
      }
    },
  });

  new Gauge({
    name: 'billrail_ready',
    help: '1 when this process reaches its database (its read of the figures answered), else 0',
    registers: [registry],
    // A database too slow to answer within the deadline is not ready either.
    async collect() {
      this.set(
        await snapshot().then(
          () => 1,
          () => 0,
        ),
      );
    },
  });
}
