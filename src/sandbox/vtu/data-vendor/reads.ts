import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxDataOrder, SandboxDataState } from '../data-state.ts';
import { failedMessage, type Kind, orderJson, successMessage, wholeNumber } from './wire.ts';

// Reading orders back: one by id, or a page of them (20 a page, newest first, ?page=N). The first
// read of a pending order settles it: "later" is deterministic, with no timer to wait for.

const listPageSize = 20;

/** GET /api/<kind>/<id>: the order, settled if it was pending. */
export function readOrder(state: SandboxDataState, kind: Kind, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  const order = /^\d{1,12}$/.test(id)
    ? state.orders.find((o) => o.kind === kind && o.id === Number(id))
    : undefined;
  if (order === undefined) return reply.code(404).send({ detail: 'Not found.' });
  settle(state, order);
  return orderJson(order);
}

/** GET /api/<kind>/?page=N: a page of orders, each settled if it was pending. */
export function listOrders(
  state: SandboxDataState,
  listUrl: string,
  kind: Kind,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const rawPage = (request.query as { page?: unknown }).page;
  const page = rawPage === undefined ? 1 : wholeNumber(rawPage);
  const orders = state.orders.filter((o) => o.kind === kind).reverse();
  const pages = Math.max(1, Math.ceil(orders.length / listPageSize));
  if (page === null || page < 1 || page > pages) return reply.code(404).send({ detail: 'Invalid page.' });
  const results = orders.slice((page - 1) * listPageSize, page * listPageSize);
  for (const order of results) settle(state, order);
  const url = (n: number) => `${request.protocol}://${request.host}${listUrl}?page=${n}`;
  return {
    count: orders.length,
    next: page < pages ? url(page + 1) : null,
    previous: page > 1 ? url(page - 1) : null,
    results: results.map(orderJson),
  };
}

/** A pending order reaches its final state the first time anyone reads it. */
function settle(state: SandboxDataState, order: SandboxDataOrder): void {
  if (order.status !== 'pending' || order.settlesAs === null) return;
  order.status = order.settlesAs;
  order.settlesAs = null;
  if (order.status === 'failed') {
    state.balanceKobo += order.priceKobo;
    order.apiResponse = failedMessage(order.mobileNumber);
  } else {
    order.apiResponse = successMessage(order.kind, order.mobileNumber, order.plan, order.amountKobo);
  }
}
