import { z } from 'zod';
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
];
