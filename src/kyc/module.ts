import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import type { KycProvider } from '../providers/kyc/kyc-provider.ts';
import type { DocumentStore } from '../providers/storage/document-store.ts';
import type { HashKeys } from '../shared/keyed-hash.ts';
import { eraseRecordsOf, releaseIdentityOf } from './account-closure.ts';
import { requireKycTier, requireTier } from './guard.ts';
import type { PersonName } from './names.ts';
import { kycOperations } from './ops.ts';
import { type KycPersonalData, kycPersonalDataOf } from './personal-data.ts';
import { approvedNinName } from './service.ts';

// Identity checks (API.md section 8): the three tiers, their documents and the admins' reviews. An
// approved tier is told to other domains by the kyc.tier_approved event (service.ts).

/**
 * Everything KYC is given (createModules). The service and the operations take the part they need
 * (KycDeps in service.ts, KycOperationsDeps in ops.ts), which the compiler checks these satisfy.
 */
export type KycModuleDeps = {
  /** The database: this module's tables (kyc_submissions, kyc_documents, kyc_liveness_checks). */
  db: Kysely<DB>;
  /** The service clock: when a submission, a review and a liveness check happen, and URL expiries. */
  clock: Clock;
  /** The job queue the kyc.tier_approved event is published through, in the decision's transaction. */
  jobs: JobQueue;
  /** The identity provider: the liveness check, the NIN record and the bank account's name. */
  provider: KycProvider;
  /** Private storage of the Tier 3 ID documents (a local directory or S3-compatible storage). */
  store: DocumentStore;
  /** SECRET_PEPPER, and the previous one while a rotation lasts (decision 0035): NIN and token hashes. */
  pepper: HashKeys;
  /** Catalogue's api: the banks Tier 3 accepts (listBanks), the payment provider's list, cached. */
  banks: () => Promise<readonly { code: string }[]>;
  /**
   * Auth's users (auth.api): the rows a submission and a review read, the tier the gate reads, and
   * the row lock, approved tier and verified names a decision writes in its own transaction.
   */
  users: Pick<
    AuthApi,
    'findUserById' | 'findUsersByIds' | 'kycTierOf' | 'lockUser' | 'setKycTier' | 'setVerifiedName'
  >;
  /** Signs the service's own short-lived document URLs (local storage). */
  urlKey: Buffer;
  /** The service's own public base URL, which signed document URLs point at. */
  baseUrl: string;
  /** The config slice the liveness check reads (config.kyc and config.sandbox). */
  config: {
    /** The KYC provider's liveness page (config.kyc.livenessUrl). */
    livenessUrl: string;
    /** The sandbox's liveness tokens are accepted (SANDBOX=1). */
    sandboxTokens: boolean;
  };
};

export type KycModule = DomainModule & {
  api: {
    /** Throws 403 KYC_TIER_REQUIRED unless the user's approved tier is at least the one given. */
    requireKycTier: (userId: string, requiredTier: 1 | 2 | 3) => Promise<void>;
    /** The name on the NIN record of the user's approved Tier 2, or null without one. */
    approvedNinName: (userId: string) => Promise<PersonName | null>;
    /** The gate itself, for a caller that has read the user's tier already (403 KYC_TIER_REQUIRED). */
    requireTier: typeof requireTier;
    /** Each tier's status and every submission, with its document described but not its bytes (data export). */
    personalDataOf: (userId: string) => Promise<KycPersonalData>;
    /** A closed account's submissions let go of their NIN, in the closing transaction (kept, not erased). */
    releaseIdentityOf: typeof releaseIdentityOf;
    /** Erases a closed account's documents (bytes and rows), submissions and face checks past retention. */
    eraseRecordsOf: (userId: string) => Promise<{ documents: number; submissions: number }>;
  };
};

export function createKycModule(deps: KycModuleDeps): KycModule {
  return {
    operations: kycOperations(deps),
    jobs: [],
    subscribers: [],
    api: {
      requireKycTier: (userId, requiredTier) => requireKycTier(deps.users.kycTierOf, userId, requiredTier),
      approvedNinName: (userId) => approvedNinName(deps.db, userId),
      requireTier,
      personalDataOf: (userId) => kycPersonalDataOf(deps.db, userId),
      releaseIdentityOf,
      eraseRecordsOf: (userId) => eraseRecordsOf(deps, userId),
    },
  };
}
