import type { Context } from '../context.ts';
import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { breakLock, createLock, listLocks, type SavingsDeps } from './service.ts';

const tags = ['savings'];

export const savingsDeps = (ctx: Context): SavingsDeps => ({
  db: ctx.db,
  clock: ctx.clock,
  jobs: ctx.jobs,
  config: ctx.config.savings,
});

export const savingsOperations = [
  defineOperation({
    name: 'createSavingsLock',
    method: 'POST',
    auth: 'user',
    summary: 'Lock an amount for a number of days; the wallet is debited at once',
    tags,
    input: s.createSavingsLockInput,
    output: s.savingsLock,
    errors: ['BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'INSUFFICIENT_FUNDS'],
    handler: ({ ctx, caller, input, withCommit }) =>
      createLock(savingsDeps(ctx), withCommit, caller.userId, input.amount, input.days),
  }),
  defineOperation({
    name: 'listSavingsLocks',
    method: 'GET',
    auth: 'user',
    summary: 'Your savings locks, newest first',
    tags,
    input: s.listSavingsLocksInput,
    output: s.listSavingsLocksOutput,
    errors: [],
    handler: async ({ ctx, caller, input }) => {
      const page = await listLocks(ctx.db, caller.userId, input);
      return {
        ...page,
        limit: input.limit,
        offset: input.offset,
        breakPenaltyPercent: Number(ctx.config.savings.breakPenaltyBp) / 100,
      };
    },
  }),
  defineOperation({
    name: 'breakSavingsLock',
    method: 'POST',
    auth: 'user',
    summary: 'Break an active lock early: the amount less the penalty goes back to the wallet',
    tags,
    input: s.breakSavingsLockInput,
    output: s.breakSavingsLockOutput,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ ctx, caller, input, withCommit }) =>
      breakLock(savingsDeps(ctx), withCommit, caller.userId, input.lockId),
  }),
];
