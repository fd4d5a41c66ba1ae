import { z } from 'zod';
import { dateRangeFields, requireOrderedRange } from '../date-filter.ts';
import { isNairaAmount } from '../money.ts';
import { pageInput } from '../paging.ts';

/** Top-up limits in naira (API.md section 6). */
export const topupNairaMin = 100;
export const topupNairaMax = 1_000_000;

// An amount above the maximum is refused with ABOVE_MAXIMUM by the service, even one too large to
// be a naira amount at all; anything else must be naira with at most two decimals (400 otherwise).
const topupAmount = z.number().refine((n) => isNairaAmount(n) || (Number.isFinite(n) && n > topupNairaMax), {
  message: 'naira, at most two decimals',
});

export const createTopupInput = z.object({ amount: topupAmount }).strict();

export const topupStatus = z.enum(['pending', 'success', 'failed']);

export const createTopupOutput = z.object({
  reference: z.string(),
  checkoutUrl: z.string(),
  amount: z.number(),
  status: z.literal('pending'),
});

export const verifyTopupInput = z.object({ reference: z.string().trim().min(1).max(100) }).strict();

export const verifyTopupOutput = z.object({
  reference: z.string(),
  status: topupStatus,
  credited: z.boolean(),
});

/** What moved a wallet's money (API.md section 6); src/funding/movement-kinds.ts tells them apart. */
export const movementKinds = [
  'topup',
  'bank_transfer',
  'transfer_in',
  'transfer_out',
  'purchase',
  'refund',
  'airtime_cash',
  'savings_lock',
  'savings_release',
  'reward',
  // An operator's refund of a disputed movement (src/disputes/refunds.ts).
  'dispute_refund',
  'adjustment',
] as const;

export type MovementKind = (typeof movementKinds)[number];

const movementKind = z.enum(movementKinds);

export const listTransactionsInput = z
  .object({
    ...pageInput,
    kind: movementKind.optional().describe('Only movements of this kind'),
    ...dateRangeFields,
  })
  .strict()
  .superRefine(requireOrderedRange);

export const walletTransaction = z.object({
  id: z.string(),
  reference: z.string(),
  kind: movementKind.describe(
    'What moved the money: savings_release is a lock broken or matured; adjustment, anything else (a correction)',
  ),
  description: z.string(),
  direction: z.enum(['credit', 'debit']),
  amount: z.number(),
  balanceAfter: z.number(),
  createdAt: z.string(),
  counterparty: z
    .string()
    .optional()
    .describe("Transfers: the other person's name as others see it (surname masked: Adaeze O.)"),
  purchaseId: z
    .string()
    .optional()
    .describe('Purchases, their refunds and airtime-to-cash sales: the id getMyVtuTransaction takes'),
});

export const listTransactionsOutput = z.object({
  items: z.array(walletTransaction),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

/** A wallet-history id is the ledger entry's id: a positive int8, written in decimal. */
export const getTransactionInput = z
  .object({ id: z.string().regex(/^[1-9]\d{0,18}$/, 'a wallet transaction id') })
  .strict();

export const requestDedicatedAccountInput = z.object({}).strict();

export const dedicatedAccountOutput = z.object({
  accountNumber: z.string(),
  accountName: z.string(),
  bankName: z.string(),
});
