import { defineOperation } from '../operation.ts';
import { type DedicatedAccountDeps, requestDedicatedAccount } from './dedicated-accounts.ts';
import * as s from './schemas.ts';
import { createTopupIntent, type FundingDeps, verifyTopup } from './service.ts';

const tags = ['funding'];

/** The funding operations, closed over the module's deps. */
export const fundingOperations = (deps: FundingDeps & Pick<DedicatedAccountDeps, 'preferredBank'>) => [
  defineOperation({
    name: 'createTopupIntent',
    method: 'POST',
    auth: 'user',
    summary: 'Start a wallet top-up: a reference and the checkout URL to pay at (₦100 – ₦1,000,000)',
    tags,
    input: s.createTopupInput,
    output: s.createTopupOutput,
    errors: ['NOT_FOUND', 'BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller, input }) => createTopupIntent(deps, caller.userId, input.amount),
  }),
  defineOperation({
    name: 'verifyTopup',
    method: 'POST',
    auth: 'user',
    summary: 'Ask the payment provider about one of your top-ups; credits the wallet once on success',
    tags,
    input: s.verifyTopupInput,
    output: s.verifyTopupOutput,
    errors: ['NOT_FOUND', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller, input }) => verifyTopup(deps, caller.userId, input.reference),
  }),
  defineOperation({
    name: 'requestDedicatedAccount',
    method: 'POST',
    auth: 'user',
    summary:
      'Your permanent bank account number for wallet funding by transfer (KYC tier 2); the same every time',
    tags,
    input: s.requestDedicatedAccountInput,
    output: s.dedicatedAccountOutput,
    errors: ['KYC_TIER_REQUIRED', 'NOT_FOUND', 'CONFLICT', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller }) => requestDedicatedAccount(deps, caller.userId),
  }),
];
