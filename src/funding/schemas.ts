import { z } from 'zod';
import { nairaInput, nairaOutput } from '../money-schemas.ts';

/** Top-up limits in naira (API.md section 6). */
export const topupNairaMin = 100;
export const topupNairaMax = 1_000_000;

// An amount above the maximum is refused with ABOVE_MAXIMUM by the service, even one too large to
// be a naira amount at all, and one below the minimum with BELOW_MINIMUM; anything else must be naira
// with at most two decimals (400 otherwise).
const topupAmount = nairaInput('Amount to add to the wallet', {
  minimum: topupNairaMin,
  maximum: topupNairaMax,
  zeroAllowed: true,
  ruleRefusesAbove: topupNairaMax,
});

export const createTopupInput = z.object({ amount: topupAmount }).strict();

export const topupStatus = z.enum(['pending', 'success', 'failed']);

export const createTopupOutput = z.object({
  reference: z.string(),
  checkoutUrl: z.string(),
  amount: nairaOutput('Amount the checkout asks for', { minimum: topupNairaMin, maximum: topupNairaMax }),
  status: z.literal('pending'),
});

export const verifyTopupInput = z.object({ reference: z.string().trim().min(1).max(100) }).strict();

export const verifyTopupOutput = z.object({
  reference: z.string(),
  status: topupStatus,
  credited: z.boolean(),
});

export const requestDedicatedAccountInput = z.object({}).strict();

export const dedicatedAccountOutput = z.object({
  accountNumber: z.string(),
  accountName: z.string(),
  bankName: z.string(),
});
