import { z } from 'zod';
import { isNairaAmount } from '../money.ts';

// Request and answer shapes of the growth features (API.md section 9).

export const emptyInput = z.object({}).strict();

export const checkinStatus = z.object({
  claimedToday: z.boolean(),
  /** Consecutive Lagos days with a claim, up to today (or yesterday, until today ends). */
  streak: z.number().int(),
  /** Naira accrued and not yet withdrawn. */
  accrued: z.number(),
  /** Naira a claim accrues. */
  reward: z.number(),
  /** Now when today is unclaimed; else the next Africa/Lagos midnight. */
  nextClaimAt: z.string(),
});

export const withdrawCheckinOutput = z.object({
  /** Naira moved into the wallet. */
  withdrawn: z.number(),
  /** The wallet balance after it. */
  balance: z.number(),
});

export const milestone = z.object({ threshold: z.number(), reachedAt: z.string() });

export const pendingMilestonesOutput = z.array(milestone);

export const ackMilestoneInput = z
  .object({
    threshold: z.number().positive().refine(isNairaAmount, { message: 'naira, at most two decimals' }),
  })
  .strict();

export const ackMilestoneOutput = milestone.extend({ acknowledgedAt: z.string() });

export const referralStatus = z.object({
  referralCode: z.string(),
  invitees: z.array(z.object({ name: z.string(), joinedAt: z.string(), qualified: z.boolean() })),
  /** Naira of referral bonus: locked for good, never spendable, never withdrawable. */
  lockedBonus: z.number(),
});
