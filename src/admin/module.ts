import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuthApi } from '../auth/module.ts';
import type { CatalogueApi } from '../catalogue/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { FundingApi } from '../funding/module.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { jobDefinition } from '../jobs/queue.ts';
import { checkAndRecordLedger, type LedgerCheckRun, lastLedgerCheck } from '../ledger/check-runs.ts';
import type { DomainModule } from '../module.ts';
import type { VtuApi } from '../vtu/module.ts';
import type { WalletApi } from '../wallet/module.ts';
import { adminOperations } from './ops.ts';
import { userLookupOperations } from './user-lookup.ts';

// The administrators' operations that belong to no other domain: the ledger check, reconciling now,
// the VTU markups and price levels, and the look-up of a person with their wallet (user-lookup.ts). The work is the other domains' own, reached through the deps
// (ops.ts). The ledger check also runs every hour as a job, each run recorded (ledger/check-runs.ts)
// for /metrics and its alert: an imbalance is found within the hour, not when someone asks.

export const ledgerCheckJob = defineJob('ledger.check', noPayload);

/**
 * What the admin module is given: the ledger to check and where to say what the check found, and
 * the functions of the domains whose work an administrator runs now instead of waiting for its job.
 */
export type AdminModuleDeps = {
  /** The ledger that the check reads and where each check run is recorded (ledger/check-runs.ts). */
  db: Kysely<DB>;
  /** When a ledger check ran, as recorded. */
  clock: Clock;
  /** Where the hourly check's imbalances are logged as an error. */
  logger: Logger;
  /** Funding's reconciliation, with the limits of its five-minute job (funding's api). */
  reconcileFunding: FundingApi['reconcile'];
  /** Requeries every purchase still processing, due or not (the vtu module's requeryDue). */
  requeryPurchases: () => ReturnType<VtuApi['requeryDue']>;
  /** Stores a markup; the next catalogue read and quote apply it (the catalogue's api). */
  setMarkup: CatalogueApi['setMarkup'];
  /** Every stored markup, the default ones first, then each price level's (the catalogue's api). */
  storedMarkups: CatalogueApi['storedMarkups'];
  /** Whether a price level has a markup (the catalogue's api). */
  priceLevelExists: CatalogueApi['priceLevelExists'];
  /** Puts a user on a price level or back on the default; false for no such user (auth's api). */
  setUserPriceLevel: AuthApi['setPriceLevel'];
  /** How many users are on each price level, null for none (auth's api). */
  usersByPriceLevel: AuthApi['usersByPriceLevel'];
  /** A user's row by id, for the operators' look-up of a person (auth's api). */
  findUserById: AuthApi['findUserById'];
  /** The user with this phone (E.164), for the same look-up (auth's api). */
  findUserByPhone: AuthApi['findUserByPhone'];
  /** The roles a phone has (auth's api). */
  rolesOf: AuthApi['rolesOf'];
  /** A user's balances and latest wallet movements (the wallet's api). */
  walletOf: WalletApi['walletOf'];
};

export type AdminApi = {
  /** The latest recorded ledger check (the job's or an administrator's), null before the first (/metrics). */
  lastLedgerCheck(): Promise<LedgerCheckRun | null>;
};

export function createAdminModule(deps: AdminModuleDeps): DomainModule & { api: AdminApi } {
  return {
    operations: [...adminOperations(deps), ...userLookupOperations(deps)],
    jobs: [
      jobDefinition(ledgerCheckJob, {
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
      }),
    ],
    subscribers: [],
    api: { lastLedgerCheck: () => lastLedgerCheck(deps.db) },
  };
}
