import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { jobDefinition } from '../jobs/queue.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { type PurgeReport, type PurgeRule, purgeInBatches } from './purge.ts';

// Retention (issue 43 item 5, decision 0054): the tables that grow with every sign-in, request and
// message are kept for a period, then deleted by a daily job, a small batch at a time. Each table is
// deleted from by its owner, through its api: this module decides only how long and when. The money
// and KYC records (ledger, purchases, payments, top-ups, transfers, disputes, adjustments, the audit
// log, KYC) are not among them: the law keeps them five years, and account closure's erasure
// (decision 0047) is the only thing that ever removes any of them. The full table of every table's
// period is in docs/privacy.md.

const DAY_MS = 86_400_000;

/** One batch of the rows past their period: `cutoff` is the time before which (or, for expiries, at which) they go. */
type PurgeBatch = (cutoff: Date, batchMax: number) => Promise<number>;

export type RetentionModuleDeps = {
  /** Today, from which every cutoff is counted (the sandbox clock moves it). */
  clock: Clock;
  /** One line per run: the rows each table lost. */
  logger: Logger;
  /** The periods in days, the batch size and the run's time budget (RETENTION_*). */
  config: Config['retention'];
  /** Each owner's purge of one batch, through its api (the router's for the idempotency keys, the ledger's for its checks). */
  purges: {
    /** http: keys past their replay window (expires_at, 24 h). */
    idempotencyKeys: PurgeBatch;
    /** auth: sign-in codes expired, with their phone's day of requests over. */
    signInCodes: PurgeBatch;
    /** auth: email codes expired. */
    emailCodes: PurgeBatch;
    /** funding: the webhook inbox, processed, received before the cutoff. */
    paymentEvents: PurgeBatch;
    /** notifications: read before one cutoff, any before the other. */
    notifications: (cutoffs: { readBefore: Date; before: Date }, batchMax: number) => Promise<number>;
    /** data-export: exports whose link expired before the cutoff. */
    dataExports: PurgeBatch;
    /** ledger: the recorded ledger checks before the cutoff, the latest always kept. */
    ledgerChecks: PurgeBatch;
    /** reconciliation: matched items of runs started before the cutoff. */
    reconciliationMatched: PurgeBatch;
    /** ussd: the steps made, then the sessions last seen, before the cutoff. */
    ussdSessions: PurgeBatch;
  };
};

export type RetentionApi = {
  /** One run of the purge, as the daily job runs it; answers what it deleted. */
  purge(): Promise<PurgeReport>;
};

/** Every day at 02:30 Lagos (01:30 UTC), when the service is quietest; and when the sandbox clock moves. */
export const retentionPurgeJob = defineJob('retention.purge', noPayload);

/** The rules of one run, their cutoffs counted from `now`. */
export function retentionRules(deps: RetentionModuleDeps, now: Date): PurgeRule[] {
  const { purges, config } = deps;
  const daysBefore = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const rule = (name: string, purge: PurgeBatch, cutoff: Date): PurgeRule => ({
    name,
    purgeBatch: (batchMax) => purge(cutoff, batchMax),
  });
  const notificationCutoffs = {
    readBefore: daysBefore(config.notificationsReadDays),
    before: daysBefore(config.notificationsDays),
  };
  return [
    rule('idempotency_keys', purges.idempotencyKeys, now),
    rule('otp_codes', purges.signInCodes, now),
    rule('email_verifications', purges.emailCodes, now),
    rule('payment_events', purges.paymentEvents, daysBefore(config.paymentEventsDays)),
    {
      name: 'notifications',
      purgeBatch: (batchMax) => purges.notifications(notificationCutoffs, batchMax),
    },
    rule('data_exports', purges.dataExports, daysBefore(config.dataExportsDays)),
    rule('ledger_checks', purges.ledgerChecks, daysBefore(config.ledgerChecksDays)),
    rule('reconciliation_items', purges.reconciliationMatched, daysBefore(config.reconciliationMatchedDays)),
    rule('ussd_sessions', purges.ussdSessions, daysBefore(config.ussdSessionsDays)),
  ];
}

export function createRetentionModule(deps: RetentionModuleDeps): DomainModule & { api: RetentionApi } {
  const purge = async (): Promise<PurgeReport> => {
    const report = await purgeInBatches(retentionRules(deps, deps.clock.now()), {
      batchMax: deps.config.batchSize,
      budgetMs: deps.config.timeBudgetSeconds * 1000,
    });
    deps.logger.info(
      { purged: report.purged, complete: report.complete },
      report.complete
        ? 'retention purge done'
        : 'retention purge stopped at its time budget: the next run carries on',
    );
    return report;
  };
  return {
    ...emptyModule,
    jobs: [
      jobDefinition(retentionPurgeJob, {
        // Safe to run twice, or on two workers at once: each batch deletes rows past their period, and
        // a row another run deleted first is simply not there. A run cut short by its budget (or a
        // crash) leaves the rest for the next, and every batch it committed stays committed.
        cron: '30 1 * * *',
        retryLimit: 2,
        retryDelaySeconds: 300,
        expireInSeconds: deps.config.timeBudgetSeconds + 300,
        runOnClockAdvance: true,
        handler: async () => void (await purge()),
      }),
    ],
    api: { purge },
  };
}
