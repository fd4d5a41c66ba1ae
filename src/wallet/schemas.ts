import { z } from 'zod';
import { dateRangeFields, requireOrderedRange } from '../date-filter.ts';
import { instantOutput, nairaMinPositive, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

export const walletView = z.object({
  balance: nairaOutput('Spendable balance'),
  lockedSavings: nairaOutput('Held in savings locks until they mature or are broken'),
  lockedBonus: nairaOutput('Referral bonus, locked for good'),
  checkinAccrued: nairaOutput('Check-in rewards accrued, withdrawable from the minimum on'),
  heldBalance: nairaOutput(
    "Credits over the tier's maximum balance (API.md 17.2): not spendable, moved into the balance by itself when the tier rises or the balance falls far enough",
  ),
  currency: z.literal('NGN'),
});

/**
 * What moved a wallet's money (API.md section 6). The modules that make the movements tell them
 * apart (each module's `movementKinds`, movement-kinds.ts); a movement none of them claims is an
 * `adjustment`.
 */
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
    "What moved the money: savings_release is a lock broken or matured; adjustment, an operator's correction (its reason in the description) or anything else",
  ),
  description: z.string(),
  direction: z.enum(['credit', 'debit']),
  amount: nairaOutput('Amount moved', { minimum: nairaMinPositive }),
  balanceAfter: nairaOutput('Wallet balance once this movement was posted'),
  createdAt: instantOutput(),
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
