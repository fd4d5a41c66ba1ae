import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { koboToNaira } from '../money.ts';
import { type CheckinDeps, type CheckinStatus, checkinStatus } from './checkin.ts';
import { type ReferralDeps, type ReferralStatus, referralStatus } from './referral.ts';

// The person's rewards, for their data export (API.md 17.3): the check-in as getCheckinStatus gives
// it and every claim, every savings milestone reached (acknowledged or not), and the referral status
// as getMyReferralStatus gives it (invitees by the masked name the person sees, nothing more of them).

export type RewardsPersonalData = {
  checkin: CheckinStatus;
  checkinClaims: Array<{ day: string; streak: number; reward: number; claimedAt: string }>;
  milestones: Array<{ threshold: number; reachedAt: string; acknowledgedAt: string | null }>;
  referral: ReferralStatus;
};

export async function rewardsOf(
  deps: CheckinDeps & Pick<ReferralDeps, 'users'>,
  userId: string,
): Promise<RewardsPersonalData> {
  const db: Kysely<DB> = deps.db;
  const [checkin, claims, milestones, referral] = await Promise.all([
    checkinStatus(deps, userId),
    db
      .selectFrom('checkin_claims')
      .select(['day', 'streak', 'reward', 'claimed_at'])
      .where('user_id', '=', userId)
      .orderBy('claimed_at')
      .execute(),
    db
      .selectFrom('savings_milestones')
      .select(['threshold', 'reached_at', 'acknowledged_at'])
      .where('user_id', '=', userId)
      .orderBy('threshold')
      .execute(),
    referralStatus(deps, userId),
  ]);
  return {
    checkin,
    checkinClaims: claims.map((c) => ({
      day: c.day,
      streak: c.streak,
      reward: koboToNaira(c.reward),
      claimedAt: c.claimed_at.toISOString(),
    })),
    milestones: milestones.map((m) => ({
      threshold: koboToNaira(m.threshold),
      reachedAt: m.reached_at.toISOString(),
      acknowledgedAt: m.acknowledged_at?.toISOString() ?? null,
    })),
    referral,
  };
}
