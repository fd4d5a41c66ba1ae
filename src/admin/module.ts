import type { Logger } from 'pino';
import { checkAndRecordLedger, type LedgerCheckRun, lastLedgerCheck } from '../ledger/check-runs.ts';
import type { DomainModule } from '../module.ts';
import { type AdminDeps, adminOperations } from './ops.ts';

// The administrators' operations that belong to no other domain: the ledger check, reconciling now,
// and the VTU markups and price levels. The work is the other domains' own, reached through the deps
// (ops.ts). The ledger check also runs every hour as a job, each run recorded (ledger/check-runs.ts)
// for /metrics and its alert: an imbalance is found within the hour, not when someone asks.

export const JOB_LEDGER_CHECK = 'ledger.check';

export type AdminModuleDeps = AdminDeps & { logger: Logger };

export type AdminApi = {
  /** The latest recorded ledger check (the job's or an administrator's), null before the first (/metrics). */
  lastLedgerCheck(): Promise<LedgerCheckRun | null>;
};

export function createAdminModule(deps: AdminModuleDeps): DomainModule & { api: AdminApi } {
  return {
    operations: adminOperations(deps),
    jobs: [
      {
        name: JOB_LEDGER_CHECK,
        // Off the hour's start, when the other hourly work of a deployment tends to run.
        cron: '17 * * * *',
        retryLimit: 1,
        retryDelaySeconds: 60,
        expireInSeconds: 15 * 60,
        handler: async () => {
          const result = await checkAndRecordLedger(deps.db, () => deps.clock.now());
          if (!result.ok)
            deps.logger.error({ imbalances: result.imbalances }, 'ledger check found imbalances');
        },
      },
    ],
    subscribers: [],
    api: { lastLedgerCheck: () => lastLedgerCheck(deps.db) },
  };
}
