import type { Logger } from 'pino';
import type { DomainModule } from '../module.ts';
import { JOB_SAVINGS_MATURITY, matureDueLocks } from './maturity.ts';
import { savingsOperations } from './ops.ts';
import type { SavingsDeps } from './service.ts';

// Savings locks (SPEC.md item 7): create, list and break, and the maturity job.

export type SavingsModuleDeps = SavingsDeps & { logger: Logger };

export function createSavingsModule(deps: SavingsModuleDeps): DomainModule {
  return {
    operations: savingsOperations(deps),
    jobs: [
      {
        // Locks whose maturesAt has passed go back to the wallet (maturity.ts): every minute, so a
        // lock matures within a minute of its time; safe to run in several workers at once (each
        // claims its own locks) and again after a crash (a matured lock is no longer due).
        name: JOB_SAVINGS_MATURITY,
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 10,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const { matured } = await matureDueLocks(deps);
          if (matured > 0) deps.logger.info({ matured }, 'savings locks matured');
        },
      },
    ],
    subscribers: [],
  };
}
