import { nairaToKobo } from '../money.ts';
import { defineOperation } from '../operation.ts';
import { type AccountLimitsDeps, accountLimitsOf, setPersonalDailyLimit } from './account-limits.ts';
import * as s from './schemas.ts';

// The account limits (API.md 17.2): what a person may move and hold, and their own daily limit.

export type LimitsOpsDeps = AccountLimitsDeps & {
  now: () => Date;
  verifyTransactionPin: (userId: string, pin: string) => Promise<void>;
};

const tags = ['limits'];

export const limitsOperations = (deps: LimitsOpsDeps) => [
  defineOperation({
    name: 'getAccountLimits',
    method: 'GET',
    auth: 'user',
    summary:
      "The caller's CBN tier limits: the daily debit limit (the tighter of the tier's and their own), what left the wallet today (Africa/Lagos) and what remains, the maximum balance and what is held over it, when the day resets, and the next tier's limits",
    tags,
    input: s.getAccountLimitsInput,
    output: s.accountLimitsView,
    errors: [],
    handler: ({ caller }) => accountLimitsOf(deps, caller.userId, deps.now()),
  }),
  defineOperation({
    name: 'setPersonalDailyLimit',
    method: 'POST',
    auth: 'user',
    summary:
      'Set your own daily debit limit (null removes it), with the PIN: lower than the one in force takes effect at once; higher, or none, from the next Africa/Lagos day',
    tags,
    input: s.setPersonalDailyLimitInput,
    output: s.accountLimitsView,
    errors: ['INVALID_PIN', 'PIN_LOCKED', 'PIN_NOT_SET'],
    handler: async ({ caller, input }) => {
      await deps.verifyTransactionPin(caller.userId, input.pin);
      const amountKobo = input.amount === null ? null : nairaToKobo(input.amount);
      return setPersonalDailyLimit(deps, caller.userId, amountKobo, deps.now());
    },
  }),
];
