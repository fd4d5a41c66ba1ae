import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AdminApi } from '../admin/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { FundingApi } from '../funding/module.ts';
import { defineJob } from '../jobs/job.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import type { ReconciliationApi } from '../reconciliation/module.ts';
import type { VtuApi } from '../vtu/module.ts';
import { latestFigures, readFigures, type StoredFigures, storeFigures } from './snapshot.ts';

// The figures operators watch, refreshed every 30 s by one job across the fleet and kept as one row
// that /metrics reads (snapshot.ts, decision 0028). pg-boss's cron is minute-grained: the job of each
// minute refreshes, then sends the half-minute's refresh 30 s later (a queue of policy `short` keeps
// at most one of each waiting, whatever a slow worker or an overlap does). Only worker processes run
// it; an API process only reads the row.

/** The minute's refresh (cron, no payload), or its half-minute follow-up (`half`). */
export const figuresRefreshJob = defineJob('figures.refresh', z.object({ half: z.boolean().optional() }));

/** How often the figures are read: the contract's (API.md section 17.1). */
export const refreshIntervalSeconds = 30;

export type FiguresModuleDeps = {
  /** Where the one row of the latest figures is kept (snapshot.ts). */
  db: Kysely<DB>;
  /** Stamps a refresh when its reads ended: the scrape's age is measured by it. */
  clock: Clock;
  /** Where a figure that could not be read is logged (it is stored as failed). */
  logger: Logger;
  /** Sends the half-minute's refresh after the minute's. */
  jobs: Pick<JobQueue, 'send'>;
  /** The reads of the figures, each the owning module's, each bounded by readTimeoutMs (snapshot.ts). */
  reads: {
    /** Each provider's float as it reports it now, with the floor operators are warned under (vtu's api). */
    floatBalances: VtuApi['floatBalances'];
    /** Purchases still processing, and those past the stuck-alert window (vtu's api). */
    processingPurchases: VtuApi['processingPurchases'];
    /** The stored webhooks not processed yet, and the oldest's arrival (funding's api). */
    paymentInbox: FundingApi['paymentInbox'];
    /** Each job queue's counts (the job queue's). */
    queueCounts: JobQueue['queueCounts'];
    /** The latest ledger check (the admin module's api). */
    lastLedgerCheck: AdminApi['lastLedgerCheck'];
    /** Each source's latest finished reconciliation run (the reconciliation module's api). */
    latestRuns: ReconciliationApi['latestRuns'];
  };
};

export type FiguresApi = {
  /** The latest snapshot (null before the first refresh): one statement, never a provider call. */
  latest(): Promise<StoredFigures | null>;
  /** Reads every figure now and stores them (the job's work; tests call it through jobs.runNow). */
  refresh(): Promise<void>;
};

const halfMinuteKey = 'half-minute';

export function createFiguresModule(deps: FiguresModuleDeps): DomainModule & { api: FiguresApi } {
  const refresh = async () => {
    const figures = await readFigures(deps.reads, (error, figure) =>
      deps.logger.warn({ err: error, figure }, 'an operator figure could not be read'),
    );
    // Stamped when the reads ended, by the service's clock, which the scrape's age is measured by.
    await storeFigures(deps.db, deps.clock.now(), figures);
  };
  return {
    ...emptyModule,
    jobs: [
      jobDefinition(figuresRefreshJob, {
        cron: '* * * * *',
        policy: 'short',
        // The next refresh is at most 30 s away: a failed one is not tried again.
        retryLimit: 0,
        retryDelaySeconds: refreshIntervalSeconds,
        expireInSeconds: 2 * refreshIntervalSeconds,
        // Not run by a move of the sandbox clock: that would call every provider's balance at each
        // move, and a provider a test makes hang would hold the move for the read's bound.
        // Polled: the half-minute follow-up is deferred, and a deferred job comes due with no NOTIFY.
        wake: 'poll',
        handler: async ({ half }) => {
          if (half !== true) {
            // Sent first, so that a refresh that fails or hangs does not cost the next one. pg-boss
            // waits by the database's clock (real time), not the sandbox's.
            await deps.jobs.send(
              figuresRefreshJob,
              { half: true },
              {
                singletonKey: halfMinuteKey,
                startAfter: new Date(Date.now() + refreshIntervalSeconds * 1000),
              },
            );
          }
          await refresh();
        },
      }),
    ],
    api: { latest: () => latestFigures(deps.db), refresh },
  };
}
