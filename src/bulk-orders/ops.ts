import { defineOperation } from '../operation.ts';
import * as s from './schemas.ts';
import {
  type BulkOrderDeps,
  createBulkOrder,
  getBulkOrder,
  listBulkOrders,
  previewBulkOrder,
} from './service.ts';

const tags = ['bulk-orders'];

/** What a line can be refused with: its purchase's own checks (buyAirtime's and buyData's). */
const lineRefusals = ['NETWORK_MISMATCH', 'BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'PRICE_CHANGED'] as const;

/** The bulk-order operations, closed over the module's deps. */
export const bulkOrderOperations = (deps: BulkOrderDeps) => [
  defineOperation({
    name: 'previewBulkOrder',
    method: 'POST',
    auth: 'user',
    summary: `Check airtime or data for ${s.bulkLinesMin}-${s.bulkLinesMax} numbers without a PIN or a debit: each line ok or the refusal its purchase would get, and the total of the lines that pass`,
    tags,
    input: s.previewBulkOrderInput,
    output: s.previewBulkOrderOutput,
    errors: ['KYC_TIER_REQUIRED', 'UPSTREAM_UNAVAILABLE', 'SERVICE_PAUSED'],
    handler: ({ caller, input }) => previewBulkOrder(deps, caller.userId, input),
  }),
  defineOperation({
    name: 'createBulkOrder',
    method: 'POST',
    auth: 'user',
    summary:
      "Buy airtime or data for every line, all or nothing: refused whole (nothing debited) when a line would be refused (the first refused line's code, details.lines lists them all), when `total` is not what the lines cost now (409 PRICE_CHANGED, details.amount) or when the wallet does not cover it (409 INSUFFICIENT_FUNDS); otherwise each line is its own purchase",
    tags,
    input: s.createBulkOrderInput,
    output: s.bulkOrder,
    errors: [
      'KYC_TIER_REQUIRED',
      'PIN_NOT_SET',
      'INVALID_PIN',
      'PIN_LOCKED',
      'INSUFFICIENT_FUNDS',
      'ACCOUNT_FROZEN',
      'LIMIT_EXCEEDED',
      'UPSTREAM_UNAVAILABLE',
      'SERVICE_PAUSED',
      ...lineRefusals,
    ],
    handler: ({ caller, input, withCommit }) => createBulkOrder(deps, withCommit, caller.userId, input),
  }),
  defineOperation({
    name: 'getBulkOrder',
    method: 'POST',
    auth: 'user',
    summary: "One of your bulk orders with its lines' statuses (another user's is 404)",
    tags,
    input: s.getBulkOrderInput,
    output: s.bulkOrder,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) => getBulkOrder(deps, caller.userId, input.id),
  }),
  defineOperation({
    name: 'listBulkOrders',
    method: 'GET',
    auth: 'user',
    summary: 'Your bulk orders, newest first',
    tags,
    input: s.listBulkOrdersInput,
    output: s.listBulkOrdersOutput,
    errors: [],
    handler: ({ caller, input }) => listBulkOrders(deps, caller.userId, input),
  }),
];
