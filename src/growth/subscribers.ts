import type { Context } from '../context.ts';
import { qualifyInvitee } from './referral.ts';

// Growth reacts to KYC: an invitee's Tier 1 approval grows the referrer's locked bonus. The
// subscriber runs in the domain-event job, which may run it twice or at once: qualifyInvitee grants
// the bonus once per invitee whatever happens.
export function subscribeGrowthToKyc(ctx: Context): void {
  ctx.events.subscribe('kyc.tier_approved', async (event) => {
    if (event.tier !== 1) return;
    await qualifyInvitee(
      { db: ctx.db, clock: ctx.clock, jobs: ctx.jobs, bonusKobo: ctx.config.growth.referralBonusKobo },
      event.userId,
    );
  });
}
