import { type Kysely, sql } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import type { FundingApi } from '../funding/module.ts';
import type { QueueCounts } from '../jobs/queue.ts';
import type { LedgerCheckRun } from '../ledger/check-runs.ts';
import type { ReconciliationApi } from '../reconciliation/module.ts';
import { type ReconciliationRunView, reconciliationSources } from '../reconciliation/schemas.ts';
import { withinDeadline } from '../shared/deadline.ts';
import type { VtuApi } from '../vtu/module.ts';

// The figures operators watch (/metrics, docs/operations.md), read by one job every 30 s through the
// owning modules' api and stored as one row (operator_figures), so that a scrape reads that row and
// nothing else: it never calls a provider and never counts a table, however often or by whom it is
// asked (decision 0028). A read that fails is stored as null, and its gauges say so (absent or NaN),
// as they did when the scrape read them itself.

type FloatBalance = Awaited<ReturnType<VtuApi['floatBalances']>>[number];
type ProcessingPurchases = Awaited<ReturnType<VtuApi['processingPurchases']>>;
type PaymentInbox = Awaited<ReturnType<FundingApi['paymentInbox']>>;

/** A source's latest finished reconciliation run, or null when none has finished yet. */
export type ReconciliationFigure = {
  source: string;
  lastRun: { finishedAt: Date; counts: ReconciliationRunView['counts'] } | null;
};

/** What the refresh reads, each through the module that owns it (context.ts gives them). */
export type FigureReads = {
  floatBalances: VtuApi['floatBalances'];
  processingPurchases: VtuApi['processingPurchases'];
  paymentInbox: FundingApi['paymentInbox'];
  queueCounts(): Promise<QueueCounts[]>;
  lastLedgerCheck(): Promise<LedgerCheckRun | null>;
  latestRuns: ReconciliationApi['latestRuns'];
};

/** One refresh's figures; null where the read failed or ran out of time. */
export type Figures = {
  floats: FloatBalance[] | null;
  purchases: ProcessingPurchases | null;
  inbox: PaymentInbox | null;
  queues: QueueCounts[] | null;
  /** `run` is null when the ledger was never checked (not a failure: its gauges read 0). */
  ledgerCheck: { run: LedgerCheckRun | null } | null;
  /** Every source, each with its latest finished run (null when none finished: its gauge reads 0). */
  reconciliation: ReconciliationFigure[] | null;
};

export type StoredFigures = { refreshedAt: Date; figures: Figures };

/**
 * The longest the refresh waits for one read. A provider that hangs on its balance (its adapter has
 * its own timeout, VTU_TIMEOUT_MS, which this does not trust) must not hold the other figures back
 * past the next refresh; the read that ran out is stored as failed.
 */
export const readTimeoutMs = 10_000;

/** Told of a read that failed: its figure is stored as null, the rest are stored. */
export type ReadFailed = (error: unknown, figure: keyof Figures) => void;

async function bounded<T>(
  read: () => Promise<T>,
  figure: keyof Figures,
  failed: ReadFailed,
  timeoutMs: number,
): Promise<T | null> {
  try {
    return await withinDeadline(read, timeoutMs);
  } catch (error) {
    failed(error, figure);
    return null;
  }
}

/**
 * Every source of the reconciliation, each with its latest finished run. A source that never finished
 * one is listed too, so that its last-run gauge reads 0 (long ago) and the staleness alert sees it, as
 * it sees a ledger never checked.
 */
async function reconciliationFigures(latestRuns: FigureReads['latestRuns']): Promise<ReconciliationFigure[]> {
  const runs = await latestRuns();
  return reconciliationSources.map((source) => {
    const run = runs.find((r) => r.source === source);
    // latestRuns gives finished runs only: a run without its end is not one to show.
    if (run?.finishedAt === undefined) return { source, lastRun: null };
    return { source, lastRun: { finishedAt: new Date(run.finishedAt), counts: run.counts } };
  });
}

/** Every figure, read at once; a failed read is null and told, never a failure of the lot. */
export async function readFigures(
  reads: FigureReads,
  failed: ReadFailed,
  timeoutMs = readTimeoutMs,
): Promise<Figures> {
  const [floats, purchases, inbox, queues, ledgerCheck, reconciliation] = await Promise.all([
    bounded(reads.floatBalances, 'floats', failed, timeoutMs),
    bounded(reads.processingPurchases, 'purchases', failed, timeoutMs),
    bounded(reads.paymentInbox, 'inbox', failed, timeoutMs),
    bounded(reads.queueCounts, 'queues', failed, timeoutMs),
    bounded(async () => ({ run: await reads.lastLedgerCheck() }), 'ledgerCheck', failed, timeoutMs),
    bounded(() => reconciliationFigures(reads.latestRuns), 'reconciliation', failed, timeoutMs),
  ]);
  return { floats, purchases, inbox, queues, ledgerCheck, reconciliation };
}

// The stored document: JSON, so kobo as a decimal string (never a float) and times as ISO strings.
const kobo = z.string().regex(/^-?\d+$/);
const storedSchema = z.object({
  floats: z
    .array(z.object({ provider: z.string(), balanceKobo: kobo.nullable(), floorKobo: kobo }))
    .nullable(),
  purchases: z.object({ processing: z.number(), stuck: z.number() }).nullable(),
  inbox: z.object({ backlog: z.number(), oldestReceivedAt: z.iso.datetime().nullable() }).nullable(),
  queues: z
    .array(
      z.object({
        name: z.string(),
        queued: z.number(),
        deferred: z.number(),
        active: z.number(),
        failed: z.number(),
      }),
    )
    .nullable(),
  ledgerCheck: z
    .object({
      run: z.object({ checkedAt: z.iso.datetime(), ok: z.boolean(), imbalances: z.number() }).nullable(),
    })
    .nullable(),
  // Absent from a row stored by a version before it (a rolling deploy): read as not read, not as a
  // snapshot that cannot be parsed, which would take every figure and readiness down with it.
  reconciliation: z
    .array(
      z.object({
        source: z.string(),
        lastRun: z
          .object({
            finishedAt: z.iso.datetime(),
            counts: z.object({
              matched: z.number(),
              missingHere: z.number(),
              missingThere: z.number(),
              amountMismatch: z.number(),
              statusMismatch: z.number(),
            }),
          })
          .nullable(),
      }),
    )
    .nullable()
    .default(null),
});
type Stored = z.infer<typeof storedSchema>;

function toStored(f: Figures): Stored {
  return {
    floats:
      f.floats?.map((b) => ({
        provider: b.provider,
        balanceKobo: b.balanceKobo === null ? null : b.balanceKobo.toString(),
        floorKobo: b.floorKobo.toString(),
      })) ?? null,
    purchases: f.purchases,
    inbox:
      f.inbox === null
        ? null
        : { backlog: f.inbox.backlog, oldestReceivedAt: f.inbox.oldestReceivedAt?.toISOString() ?? null },
    queues: f.queues,
    ledgerCheck:
      f.ledgerCheck === null
        ? null
        : {
            run:
              f.ledgerCheck.run === null
                ? null
                : { ...f.ledgerCheck.run, checkedAt: f.ledgerCheck.run.checkedAt.toISOString() },
          },
    reconciliation:
      f.reconciliation?.map(({ source, lastRun }) => ({
        source,
        lastRun: lastRun === null ? null : { ...lastRun, finishedAt: lastRun.finishedAt.toISOString() },
      })) ?? null,
  };
}

function fromStored(s: Stored): Figures {
  return {
    floats:
      s.floats?.map((b) => ({
        provider: b.provider,
        balanceKobo: b.balanceKobo === null ? null : BigInt(b.balanceKobo),
        floorKobo: BigInt(b.floorKobo),
      })) ?? null,
    purchases: s.purchases,
    inbox:
      s.inbox === null
        ? null
        : {
            backlog: s.inbox.backlog,
            oldestReceivedAt: s.inbox.oldestReceivedAt === null ? null : new Date(s.inbox.oldestReceivedAt),
          },
    queues: s.queues,
    ledgerCheck:
      s.ledgerCheck === null
        ? null
        : {
            run:
              s.ledgerCheck.run === null
                ? null
                : { ...s.ledgerCheck.run, checkedAt: new Date(s.ledgerCheck.run.checkedAt) },
          },
    reconciliation:
      s.reconciliation?.map(({ source, lastRun }) => ({
        source,
        lastRun: lastRun === null ? null : { ...lastRun, finishedAt: new Date(lastRun.finishedAt) },
      })) ?? null,
  };
}

/**
 * Stores the figures as the snapshot, whatever was there. Not "unless a newer one is there": the
 * stamp is the service's clock, which the sandbox moves forward, and a row stamped by a clock moved a
 * month ahead would then never be replaced after a restart. Two refreshes that overlap (a slow
 * provider) may leave the older; the next, 30 s on, replaces it.
 */
export async function storeFigures(db: Kysely<DB>, refreshedAt: Date, figures: Figures): Promise<void> {
  await sql`
    insert into operator_figures (id, refreshed_at, figures)
    values (1, ${refreshedAt}, ${JSON.stringify(toStored(figures))}::jsonb)
    on conflict (id) do update set refreshed_at = excluded.refreshed_at, figures = excluded.figures`.execute(
    db,
  );
}

/** The latest snapshot, null before the first refresh: one statement over one row. */
export async function latestFigures(db: Kysely<DB>): Promise<StoredFigures | null> {
  const row = await db
    .selectFrom('operator_figures')
    .select(['refreshed_at', 'figures'])
    .where('id', '=', 1)
    .executeTakeFirst();
  if (row === undefined) return null;
  // pg and PGlite both hand jsonb back parsed; a text answer (a driver set up otherwise) is parsed here.
  const raw = typeof row.figures === 'string' ? JSON.parse(row.figures) : row.figures;
  return { refreshedAt: new Date(row.refreshed_at), figures: fromStored(storedSchema.parse(raw)) };
}
