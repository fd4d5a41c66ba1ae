import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { type DomainModule, on } from '../module.ts';
import type { MovesWallet } from '../wallet/module.ts';
import { checkinPostings } from './checkin.ts';
import { reachMilestones } from './milestones.ts';
import { growthOperations } from './ops.ts';
import { type RewardsPersonalData, rewardsOf } from './personal-data.ts';
import { qualifyInvitee } from './referral.ts';

// Growth (SPEC.md item 7, API.md section 9): the daily check-in and its rewards, the savings
// milestones, and the referral bonus, locked in the referrer's bonus_locked account.

/**
 * Everything growth is given (createModules). The check-in and the referral take the part they
 * need (CheckinDeps, ReferralDeps), which the compiler checks these satisfy.
 */
export type GrowthModuleDeps = {
  /** The database: its tables (checkin_claims, referral_bonuses, savings_milestones) and the ledger. */
  db: Kysely<DB>;
  /** The service clock: the Africa/Lagos day of a check-in, and when a referral bonus is granted. */
  clock: Clock;
  /** The job queue the module's domain events are published through, in their transactions. */
  jobs: JobQueue;
  /** The rewards, in kobo: a check-in's, the least withdrawn to the wallet, and the referral bonus. */
  config: Config['growth'];
  /**
   * Auth's api: who invited an invitee (the bonus's referrer), and a referrer's own code and
   * invitees (getReferralStatus).
   */
  users: Pick<AuthApi, 'findUserById' | 'inviteesOf' | 'referrerIdOf'>;
};

export type GrowthApi = {
  /** Records the savings milestones a lock reached, in the lock's transaction (milestones.ts). */
  reachMilestones: typeof reachMilestones;
  /** The person's check-ins, milestones and referrals (their data export). */
  personalDataOf(userId: string): Promise<RewardsPersonalData>;
};

export type GrowthModule = DomainModule & MovesWallet & { api: GrowthApi };

export function createGrowthModule(deps: GrowthModuleDeps): GrowthModule {
  const { db, clock, jobs, config, users } = deps;
  return {
    operations: growthOperations(deps),
    jobs: [],
    subscribers: [
      // An invitee's Tier 1 approval grows the referrer's locked bonus. The domain-event job may run
      // this twice or at once: qualifyInvitee grants the bonus once per invitee whatever happens.
      on('kyc.tier_approved', async (event) => {
        if (event.tier !== 1) return;
        await qualifyInvitee({ db, clock, jobs, users, bonusKobo: config.referralBonusKobo }, event.userId);
      }),
    ],
    // The check-in rewards withdrawn to the wallet (a claim accrues apart from it).
    movementKinds: [{ kind: 'reward', reference: checkinPostings.withdrawal }],
    api: { reachMilestones, personalDataOf: (userId) => rewardsOf(deps, userId) },
  };
}
