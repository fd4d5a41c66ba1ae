import type { DomainModule } from '../module.ts';
import { requireKycTier } from './guard.ts';
import type { PersonName } from './names.ts';
import { type KycOperationsDeps, kycOperations } from './ops.ts';
import { approvedNinName } from './service.ts';

// Identity checks (API.md section 8): the three tiers, their documents and the admins' reviews. An
// approved tier is told to other domains by the kyc.tier_approved event (service.ts).

export type KycModuleDeps = KycOperationsDeps;

export type KycModule = DomainModule & {
  api: {
    /** Throws 403 KYC_TIER_REQUIRED unless the user's approved tier is at least the one given. */
    requireKycTier: (userId: string, requiredTier: 1 | 2 | 3) => Promise<void>;
    /** The name on the NIN record of the user's approved Tier 2, or null without one. */
    approvedNinName: (userId: string) => Promise<PersonName | null>;
  };
};

export function createKycModule(deps: KycModuleDeps): KycModule {
  return {
    operations: kycOperations(deps),
    jobs: [],
    subscribers: [],
    api: {
      requireKycTier: (userId, requiredTier) => requireKycTier(deps.db, userId, requiredTier),
      approvedNinName: (userId) => approvedNinName(deps.db, userId),
    },
  };
}
