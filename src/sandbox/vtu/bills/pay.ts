import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { billsServiceById } from '../bills-catalogue.ts';
import { type OrderPlan, orderFor } from './orders.ts';
import { withoutDelivery } from './products.ts';
import type { OrderStatus, SandboxBillsOrder, SandboxBillsState } from './state.ts';
import { answerFor, asBody, codeOnly, requestIdIsCurrent, routeOptions, text } from './wire.ts';

// VTpass's /pay and /requery: a purchase's outcome by the last digit of its recipient (../bills.ts
// has the rules), settled by the next requery when it starts pending, and a token or pins held back
// at delivery released by the next requery.

/** The bills simulator as its routes see it: its state, its clock, and the requests it holds open. */
export type BillsSimulator = {
  state: SandboxBillsState;
  clock: { now(): Date };
  /** Requests left unanswered on purpose (digit 4), released all at once when the app closes. */
  held: Set<Held>;
};

export type Held = { socket: Socket; timer: NodeJS.Timeout };

export function registerPayRoutes(api: FastifyInstance, sim: BillsSimulator): void {
  api.post('/pay', routeOptions, async (request, reply) => pay(sim, request, reply));
  api.post('/requery', routeOptions, async (request) => requery(sim, request));
}

function pay(sim: BillsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { state } = sim;
  const body = asBody(request.body);
  const requestId = text(body.request_id);
  if (requestId === undefined || requestId === '') return codeOnly('011', 'INVALID ARGUMENTS');
  if (!requestIdIsCurrent(requestId, sim.clock.now())) return codeOnly('085', 'IMPROPER REQUEST ID');
  if (state.orders.has(requestId)) return codeOnly('014', 'REQUEST ID ALREADY EXIST');
  const service = billsServiceById.get(text(body.serviceID) ?? '');
  if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
  const plan = orderFor(service, body);
  if ('refusal' in plan) return plan.refusal;
  const record = (status: OrderStatus, settlesTo: SandboxBillsOrder['settlesTo'], chargedKobo: bigint) =>
    recordOrder(sim, { requestId, serviceID: service.serviceID, plan }, { status, settlesTo, chargedKobo });

  if (state.balanceKobo < plan.wholesaleKobo) return codeOnly('018', 'LOW WALLET BALANCE');
  const digit = plan.recipient.at(-1);
  if (digit === '1') return answerFor(record('failed', null, 0n));
  state.balanceKobo -= plan.wholesaleKobo;
  switch (digit) {
    case '2':
      return answerFor(record('pending', 'delivered', plan.wholesaleKobo));
    case '3':
      return answerFor(record('pending', 'failed', plan.wholesaleKobo), '099');
    case '4':
      record('delivered', null, plan.wholesaleKobo);
      hold(sim, request, reply);
      return reply;
    case '6': {
      const order = record('delivered', null, plan.wholesaleKobo);
      const emptied = withoutDelivery(order.extras);
      // Only an order that has a token or pins to hold back answers without them: a postpaid meter
      // or an airtime top-up has nothing to release later.
      if (emptied !== null) {
        order.withheld = order.extras;
        order.extras = emptied;
      }
      return answerFor(order);
    }
    default:
      return answerFor(record('delivered', null, plan.wholesaleKobo));
  }
}

function recordOrder(
  sim: BillsSimulator,
  order: { requestId: string; serviceID: string; plan: OrderPlan },
  outcome: Pick<SandboxBillsOrder, 'status' | 'settlesTo' | 'chargedKobo'>,
): SandboxBillsOrder {
  const { requestId, plan } = order;
  const created: SandboxBillsOrder = {
    requestId,
    transactionId: transactionId(sim),
    serviceID: order.serviceID,
    productName: plan.productName,
    recipient: plan.recipient,
    phone: plan.phone,
    amountKobo: plan.wholesaleKobo,
    chargedKobo: outcome.chargedKobo,
    quantity: plan.quantity,
    status: outcome.status,
    settlesTo: outcome.settlesTo,
    extras: outcome.status === 'failed' ? {} : plan.extras(requestId),
    withheld: null,
    createdAt: sim.clock.now(),
  };
  sim.state.orders.set(requestId, created);
  return created;
}

/** The order as it stands; a pending one reaches the outcome it was bound for. */
function requery(sim: BillsSimulator, request: FastifyRequest) {
  const requestId = text(asBody(request.body).request_id);
  const order = requestId === undefined ? undefined : sim.state.orders.get(requestId);
  if (order === undefined) return codeOnly('015', 'INVALID REQUEST ID');
  if (order.withheld !== null) {
    order.extras = order.withheld;
    order.withheld = null;
  }
  if (order.status === 'pending' && order.settlesTo !== null) {
    order.status = order.settlesTo;
    order.settlesTo = null;
    if (order.status === 'failed') {
      sim.state.balanceKobo += order.chargedKobo;
      order.chargedKobo = 0n;
      order.extras = {};
    }
  }
  return answerFor(order);
}

/** The timeout digit: the order stands, the answer never comes. */
function hold(sim: BillsSimulator, request: FastifyRequest, reply: FastifyReply): void {
  reply.hijack();
  const socket = request.raw.socket;
  const entry: Held = {
    socket,
    timer: setTimeout(() => {
      sim.held.delete(entry);
      socket.destroy();
    }, sim.state.timeoutHoldMs),
  };
  entry.timer.unref();
  sim.held.add(entry);
  socket.once('close', () => {
    clearTimeout(entry.timer);
    sim.held.delete(entry);
  });
}

function transactionId(sim: BillsSimulator): string {
  const number = sim.state.nextTransactionNumber++;
  return `${sim.clock.now().getTime()}${String(number).padStart(8, '0')}`;
}
