import { z } from 'zod';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Request and answer shapes of disputes (API.md section 16): a person reports a problem with a
// movement of their wallet, and an operator resolves it with a refund or a decline.

export const disputeReasons = ['token_not_received', 'wrong_recipient', 'charged_twice', 'other'] as const;
export const disputeStatuses = ['open', 'refunded', 'declined'] as const;
export type DisputeStatus = (typeof disputeStatuses)[number];

/** The longest message a person writes, and an operator's reason. */
export const messageLengthMax = 1000;

const reference = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .describe(
    "The movement's reference: a purchase's (listMyVtuTransactions) or a wallet movement's (listTransactions)",
  );
const text = z.string().trim().min(1).max(messageLengthMax);

export const reportProblemInput = z
  .object({
    reference,
    reason: z.enum(disputeReasons),
    message: text.describe('What went wrong, in the words of the person (at most 1,000 characters)'),
  })
  .strict();
export type ReportProblemRequest = z.infer<typeof reportProblemInput>;

export const dispute = z.object({
  id: z.string(),
  reference: z.string(),
  reason: z.enum(disputeReasons),
  message: z.string(),
  status: z.enum(disputeStatuses),
  resolution: z.string().optional().describe("The operator's reason, once resolved"),
  refunded: nairaOutput('Given back to the wallet, when refunded').optional(),
  createdAt: instantOutput(),
  resolvedAt: instantOutput('When an operator resolved it').optional(),
});
export type DisputeView = z.infer<typeof dispute>;

export const listMyDisputesInput = z
  .object({
    ...pageInput,
    status: z.enum(disputeStatuses).optional(),
    reference: reference
      .optional()
      .describe(
        "Only the disputes of this movement, by any of its references (a purchase's, or one of its wallet movements')",
      ),
  })
  .strict();

const page = { limit: z.number().int(), offset: z.number().int(), total: z.number().int() };

export const listMyDisputesOutput = z.object({ items: z.array(dispute).describe('Newest first'), ...page });

export const adminListDisputesInput = z
  .object({ ...pageInput, status: z.enum(disputeStatuses).optional() })
  .strict();

/** The purchases' stored side of the exchange with the provider (vtu/purchase-records.ts). */
const exchange = z.object({
  request: z.record(z.string(), z.unknown()).describe('What the provider was asked for, as sent'),
  providerReference: z.string().optional(),
  sentAt: instantOutput().optional(),
  fundingReference: z.string().optional(),
  requeryAttempts: z.number().int(),
  nextRequeryAt: instantOutput().optional(),
  completedAt: instantOutput().optional(),
  failureReason: z.string().optional(),
});

const disputedTransaction = z.object({
  kind: z.enum(['purchase', 'wallet']).describe('A VTU purchase (or sale), or another wallet movement'),
  reference: z.string(),
  description: z.string(),
  charged: nairaOutput(
    "What the movement took from the person's accounts when it was reported (0 for a credit or a savings lock)",
  ),
  createdAt: instantOutput(),
  purchase: z
    .object({
      id: z.string(),
      status: z.enum(['processing', 'success', 'failed']),
      service: z.string(),
      provider: z.string(),
      network: z.string().optional(),
      recipient: z.string(),
      amount: nairaOutput('Charged to the wallet (a debit) or credited to it (a credit)'),
      direction: z.enum(['debit', 'credit']),
      refunded: nairaOutput('Refunded of a success delivered in part').optional(),
      token: z.string().optional(),
      pins: z.array(z.string()).optional(),
      failureReason: z.string().optional(),
    })
    .optional()
    .describe('The purchase as its buyer sees it'),
  exchange: exchange.optional().describe('The provider exchange and the requery, as the purchase keeps them'),
});

export const adminDispute = dispute.extend({
  userId: z.string(),
  phone: z.string().describe("The person's phone (E.164)"),
  transaction: disputedTransaction,
  refundable: nairaOutput(
    'What a refund may still give back (charged less what went back already); null while the purchase is processing',
  ).nullable(),
});
export type AdminDisputeView = z.infer<typeof adminDispute>;

export const adminListDisputesOutput = z.object({
  items: z.array(adminDispute).describe('Newest first'),
  ...page,
});

export const adminResolveDisputeInput = z
  .object({
    id: z.uuid(),
    decision: z.enum(['refund', 'decline']),
    amount: nairaInput('To refund (refund only); absent: all that is still refundable').optional(),
    reason: text.describe('Why: the person reads it in the notification of the outcome'),
  })
  .strict()
  .superRefine((input, ctx) => {
    if (input.decision === 'decline' && input.amount !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['amount'],
        message: 'a decline refunds nothing: leave amount out',
      });
    }
  });
export type ResolveDisputeRequest = z.infer<typeof adminResolveDisputeInput>;
