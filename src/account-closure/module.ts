import { jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import { closedCreditSubscriptions } from './closed-credits.ts';
import { accountClosingJob, closeDueAccounts } from './closing.ts';
import type { AccountClosureModuleDeps } from './deps.ts';
import { accountClosureOperations } from './ops.ts';
import { eraseRecordsPastRetention, retentionErasureJob } from './retention.ts';

// Closing an account (issue 41 item 5, API.md 17.3, decision 0047): a person's request with their
// PIN, refused with every reason that applies (reasons.ts), a grace period in which it can be
// cancelled (requests.ts), the closing job at the effective time (closing.ts) and the erasure of
// the KYC records once RETENTION_YEARS have passed (retention.ts). It owns one table,
// account_closures; everything else it reads or changes through the owning domain's api.

export type { AccountClosureModuleDeps };

export function createAccountClosureModule(deps: AccountClosureModuleDeps): DomainModule {
  return {
    operations: accountClosureOperations(deps),
    jobs: [
      jobDefinition(accountClosingJob, {
        // Every minute, so an account closes within a minute of its effective time; safe to run
        // twice or on several workers (each request is decided under its row lock, closing.ts).
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 30,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const counts = await closeDueAccounts(deps);
          if (counts.closed + counts.cancelled > 0) deps.logger.info({ counts }, 'account closings decided');
        },
      }),
      jobDefinition(retentionErasureJob, {
        // Once a day (03:30 UTC): retention is counted in years, a day late is nothing.
        cron: '30 3 * * *',
        retryLimit: 3,
        retryDelaySeconds: 300,
        expireInSeconds: 3600,
        runOnClockAdvance: true,
        handler: async () => {
          const { erased } = await eraseRecordsPastRetention(deps);
          if (erased > 0) deps.logger.info({ erased }, 'KYC records erased past retention');
        },
      }),
    ],
    // Money that still reaches a closed account is an operator's to return (closed-credits.ts).
    subscribers: closedCreditSubscriptions(deps),
  };
}
