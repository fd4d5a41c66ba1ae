import { z } from 'zod';
import { dateRangeFields, requireOrderedRange } from '../date-filter.ts';
import { instantOutput, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Request and answer shapes of the reconciliation with the providers' records (API.md 17.5).

export const reconciliationSources = ['payments', 'data', 'bills', 'social'] as const;
export type Source = (typeof reconciliationSources)[number];
export const buckets = [
  'matched',
  'missingHere',
  'missingThere',
  'amountMismatch',
  'statusMismatch',
] as const;
export type Bucket = (typeof buckets)[number];
export const resolutionActions = ['credit', 'requery', 'ignore'] as const;
export type ResolutionAction = (typeof resolutionActions)[number];

/** The longest period one run compares: a month (the morning's run is a day). */
export const periodDaysMax = 31;

const required = <T extends z.ZodType>(field: z.ZodOptional<T>) => field.unwrap();

export const runReconciliationInput = z
  .object({
    source: z
      .enum(reconciliationSources)
      .describe(
        "payments: the payment provider's transaction list against our top-ups and bank deposits; data, bills, social: every purchase routed to that provider requeried (and the data vendor's own order list)",
      ),
    from: required(dateRangeFields.from),
    to: required(dateRangeFields.to),
  })
  .strict()
  .superRefine(requireOrderedRange);
export type RunReconciliationRequest = z.infer<typeof runReconciliationInput>;

const counts = z.object({
  matched: z.number().int(),
  missingHere: z.number().int().describe('The provider has it, we do not (or never credited it)'),
  missingThere: z.number().int().describe('We have it, the provider does not'),
  amountMismatch: z.number().int(),
  statusMismatch: z
    .number()
    .int()
    .describe('The worst: we refunded what the provider delivered, or charged for what it failed'),
});

export const reconciliationRun = z.object({
  id: z.uuid(),
  source: z.enum(reconciliationSources),
  from: instantOutput('The period compared starts here (included)'),
  to: instantOutput('… and ends here (excluded)'),
  status: z.enum(['running', 'done', 'failed']),
  counts,
  providerList: z
    .boolean()
    .describe(
      'False where the provider keeps no list we can read (VTpass, the SMM panel): only purchases known here were compared, so missingHere cannot be seen',
    ),
  requestedBy: z.uuid().optional().describe("The operator who asked; absent for the morning's run"),
  error: z.string().optional().describe('Why a failed run failed (a provider that could not be read)'),
  createdAt: instantOutput(),
  finishedAt: instantOutput().optional(),
});
export type ReconciliationRunView = z.infer<typeof reconciliationRun>;

/** One side's record of an item, as the run read it. */
const record = z.object({
  status: z.string().describe('success, failed, pending, processing, abandoned, reversed, …'),
  amount: nairaOutput('The amount on this side; absent when this side did not say').optional(),
  at: instantOutput('When it was made').optional(),
  userId: z.uuid().optional(),
  kind: z
    .string()
    .optional()
    .describe('Ours: topup, bank_deposit or the purchase service; theirs: the payment channel or order kind'),
  providerReference: z.string().optional(),
  recipient: z
    .string()
    .optional()
    .describe(
      'The phone, meter, smartcard or account it was for (a purchase): whose it was, with no record here',
    ),
  note: z.string().optional(),
});
export type RecordView = z.infer<typeof record>;

export const reconciliationItem = z.object({
  id: z.uuid(),
  bucket: z.enum(buckets),
  reference: z.string().describe("Our reference (the provider's, for a payment)"),
  ours: record.optional().describe('Absent when we have no record'),
  theirs: record.optional().describe('Absent when the provider has none'),
  actions: z
    .array(z.enum(resolutionActions))
    .describe(
      'What adminResolveReconciliationItem takes for this item now: credit (a payment the provider took that we never credited), requery (a purchase), ignore; none once resolved',
    ),
  resolution: z
    .object({
      action: z.enum(resolutionActions),
      reason: z.string(),
      outcome: z
        .string()
        .describe('What the action did: credited, already_credited, the requery answer, ignored'),
      by: z.uuid(),
      at: instantOutput(),
    })
    .optional(),
});
export type ReconciliationItemView = z.infer<typeof reconciliationItem>;

export const getReconciliationInput = z
  .object({
    id: z.uuid(),
    bucket: z.enum(buckets).optional().describe('Only the items of this bucket'),
    limit: z.coerce.number().int().min(1).max(5000).default(1000),
    offset: z.coerce.number().int().min(0).max(10_000_000).default(0),
  })
  .strict();

export const reconciliationWithItems = reconciliationRun.extend({
  items: z.array(reconciliationItem).describe('The worst buckets first, then by reference'),
  itemCount: z.number().int().describe('How many items (of the bucket asked) the run has in all'),
});
export type ReconciliationWithItemsView = z.infer<typeof reconciliationWithItems>;

export const listReconciliationsInput = z
  .object({ ...pageInput, source: z.enum(reconciliationSources).optional() })
  .strict();

export const listReconciliationsOutput = z.object({
  items: z.array(reconciliationRun).describe('Newest first'),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

export const resolveItemInput = z
  .object({
    id: z.uuid().describe("The item's id"),
    action: z
      .enum(resolutionActions)
      .describe(
        'credit: credit a payment the provider took and we did not (once, as a verified top-up); requery: ask the VTU provider again (a purchase still processing is settled by the answer, as the requery job would); ignore: record the reason, change nothing',
      ),
    reason: z.string().trim().min(1).max(500).describe('Why, for the audit trail (at most 500 characters)'),
  })
  .strict();
