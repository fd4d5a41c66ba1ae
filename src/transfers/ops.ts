import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import { lookupRecipient, type TransferDeps, transferToUser } from './service.ts';

const tags = ['transfers'];

/** The transfer operations, closed over the module's deps. */
export const transferOperations = (deps: TransferDeps) => [
  defineOperation({
    name: 'lookupRecipient',
    method: 'POST',
    auth: 'user',
    summary: 'The name of the user a phone belongs to, surname masked, before a transfer (KYC tier 2)',
    tags,
    input: s.lookupRecipientInput,
    output: s.lookupRecipientOutput,
    errors: ['KYC_TIER_REQUIRED', 'NOT_FOUND'],
    handler: ({ caller, input }) => lookupRecipient(deps, caller.userId, input.phone),
  }),
  defineOperation({
    name: 'transferToUser',
    method: 'POST',
    auth: 'user',
    summary:
      "Send money from your wallet to another user's (KYC tier 2): one posting across both wallets, within the per-transfer and daily limits",
    tags,
    input: s.transferToUserInput,
    output: s.transferOutput,
    errors: [
      'KYC_TIER_REQUIRED',
      'PIN_NOT_SET',
      'INVALID_PIN',
      'PIN_LOCKED',
      'NOT_FOUND',
      'BELOW_MINIMUM',
      'ABOVE_MAXIMUM',
      'INSUFFICIENT_FUNDS',
      'ACCOUNT_FROZEN',
      'LIMIT_EXCEEDED',
    ],
    handler: ({ caller, input, withCommit }) => transferToUser(deps, withCommit, caller.userId, input),
  }),
];
