import { defineOperation } from '../operation.ts';
import { resolveDispute } from './refunds.ts';
import * as s from './schemas.ts';
import { adminListDisputes, type DisputeDeps, listMyDisputes, reportProblem } from './service.ts';

const tags = ['disputes'];

/** The disputes operations, closed over the module's deps. */
export const disputeOperations = (deps: DisputeDeps) => [
  defineOperation({
    name: 'reportProblem',
    method: 'POST',
    auth: 'user',
    summary: `Report a problem with one of your transactions (a purchase, a top-up, a transfer, ...) by its reference, within the dispute window (DISPUTE_WINDOW_DAYS, default 30: older is 422 ABOVE_MAXIMUM with details.limit in days). A reference that is not one of yours is 404 NOT_FOUND; one open dispute per transaction, else 409 CONFLICT`,
    tags,
    input: s.reportProblemInput,
    output: s.dispute,
    errors: ['NOT_FOUND', 'ABOVE_MAXIMUM', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) => reportProblem(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'listMyDisputes',
    method: 'GET',
    auth: 'user',
    summary:
      'Your reported problems and their outcomes, newest first; with reference, those of one transaction (how a receipt shows its dispute)',
    tags,
    input: s.listMyDisputesInput,
    output: s.listMyDisputesOutput,
    errors: [],
    handler: ({ caller, input }) =>
      listMyDisputes(
        deps,
        caller.userId,
        { status: input.status, reference: input.reference },
        { limit: input.limit, offset: input.offset },
      ),
  }),
  defineOperation({
    name: 'adminListDisputes',
    method: 'GET',
    auth: 'admin',
    summary:
      'Reported problems, newest first (of one status when asked), each with its transaction, the provider exchange and requery of a purchase, and what a refund may still give back',
    tags: ['admin', ...tags],
    input: s.adminListDisputesInput,
    output: s.adminListDisputesOutput,
    errors: [],
    handler: ({ input }) =>
      adminListDisputes(deps, { status: input.status }, { limit: input.limit, offset: input.offset }),
  }),
  defineOperation({
    name: 'adminResolveDispute',
    method: 'POST',
    auth: 'admin',
    summary:
      'Resolve an open dispute: refund (one ledger posting to the wallet, at most what the transaction still took after earlier refunds, else 422 ABOVE_MAXIMUM with details.limit; amount left out refunds all of it) or decline. A resolved dispute, a purchase still processing, or nothing left to refund is 409 CONFLICT. The person is notified',
    tags: ['admin', ...tags],
    input: s.adminResolveDisputeInput,
    output: s.dispute,
    errors: ['NOT_FOUND', 'CONFLICT', 'ABOVE_MAXIMUM'],
    handler: ({ caller, input, withCommit }) => resolveDispute(deps, withCommit, caller.userId, input),
  }),
];
