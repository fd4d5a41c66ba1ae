import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxDataPlan, SandboxNetwork } from '../data-catalogue.ts';
import type { SandboxDataOrder, SandboxDataOrderStatus, SandboxDataState } from '../data-state.ts';
import {
  asBody,
  type Body,
  failedMessage,
  type Kind,
  orderJson,
  required,
  successMessage,
  wholeNumber,
} from './wire.ts';

// Buying data (POST /api/data/) and airtime (POST /api/topup/): the order's outcome by the last digit
// of the number (../data.ts has the rules), a reused ident answered with the order it names.

/** The data vendor as its routes see it: its state, its clock and the requests it holds open. */
export type DataSimulator = {
  state: SandboxDataState;
  clock: { now(): Date };
  /** Requests left unanswered on purpose (numbers ending in 4), released all at once on close. */
  held: Map<Socket, NodeJS.Timeout>;
};

/** The fields both kinds of purchase carry. */
type Common = {
  network: SandboxNetwork;
  networkId: number;
  mobileNumber: string;
  ported: boolean;
  ident: string | null;
};

/** What is bought: a plan (data) or an amount of airtime (topup), and what the wallet pays for it. */
type Purchase = {
  kind: Kind;
  common: Common;
  plan: SandboxDataPlan | null;
  amountKobo: bigint | null;
  priceKobo: bigint;
};

const identLengthMax = 100;
const localPhonePattern = /^0[789][01]\d{8}$/;
const airtimeKoboMin = 50_00n;
const airtimeKoboMax = 50_000_00n;

export function buyData(sim: DataSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  const common = commonFields(sim.state, body);
  if ('errors' in common) return reply.code(400).send(common.errors);
  const planId = wholeNumber(body.plan);
  if (body.plan === undefined || body.plan === null) return reply.code(400).send(required('plan'));
  const plan = planId === null ? undefined : sim.state.plans.find((p) => p.id === planId);
  if (plan === undefined) {
    return reply.code(400).send({ plan: [`Invalid pk "${String(body.plan)}" - object does not exist.`] });
  }
  if (plan.network !== common.network) {
    return reply.code(400).send({ error: [`This plan is not available for ${common.network}`] });
  }
  return place(sim, reply, { kind: 'data', common, plan, amountKobo: null, priceKobo: plan.priceKobo });
}

export function buyAirtime(sim: DataSimulator, request: FastifyRequest, reply: FastifyReply) {
  const body = asBody(request.body);
  const common = commonFields(sim.state, body);
  if ('errors' in common) return reply.code(400).send(common.errors);
  if (body.amount === undefined || body.amount === null) return reply.code(400).send(required('amount'));
  const naira = wholeNumber(body.amount);
  if (naira === null) return reply.code(400).send({ amount: ['A valid integer is required.'] });
  const amountKobo = BigInt(naira) * 100n;
  if (amountKobo < airtimeKoboMin) return reply.code(400).send({ error: ['Minimum airtime topup is ₦50'] });
  if (amountKobo > airtimeKoboMax)
    return reply.code(400).send({ error: ['Maximum airtime topup is ₦50,000'] });
  const type = body.airtime_type ?? 'VTU';
  if (type !== 'VTU' && type !== 'Share and Sell') {
    return reply.code(400).send({ airtime_type: [`"${String(type)}" is not a valid choice.`] });
  }
  // Whole naira times a whole percentage: an exact number of kobo.
  const priceKobo = (amountKobo * sim.state.topupPercent) / 100n;
  return place(sim, reply, { kind: 'topup', common, plan: null, amountKobo, priceKobo });
}

function commonFields(state: SandboxDataState, body: Body): Common | { errors: Record<string, string[]> } {
  if (body.network === undefined || body.network === null) return { errors: required('network') };
  if (body.mobile_number === undefined || body.mobile_number === null) {
    return { errors: required('mobile_number') };
  }
  const networkId = wholeNumber(body.network);
  const network = (Object.keys(state.networkIds) as SandboxNetwork[]).find(
    (n) => state.networkIds[n] === networkId,
  );
  if (networkId === null || network === undefined) {
    return { errors: { network: [`Invalid pk "${String(body.network)}" - object does not exist.`] } };
  }
  const mobileNumber = typeof body.mobile_number === 'string' ? body.mobile_number.trim() : '';
  if (!localPhonePattern.test(mobileNumber)) return { errors: { error: ['Invalid mobile number'] } };
  const ident = body.ident;
  if (ident !== undefined && ident !== null && (typeof ident !== 'string' || ident.length > identLengthMax)) {
    return { errors: { ident: [`Ensure this field has no more than ${identLengthMax} characters.`] } };
  }
  const ported = body.Ported_number === true || body.Ported_number === 'true';
  return {
    network,
    networkId,
    mobileNumber,
    ported,
    ident: typeof ident === 'string' && ident !== '' ? ident : null,
  };
}

function place(sim: DataSimulator, reply: FastifyReply, purchase: Purchase) {
  const { state } = sim;
  const { kind, common } = purchase;
  const existing =
    common.ident === null ? undefined : state.orders.find((o) => o.kind === kind && o.ident === common.ident);
  if (existing !== undefined) return answerRepeat(reply, existing, purchase);
  if (state.balanceKobo < purchase.priceKobo) {
    const message =
      kind === 'data'
        ? "You can't purchase this plan due to insufficient balance"
        : "You can't topup due to insufficient balance";
    return reply.code(400).send({ error: [message] });
  }
  const order = recordOrder(sim, purchase);
  // The order stands; only its answer is lost, as when a vendor's gateway times out.
  if (common.mobileNumber.at(-1) === '4') return hold(sim, reply, order);
  return reply.code(201).send(orderJson(order));
}

/**
 * A reused ident: the same order answers as it stands, so a client that retried learns what really
 * happened; another order under it is refused, naming the ident.
 */
function answerRepeat(reply: FastifyReply, existing: SandboxDataOrder, purchase: Purchase) {
  const same =
    existing.networkId === purchase.common.networkId &&
    existing.mobileNumber === purchase.common.mobileNumber &&
    existing.plan?.id === purchase.plan?.id &&
    existing.amountKobo === purchase.amountKobo;
  if (!same) return reply.code(400).send({ ident: ['An order with this ident already exists.'] });
  return reply.code(200).send(orderJson(existing));
}

/** Makes the order its number's digit decides, charging the wallet unless it fails at once. */
function recordOrder(sim: DataSimulator, purchase: Purchase): SandboxDataOrder {
  const { state } = sim;
  const { kind, common, plan, amountKobo, priceKobo } = purchase;
  const digit = common.mobileNumber.at(-1);
  const before = state.balanceKobo;
  const fails = digit === '1';
  const status: SandboxDataOrderStatus = fails
    ? 'failed'
    : digit === '2' || digit === '3'
      ? 'pending'
      : 'successful';
  if (!fails) state.balanceKobo -= priceKobo;
  const order: SandboxDataOrder = {
    id: state.nextOrderId++,
    kind,
    ident: common.ident,
    network: common.network,
    networkId: common.networkId,
    mobileNumber: common.mobileNumber,
    ported: common.ported,
    plan,
    amountKobo,
    priceKobo,
    status,
    settlesAs: digit === '2' ? 'successful' : digit === '3' ? 'failed' : null,
    apiResponse:
      status === 'failed'
        ? failedMessage(common.mobileNumber)
        : status === 'pending'
          ? 'Your request is being processed, please check back shortly'
          : successMessage(kind, common.mobileNumber, plan, amountKobo),
    balanceBeforeKobo: before,
    balanceAfterKobo: state.balanceKobo,
    createdAt: sim.clock.now(),
  };
  state.orders.push(order);
  return order;
}

/** The timeout digit: the connection is held for state.timeoutHoldMs, then dropped unanswered. */
function hold(sim: DataSimulator, reply: FastifyReply, order: SandboxDataOrder) {
  const socket = reply.raw.socket;
  // No socket: the client is gone already, and there is no answer to lose.
  if (socket === null) return reply.code(201).send(orderJson(order));
  reply.hijack();
  const timer = setTimeout(() => socket.destroy(), sim.state.timeoutHoldMs);
  timer.unref();
  sim.held.set(socket, timer);
  // However the connection ends (the hold, the client giving up, close), the hold is over.
  socket.once('close', () => {
    clearTimeout(timer);
    sim.held.delete(socket);
  });
  return reply;
}
