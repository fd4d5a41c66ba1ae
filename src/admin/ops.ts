import { z } from 'zod';
import { reconcile, reconcileDefaults } from '../funding/reconcile.ts';
import { checkLedger } from '../ledger/check.ts';
import { defineOperation } from '../operation.ts';

export const adminOperations = [
  defineOperation({
    name: 'adminLedgerCheck',
    method: 'GET',
    auth: 'admin',
    summary: 'Verify every balance against its entries and that all entries sum to zero',
    tags: ['admin'],
    input: z.object({}).strict(),
    output: z.object({
      ok: z.boolean(),
      accounts: z.number().int(),
      entries: z.number().int(),
      imbalances: z.array(z.record(z.string(), z.string())),
    }),
    handler: ({ ctx }) => checkLedger(ctx.db),
  }),
  defineOperation({
    name: 'adminReconcile',
    method: 'POST',
    auth: 'admin',
    summary:
      'Reconcile now: re-verify pending top-ups older than a minute with the provider (crediting each once); returns counts',
    tags: ['admin'],
    input: z.object({}).strict(),
    output: z.object({
      topups: z.object({
        checked: z.number().int(),
        credited: z.number().int(),
        failed: z.number().int(),
        expired: z.number().int(),
        settledMeanwhile: z.number().int(),
        stillPending: z.number().int(),
        errors: z.number().int(),
      }),
    }),
    // The same run as the five-minute job, with the same limits: the next batch is one call away.
    handler: ({ ctx }) =>
      reconcile({ db: ctx.db, clock: ctx.clock, jobs: ctx.jobs, payments: ctx.payments }, reconcileDefaults),
  }),
];
