import { z } from 'zod';
import { instantOutput, nairaInput, nairaMinPositive, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Request and answer shapes of savings locks (API.md section 9).

/** The most any lock can hold: SAVINGS_LOCK_MAX is at most ₦1,000,000,000 (config.ts). */
const savingsNairaMax = 1_000_000_000;

export const lockStatus = z.enum(['active', 'matured', 'broken']);

export const savingsLock = z.object({
  id: z.string(),
  amount: nairaOutput('Amount locked', { minimum: nairaMinPositive, maximum: savingsNairaMax }),
  days: z.number().int(),
  status: lockStatus,
  penalty: nairaOutput('Amount kept when the lock was broken early; 0 otherwise', {
    maximum: savingsNairaMax,
  }),
  createdAt: instantOutput(),
  maturesAt: instantOutput('When the amount comes back to the wallet'),
  closedAt: instantOutput('When the lock matured or was broken').nullable(),
});

// The limits are configuration, so the service answers them (422 with details.limit); anything
// that is not naira with at most two decimals is a 400, except an amount too large to be naira
// exactly, which is above any maximum all the same.
const lockAmount = nairaInput('Amount to lock, debited from the wallet at once', {
  maximum: savingsNairaMax,
  zeroAllowed: true,
  ruleRefusesAbove: savingsNairaMax,
});

export const createSavingsLockInput = z
  .object({ amount: lockAmount, days: z.number().int('a whole number of days') })
  .strict();

export const listSavingsLocksInput = z.object({ ...pageInput, status: lockStatus.optional() }).strict();

export const listSavingsLocksOutput = z.object({
  items: z.array(savingsLock),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
  /** The percent of an active lock's amount that breaking it early keeps, so a client can show it first. */
  breakPenaltyPercent: z.number(),
});

export const breakSavingsLockInput = z.object({ lockId: z.uuid() }).strict();

export const breakSavingsLockOutput = z.object({
  lock: savingsLock,
  refunded: nairaOutput('Amount credited back to the wallet: the amount less the penalty', {
    maximum: savingsNairaMax,
  }),
  penalty: nairaOutput('Amount kept for breaking the lock early', { maximum: savingsNairaMax }),
});
