import { z } from 'zod';
import { instantOutput, nairaInput, nairaMinPositive, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Request and answer shapes of adjustments (API.md section 17.4): an operator proposes a correction
// of a person's wallet, another approves it (one posting) or either rejects it.

export const adjustmentDirections = ['credit', 'debit'] as const;
export const adjustmentStatuses = ['proposed', 'approved', 'rejected'] as const;
export type AdjustmentStatus = (typeof adjustmentStatuses)[number];

/** The longest reason an operator writes (the person reads the proposal's in their history). */
export const reasonLengthMax = 500;

const reason = z.string().trim().min(1).max(reasonLengthMax);

export const proposeAdjustmentInput = z
  .object({
    userId: z.uuid().describe('The person whose wallet is corrected'),
    direction: z
      .enum(adjustmentDirections)
      .describe('credit adds to the wallet, debit takes from it (never below zero)'),
    amount: nairaInput('To move'),
    reason: reason.describe(
      'Why (at most 500 characters): the person reads it in their wallet history once it is approved',
    ),
  })
  .strict();
export type ProposeAdjustmentRequest = z.infer<typeof proposeAdjustmentInput>;

export const approveAdjustmentInput = z.object({ id: z.uuid() }).strict();

export const rejectAdjustmentInput = z
  .object({
    id: z.uuid(),
    reason: reason.describe('Why it is not made (at most 500 characters), for the operators'),
  })
  .strict();
export type RejectAdjustmentRequest = z.infer<typeof rejectAdjustmentInput>;

export const adjustment = z.object({
  id: z.string(),
  userId: z.string(),
  phone: z.string().describe("The person's phone (E.164)"),
  direction: z.enum(adjustmentDirections),
  amount: nairaOutput('Moved, or to move', { minimum: nairaMinPositive }),
  reason: z.string(),
  status: z
    .enum(adjustmentStatuses)
    .describe('proposed until another operator approves it (posted) or an operator rejects it'),
  proposedBy: z.string().describe("The proposing operator's user id"),
  proposedAt: instantOutput(),
  decidedBy: z.string().optional().describe("The approving or rejecting operator's user id, once decided"),
  decidedAt: instantOutput('When it was approved or rejected').optional(),
  rejectReason: z.string().optional().describe("The rejecting operator's reason, when rejected"),
  reference: z
    .string()
    .optional()
    .describe("The posting's reference, when approved: the person's wallet history shows it"),
});
export type AdjustmentView = z.infer<typeof adjustment>;

export const listAdjustmentsInput = z
  .object({ ...pageInput, status: z.enum(adjustmentStatuses).optional() })
  .strict();

export const listAdjustmentsOutput = z.object({
  items: z.array(adjustment).describe('Newest proposal first'),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});
