import { defineOperation } from '../operation.ts';
import {
  accountDeletionOf,
  cancelAccountDeletion,
  type RequestDeps,
  requestAccountDeletion,
} from './requests.ts';
import * as s from './schemas.ts';

const tags = ['accounts'];

/** Closing an account (API.md 17.3), closed over the module's deps. */
export const accountClosureOperations = (deps: RequestDeps) => [
  defineOperation({
    name: 'requestAccountDeletion',
    method: 'POST',
    auth: 'user',
    summary:
      'Ask to close your account, with your transaction PIN: it closes after ACCOUNT_DELETION_GRACE_DAYS (effectiveAt), and until then it works as before and cancelAccountDeletion stops it. Refused with 409 CONFLICT and details.reasons listing every one of balance_not_zero, held_balance, purchases_processing, open_dispute, active_savings, active_schedules that applies. Asking again while one is pending answers its effectiveAt. When it closes, sessions, devices, beneficiaries and schedules are deleted, the phone, names and email replaced by a pseudonym (the phone and NIN are free for a new account), and the ledger, transactions and KYC records kept for RETENTION_YEARS (docs/privacy.md)',
    tags,
    input: s.requestAccountDeletionInput,
    output: s.requestAccountDeletionOutput,
    errors: ['PIN_NOT_SET', 'INVALID_PIN', 'PIN_LOCKED', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) =>
      requestAccountDeletion(deps, withCommit, caller.userId, input.pin),
  }),
  defineOperation({
    name: 'cancelAccountDeletion',
    method: 'POST',
    auth: 'user',
    summary:
      'Cancel the closing of your account before its effectiveAt: it stays open. 409 CONFLICT when no closing is pending, or its time has come',
    tags,
    input: s.cancelAccountDeletionInput,
    output: s.cancelAccountDeletionOutput,
    errors: ['CONFLICT'],
    handler: ({ caller, withCommit }) => cancelAccountDeletion(deps, withCommit, caller.userId),
  }),
  defineOperation({
    name: 'getAccountDeletion',
    method: 'GET',
    auth: 'user',
    summary:
      'Whether your account is waiting to close (and when), and the reasons that would stop it closing now: what Settings shows before asking for the PIN',
    tags,
    input: s.getAccountDeletionInput,
    output: s.accountDeletionView,
    errors: [],
    handler: ({ caller }) => accountDeletionOf(deps, caller.userId),
  }),
];
