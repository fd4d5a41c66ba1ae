import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AlertsModule } from '../alerts/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { FundingApi } from '../funding/module.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import { lagosDate, lagosDayStart } from '../lagos-time.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import type { PaymentProvider } from '../providers/payments/payment-provider.ts';
import type { VtuProvider } from '../providers/vtu/vtu-provider.ts';
import type { VtuApi } from '../vtu/module.ts';
import { reconciliationOperations } from './ops.ts';
import { purgeMatchedItems } from './retention.ts';
import { executeRun, reconciliationRunJob, runView, startRun } from './runs.ts';
import { type ReconciliationRunView, reconciliationSources, type Source } from './schemas.ts';

// Reconciliation with the providers' own records (API.md 17.5, decision 0049): runs that compare a
// source's records of a period with ours, item by item, for operators to resolve; and every morning
// yesterday's run of every source, with an operations alert when anything does not agree.

export type ReconciliationModuleDeps = {
  /** Its tables, reconciliation_runs and reconciliation_items. */
  db: Kysely<DB>;
  /** When a run starts and ends; which day is yesterday in Lagos. */
  clock: Clock;
  /** A run's job, enqueued with its row; the morning's alert's email. */
  jobs: JobQueue;
  /** A run's end, or why it failed. */
  logger: Logger;
  /** The payment provider: its transaction list, and its word on one payment before a credit. */
  payments: PaymentProvider;
  /** The VTU providers by their configuration name: each one's requery, and the data vendor's list. */
  providers: Record<Exclude<Source, 'payments'>, VtuProvider>;
  /** Funding's api: our payments of a period or by reference, and the once-only credit of one. */
  funding: Pick<FundingApi, 'paymentRecordsBetween' | 'paymentRecordsOf' | 'creditVerifiedPayment'>;
  /** Vtu's api: our purchases of a period or by reference, and the requery that settles one. */
  vtu: Pick<VtuApi, 'purchasesSentBetween' | 'purchasesByReference' | 'requeryReference'>;
  /** Alerts' api: the morning's alert when a bucket but matched is not empty. */
  raiseAlert: AlertsModule['api']['raiseAlert'];
};

export type ReconciliationApi = {
  /**
   * The latest finished morning run of each source, for the gauges of /metrics: its matched items,
   * and of every other bucket the items not resolved yet.
   */
  latestRuns(): Promise<ReconciliationRunView[]>;
  /** Retention (decision 0054): one batch of the matched items of runs started before `before`. */
  purgeMatchedItems(before: Date, batchMax: number): Promise<number>;
};

/** Yesterday's run of every source, every morning at 06:00 Lagos (05:00 UTC). */
export const dailyReconciliationJob = defineJob('reconciliation.daily', noPayload);

export function createReconciliationModule(
  deps: ReconciliationModuleDeps,
): DomainModule & { api: ReconciliationApi } {
  const { db, clock, jobs } = deps;
  const runDeps = {
    db,
    clock,
    jobs,
    logger: deps.logger,
    raiseAlert: deps.raiseAlert,
    payments: {
      payments: deps.payments,
      paymentRecordsBetween: deps.funding.paymentRecordsBetween,
      paymentRecordsOf: deps.funding.paymentRecordsOf,
    },
    purchasesOf: (source: Exclude<Source, 'payments'>) => ({
      provider: deps.providers[source],
      purchasesSentBetween: (from: Date, to: Date) => deps.vtu.purchasesSentBetween(source, from, to),
      purchasesByReference: deps.vtu.purchasesByReference,
    }),
  };
  const resolveDeps = {
    db,
    now: () => clock.now(),
    payments: deps.payments,
    creditVerifiedPayment: deps.funding.creditVerifiedPayment,
    providerOf: (source: Exclude<Source, 'payments'>) => deps.providers[source],
    purchasesByReference: deps.vtu.purchasesByReference,
    requeryReference: deps.vtu.requeryReference,
  };
  return {
    ...emptyModule,
    operations: reconciliationOperations(runDeps, resolveDeps),
    jobs: [
      jobDefinition(reconciliationRunJob, {
        // One run's comparison, enqueued with its row. A provider that cannot be read fails the run
        // with the reason (not retried: an operator runs it again); a crash mid-run is retried and
        // starts from nothing, since the items are written in one commit at the end.
        retryLimit: 2,
        retryDelaySeconds: 60,
        expireInSeconds: 3_600,
        handler: ({ runId }) => executeRun(runDeps, runId),
      }),
      jobDefinition(dailyReconciliationJob, {
        // Yesterday (Africa/Lagos) for every source: one run per source and day (daily_key), so a
        // second worker, a retry or the sandbox clock moving again starts nothing more.
        cron: '0 5 * * *',
        retryLimit: 2,
        retryDelaySeconds: 300,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const today = lagosDayStart(clock.now());
          const yesterday = new Date(today.getTime() - 86_400_000);
          const day = lagosDate(yesterday);
          for (const source of reconciliationSources) {
            await startRun(runDeps, {
              source,
              from: yesterday,
              to: today,
              requestedBy: null,
              dailyKey: `${source}:${day}`,
            });
          }
        },
      }),
    ],
    api: {
      purgeMatchedItems: (before, batchMax) => purgeMatchedItems(db, before, batchMax),
      async latestRuns() {
        // The morning's runs: an operator's run of some other period must not stand for the day.
        const rows = await db
          .selectFrom('reconciliation_runs')
          .selectAll()
          .distinctOn('source')
          .where('status', '=', 'done')
          .where('daily_key', 'is not', null)
          .orderBy('source')
          .orderBy('created_at', 'desc')
          .execute();
        if (rows.length === 0) return [];
        // What still needs looking at: a resolved item no longer counts, so the alert on these
        // gauges ends when the operators have dealt with every item, not the next morning.
        const open = await db
          .selectFrom('reconciliation_items')
          .select(['run_id', 'bucket', (eb) => eb.fn.countAll<string>().as('n')])
          .where(
            'run_id',
            'in',
            rows.map((row) => row.id),
          )
          .where('bucket', '!=', 'matched')
          .where('resolution_action', 'is', null)
          .groupBy(['run_id', 'bucket'])
          .execute();
        return rows.map((row) => {
          const view = runView(row);
          const left = (bucket: string) =>
            Number(open.find((o) => o.run_id === row.id && o.bucket === bucket)?.n ?? 0);
          return {
            ...view,
            counts: {
              matched: view.counts.matched,
              missingHere: left('missingHere'),
              missingThere: left('missingThere'),
              amountMismatch: left('amountMismatch'),
              statusMismatch: left('statusMismatch'),
            },
          };
        });
      },
    },
  };
}
