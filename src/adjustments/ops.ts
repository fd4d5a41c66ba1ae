import { defineOperation } from '../operation.ts';
import { approveAdjustment, rejectAdjustment } from './decisions.ts';
import * as s from './schemas.ts';
import { type AdjustmentDeps, listAdjustments, proposeAdjustment } from './service.ts';

const tags = ['admin', 'adjustments'];

/** The adjustments operations, closed over the module's deps. */
export const adjustmentOperations = (deps: AdjustmentDeps) => [
  defineOperation({
    name: 'adminProposeAdjustment',
    method: 'POST',
    auth: 'admin',
    summary:
      "Propose a correction of a person's wallet: a credit or a debit with its reason. Nothing moves until another administrator approves it (adminApproveAdjustment). An unknown userId is 404 NOT_FOUND",
    tags,
    input: s.proposeAdjustmentInput,
    output: s.adjustment,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input, withCommit }) => proposeAdjustment(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'adminApproveAdjustment',
    method: 'POST',
    auth: 'admin',
    summary:
      "Approve another administrator's proposed adjustment: one ledger posting against the adjustments account, once; the person sees it in their history as kind adjustment, with the reason. The proposer (or the person adjusted) gets 403 FORBIDDEN with details.reason four_eyes; a debit the wallet does not cover is 409 INSUFFICIENT_FUNDS and the adjustment stays proposed; one already decided is 409 CONFLICT",
    tags,
    input: s.approveAdjustmentInput,
    output: s.adjustment,
    errors: ['NOT_FOUND', 'FORBIDDEN', 'CONFLICT', 'INSUFFICIENT_FUNDS'],
    handler: ({ caller, input, withCommit }) => approveAdjustment(deps, withCommit, caller.userId, input.id),
  }),
  defineOperation({
    name: 'adminRejectAdjustment',
    method: 'POST',
    auth: 'admin',
    summary:
      'Reject a proposed adjustment, with the reason: nothing moves. Any administrator may, its proposer included (a withdrawal); one already decided is 409 CONFLICT',
    tags,
    input: s.rejectAdjustmentInput,
    output: s.adjustment,
    errors: ['NOT_FOUND', 'CONFLICT'],
    handler: ({ caller, input, withCommit }) => rejectAdjustment(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'adminListAdjustments',
    method: 'GET',
    auth: 'admin',
    summary:
      'Adjustments, newest proposal first (of one status when asked: proposed ones wait for a decision)',
    tags,
    input: s.listAdjustmentsInput,
    output: s.listAdjustmentsOutput,
    errors: [],
    handler: ({ input }) =>
      listAdjustments(deps, { status: input.status }, { limit: input.limit, offset: input.offset }),
  }),
];
