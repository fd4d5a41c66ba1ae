import type { Config } from '../config.ts';

// The CBN tier limits of API.md 17.2 (decision 0044), from configuration: per tier, what may leave a
// person per Lagos day and the most their wallet holds, kobo; null is no limit.

export type TierLimits = Config['limits'];
export type TierLimit = TierLimits['tiers'][number];

const tierMax = 3;

/** The limits of a tier (0..3); a tier beyond the table has the highest's. */
export const limitsOfTier = (limits: TierLimits, tier: number): TierLimit =>
  limits.tiers[Math.max(0, Math.min(tier, tierMax))]!;

/** a ≤ b where null is no limit (infinity). */
const atMost = (a: bigint | null, b: bigint | null): boolean => b === null || (a !== null && a <= b);

/** The smaller of two limits, null being no limit. */
export const tighter = (a: bigint | null, b: bigint | null): bigint | null => (atMost(a, b) ? a : b);

/**
 * The first tier above `tier` whose limits are higher than `tier`'s (a tier configured with the same
 * figures lifts nothing), or undefined at the top.
 */
export function nextTier(limits: TierLimits, tier: number): { tier: number; limit: TierLimit } | undefined {
  const current = limitsOfTier(limits, tier);
  for (let higher = tier + 1; higher <= tierMax; higher++) {
    const limit = limitsOfTier(limits, higher);
    if (!atMost(limit.dailyKobo, current.dailyKobo) || !atMost(limit.balanceKobo, current.balanceKobo))
      return { tier: higher, limit };
  }
  return undefined;
}

/** The lowest tier above `tier` whose daily limit admits `neededKobo` in a day, if any. */
export function tierAdmitting(limits: TierLimits, tier: number, neededKobo: bigint): number | undefined {
  for (let higher = tier + 1; higher <= tierMax; higher++) {
    if (atMost(neededKobo, limitsOfTier(limits, higher).dailyKobo)) return higher;
  }
  return undefined;
}
