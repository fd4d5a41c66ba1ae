import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { GrowthApi } from '../growth/module.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import { everyRow } from '../paging.ts';
import type { MovesWallet } from '../wallet/module.ts';
import { activeLocksOf } from './account-closure.ts';
import { matureDueLocks, savingsMaturityJob } from './maturity.ts';
import { savingsOperations } from './ops.ts';
import { listLocks, type SavingsLockView, savingsPostings } from './service.ts';

// Savings locks (SPEC.md item 7): create, list and break, and the maturity job.

/**
 * Everything savings is given (createModules). The service and the maturity take the part they
 * need (SavingsDeps in service.ts), which the compiler checks these satisfy.
 */
export type SavingsModuleDeps = {
  /** The database: this module's table (savings_locks) and the ledger's lock, break and maturity postings. */
  db: Kysely<DB>;
  /** The service clock: when a lock is made, when it matures, and whether it is due. */
  clock: Clock;
  /** The job queue the locks' domain events are published through, in their transactions. */
  jobs: JobQueue;
  /** The maturity job's line when it has matured locks. */
  logger: Logger;
  /** The locks' bounds (amount in kobo, days), the break's penalty and the milestones' thresholds. */
  config: Config['savings'];
  /** Growth's api: records the savings milestones a lock reached, in the lock's transaction. */
  reachMilestones: GrowthApi['reachMilestones'];
};

export type SavingsApi = {
  /** Every lock of the person, newest first, as listSavingsLocks gives them (their data export). */
  personalDataOf(userId: string): Promise<SavingsLockView[]>;
  /** How many of the person's locks are active, on the handle given (a closing account's reasons). */
  activeLocksOf: typeof activeLocksOf;
};

export function createSavingsModule(
  deps: SavingsModuleDeps,
): DomainModule & MovesWallet & { api: SavingsApi } {
  return {
    operations: savingsOperations(deps),
    jobs: [
      jobDefinition(savingsMaturityJob, {
        // Locks whose maturesAt has passed go back to the wallet (maturity.ts): every minute, so a
        // lock matures within a minute of its time; safe to run in several workers at once (each
        // claims its own locks) and again after a crash (a matured lock is no longer due).
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 10,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const { matured } = await matureDueLocks(deps);
          if (matured > 0) deps.logger.info({ matured }, 'savings locks matured');
        },
      }),
    ],
    subscribers: [],
    // A lock takes from the wallet; its break or maturity gives back.
    movementKinds: [
      { kind: 'savings_lock', reference: savingsPostings.lock },
      { kind: 'savings_release', reference: savingsPostings.break },
      { kind: 'savings_release', reference: savingsPostings.mature },
    ],
    api: {
      personalDataOf: async (userId) => (await listLocks(deps.db, userId, everyRow)).items,
      activeLocksOf,
    },
  };
}
