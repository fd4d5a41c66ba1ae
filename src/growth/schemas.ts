import { z } from 'zod';
import { instantOutput, nairaInput, nairaMinPositive, nairaOutput } from '../money-schemas.ts';

// Request and answer shapes of the growth features (API.md section 9).

export const emptyInput = z.object({}).strict();

export const checkinStatus = z.object({
  claimedToday: z.boolean(),
  /** Consecutive Lagos days with a claim, up to today (or yesterday, until today ends). */
  streak: z.number().int(),
  accrued: nairaOutput('Check-in rewards accrued and not yet withdrawn'),
  reward: nairaOutput('What one claim accrues'),
  nextClaimAt: instantOutput('Now when today is unclaimed; else the next Africa/Lagos midnight'),
});

export const withdrawCheckinOutput = z.object({
  withdrawn: nairaOutput('Amount moved into the wallet'),
  balance: nairaOutput('The wallet balance after it'),
});

export const milestone = z.object({
  threshold: nairaOutput('Total ever locked in savings that the milestone marks', {
    minimum: nairaMinPositive,
  }),
  reachedAt: instantOutput(),
});

export const pendingMilestonesOutput = z.array(milestone);

export const ackMilestoneInput = z
  .object({
    threshold: nairaInput('The threshold of a pending milestone'),
  })
  .strict();

export const ackMilestoneOutput = milestone.extend({ acknowledgedAt: instantOutput() });

export const referralStatus = z.object({
  referralCode: z.string(),
  invitees: z.array(z.object({ name: z.string(), joinedAt: instantOutput(), qualified: z.boolean() })),
  lockedBonus: nairaOutput('Referral bonus: locked for good, never spendable, never withdrawable'),
});
