import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { instantOutput } from '../money-schemas.ts';

// Request and answer shapes of closing an account (API.md 17.3, decision 0047).

/** What stops an account closing, each a thing the person can do something about (details.reasons). */
export const closureReasons = [
  'balance_not_zero',
  'held_balance',
  'purchases_processing',
  'open_dispute',
  'active_savings',
  'active_schedules',
] as const;
export type ClosureReason = (typeof closureReasons)[number];

export const requestAccountDeletionInput = z.object({ pin }).strict();
export const requestAccountDeletionOutput = z.object({
  effectiveAt: instantOutput(
    'When the account closes (ACCOUNT_DELETION_GRACE_DAYS after the request); cancelAccountDeletion stops it until then',
  ),
});

export const cancelAccountDeletionInput = z.object({}).strict();
export const cancelAccountDeletionOutput = z.object({
  cancelledAt: instantOutput('When the closing was cancelled: the account stays open'),
});

export const getAccountDeletionInput = z.object({}).strict();
export const accountDeletionView = z.object({
  pending: z
    .object({ requestedAt: instantOutput(), effectiveAt: instantOutput('When the account closes') })
    .nullable()
    .describe('The request in its grace period, if any'),
  reasons: z
    .array(z.enum(closureReasons))
    .describe(
      'What would stop the account closing now (requestAccountDeletion refuses with them; at the effective time they cancel a pending request)',
    ),
});
export type AccountDeletionView = z.infer<typeof accountDeletionView>;
