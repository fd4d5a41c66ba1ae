import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';
import { nigerianPhone } from '../phone.ts';

// Request and answer shapes of bulk orders (API.md section 16): airtime or data for up to 100
// numbers, previewed without a PIN or a debit, then bought together, all or nothing.

/** API.md section 16: lines per order. */
export const bulkLinesMin = 1;
export const bulkLinesMax = 100;

export const bulkServices = ['airtime', 'data'] as const;
export type BulkService = (typeof bulkServices)[number];

const network = z.enum(['mtn', 'glo', 'airtel', '9mobile']);

/** One line: what buyAirtime or buyData takes, but the PIN (the order's, once). */
const line = z
  .object({
    network,
    phone: nigerianPhone,
    amount: nairaInput("Airtime: the face value; data: the plan's current retail price"),
    plan_id: z.string().trim().min(1).max(64).optional().describe('Data only: the plan (listDataPlans)'),
  })
  .strict();
export type BulkLine = z.output<typeof line>;

const lines = z.array(line).min(bulkLinesMin).max(bulkLinesMax);

/** A data line names its plan and an airtime line none, checked for the whole order at the edge. */
function requirePlans(input: { service: BulkService; lines: BulkLine[] }, ctx: z.RefinementCtx): void {
  input.lines.forEach((l, i) => {
    if (input.service === 'data' && l.plan_id === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['lines', i, 'plan_id'],
        message: 'a data line names its plan_id',
      });
    }
    if (input.service === 'airtime' && l.plan_id !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['lines', i, 'plan_id'],
        message: 'an airtime line has no plan_id',
      });
    }
  });
}

export const previewBulkOrderInput = z
  .object({ service: z.enum(bulkServices), lines })
  .strict()
  .superRefine(requirePlans);
export type PreviewBulkOrderRequest = z.output<typeof previewBulkOrderInput>;

export const createBulkOrderInput = z
  .object({
    service: z.enum(bulkServices),
    lines,
    total: nairaInput("The preview's total: what the lines cost together now"),
    pin,
  })
  .strict()
  .superRefine(requirePlans);
export type CreateBulkOrderRequest = z.output<typeof createBulkOrderInput>;

export const refusal = z.object({
  code: z.string(),
  message: z.string(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type Refusal = z.infer<typeof refusal>;

export const previewBulkOrderOutput = z.object({
  lines: z
    .array(
      z.object({
        phone: z.string(),
        ok: z.boolean(),
        amount: nairaOutput('What this line costs now (ok lines only)').optional(),
        refusal: refusal.optional().describe("What this line's purchase would be refused with"),
      }),
    )
    .describe('In the order given'),
  total: nairaOutput('What the lines that pass cost together now; createBulkOrder takes it'),
});
export type BulkPreview = z.infer<typeof previewBulkOrderOutput>;

const purchaseStatus = z.enum(['processing', 'success', 'failed']);

export const bulkOrder = z.object({
  id: z.string(),
  service: z.enum(bulkServices),
  status: z
    .enum(['processing', 'completed'])
    .describe('processing while any line is processing; completed once every line succeeded or failed'),
  lines: z
    .array(
      z.object({
        phone: z.string(),
        transactionId: z.string().optional(),
        status: purchaseStatus,
        amount: nairaOutput('What this line was charged').optional(),
        refusal: refusal.optional(),
      }),
    )
    .describe('In the order given; each line is its own purchase (getMyVtuTransaction)'),
  counts: z.object({ processing: z.number().int(), success: z.number().int(), failed: z.number().int() }),
  total: nairaOutput('What the lines were charged together'),
  charged: nairaOutput('Debited for the lines (every line is debited on acceptance)'),
  refunded: nairaOutput('Given back by the lines that failed'),
  createdAt: instantOutput(),
});
export type BulkOrderView = z.infer<typeof bulkOrder>;

export const getBulkOrderInput = z.object({ id: z.uuid() }).strict();

export const listBulkOrdersInput = z.object({ ...pageInput }).strict();
export const listBulkOrdersOutput = z.object({
  items: z.array(bulkOrder).describe('Newest first'),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});
