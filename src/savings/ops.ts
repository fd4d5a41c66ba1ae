import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { breakLock, createLock, listLocks, type SavingsDeps } from './service.ts';

const tags = ['savings'];

/** The savings operations, closed over the module's deps. */
export const savingsOperations = (deps: SavingsDeps) => [
  defineOperation({
    name: 'createSavingsLock',
    method: 'POST',
    auth: 'user',
    summary: 'Lock an amount for a number of days; the wallet is debited at once',
    tags,
    input: s.createSavingsLockInput,
    output: s.savingsLock,
    errors: ['BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'INSUFFICIENT_FUNDS'],
    handler: ({ caller, input, withCommit }) =>
      createLock(deps, withCommit, caller.userId, input.amount, input.days),
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
    handler: async ({ caller, input }) => {
      const page = await listLocks(deps.db, caller.userId, input);
      return {
        ...page,
        limit: input.limit,
        offset: input.offset,
        breakPenaltyPercent: Number(deps.config.breakPenaltyBp) / 100,
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
    handler: ({ caller, input, withCommit }) => breakLock(deps, withCommit, caller.userId, input.lockId),
  }),
];
