import { type DomainModule, on } from '../module.ts';
import type { CheckinDeps } from './checkin.ts';
import { reachMilestones } from './milestones.ts';
import { growthOperations } from './ops.ts';
import { qualifyInvitee } from './referral.ts';

// Growth (SPEC.md item 7, API.md section 9): the daily check-in and its rewards, the savings
// milestones, and the referral bonus, locked in the referrer's bonus_locked account.

export type GrowthModuleDeps = CheckinDeps;

export type GrowthApi = {
  /** Records the savings milestones a lock reached, in the lock's transaction (milestones.ts). */
  reachMilestones: typeof reachMilestones;
};

export type GrowthModule = DomainModule & { api: GrowthApi };

export function createGrowthModule(deps: GrowthModuleDeps): GrowthModule {
  const { db, clock, jobs, config } = deps;
  return {
    operations: growthOperations(deps),
    jobs: [],
    subscribers: [
      // An invitee's Tier 1 approval grows the referrer's locked bonus. The domain-event job may run
      // this twice or at once: qualifyInvitee grants the bonus once per invitee whatever happens.
      on('kyc.tier_approved', async (event) => {
        if (event.tier !== 1) return;
        await qualifyInvitee({ db, clock, jobs, bonusKobo: config.referralBonusKobo }, event.userId);
      }),
    ],
    api: { reachMilestones },
  };
}
