import { z } from 'zod';
import { dateRangeFields, requireOrderedRange } from '../date-filter.ts';
import { instantOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';

// Schemas of the audit log's listing (adminListAuditLog, API.md section 17.4).

export const listAuditLogInput = z
  .object({
    ...pageInput,
    adminId: z.uuid().optional().describe('Only what this user did (or tried) as an administrator'),
    operation: z.string().min(1).max(100).optional().describe('Only this operation (adminFreezeUser, ...)'),
    ...dateRangeFields,
  })
  .strict()
  .superRefine(requireOrderedRange);

export const auditEntryView = z.object({
  id: z.uuid(),
  at: instantOutput('When the operation was answered'),
  adminId: z.uuid().describe('Who called it: an administrator, or a user refused for lacking the role'),
  operation: z.string(),
  input: z
    .unknown()
    .describe(
      'The input as sent (PINs, codes, secrets, tokens and passwords redacted); null when never read',
    ),
  outcome: z.string().describe('`ok`, `replayed` (an Idempotency-Key answered again), or the error code'),
  ip: z.string(),
});

export const listAuditLogOutput = z.object({
  items: z.array(auditEntryView),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});
