import { z } from 'zod';
import { isNairaAmount } from '../money.ts';
import { pageInput } from '../paging.ts';

// Request and answer shapes of savings locks (API.md section 9).

export const lockStatus = z.enum(['active', 'matured', 'broken']);

export const savingsLock = z.object({
  id: z.string(),
  /** Naira locked. */
  amount: z.number(),
  days: z.number().int(),
  status: lockStatus,
  /** Naira kept when the lock was broken early; 0 otherwise. */
  penalty: z.number(),
  createdAt: z.string(),
  maturesAt: z.string(),
  closedAt: z.string().nullable(),
});

// The limits are configuration, so the service answers them (422 with details.limit); anything
// that is not naira with at most two decimals is a 400, except an amount too large to be naira
// exactly, which is above any maximum all the same.
const lockAmount = z.number().refine((n) => isNairaAmount(n) || (Number.isFinite(n) && n > 1_000_000_000), {
  message: 'naira, at most two decimals',
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
  /** Naira credited back to the wallet: the amount less the penalty. */
  refunded: z.number(),
  penalty: z.number(),
});
