import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { sameSecret } from '../secrets.ts';
import type { SandboxDataPlan, SandboxNetwork } from './data-catalogue.ts';
import {
  SANDBOX_DATA_TOKEN,
  type SandboxDataOrder,
  type SandboxDataOrderStatus,
  type SandboxDataState,
} from './data-state.ts';

export type { SandboxDataOrder, SandboxDataState } from './data-state.ts';
export { createSandboxDataState, fundSandboxData, SANDBOX_DATA_TOKEN } from './data-state.ts';

// The sandbox data vendor: the API of the "DataStation clone" family of Nigerian data vendors
// (shared/reference/providers.md section 3.1) under /__sandbox/vtu/data, so a client's base URL is
// `${server}/__sandbox/vtu/data`. It is a Django REST framework app in real life, and answers like
// one: `Authorization: Token <key>` (401 {"detail": "Invalid token."} otherwise), field errors as
// {"<field>": ["..."]}, business refusals as {"error": ["..."]}, 404 {"detail": "Not found."}, lists
// paginated as {count, next, previous, results} (20 a page, newest first, ?page=N).
//
// Sandbox rules (shared/API.md section 8), by the LAST digit of the recipient's number:
//   1      → the order fails at once: Status "failed", nothing charged;
//   2      → Status "pending", charged; the first read of the order afterwards (GET /api/data/{id}, or a
//            list page that contains it) finds it "successful";
//   3      → Status "pending", charged; that first read finds it "failed" and the wallet refunded;
//   4      → the order is placed and succeeds (charged), but the request gets no answer: it is held for
//            state.timeoutHoldMs, then its connection is dropped. Every held request is dropped at once
//            when the app closes. A requery (by id, or by ident in the list) finds it "successful";
//   other  → Status "successful", charged.
// "Later" is deterministic on purpose: the first read settles a pending order, with no timer, so a
// test needs no waiting.
//
// Money: the wallet starts at ₦1,000,000 (POST /__sandbox/providers/data/balance {amount} sets it,
// GET reads it, fundSandboxData adds to it). A purchase the wallet does not cover is refused with 400
// and no order; an accepted one is debited at once and refunded only when it settles as failed. Data
// costs the plan's price; airtime costs state.topupPercent of its face value.
//
// A reused ident never makes a second order, and never a refusal that reads like "the purchase
// failed": the same ident with the same order (kind, network, number, plan or amount) answers the
// existing order as it stands (200), so a client that retried learns what really happened; the same
// ident with a different order is refused with {"ident": [...]}, which names the ident, so a careful
// client does not take it for a failed purchase either.

export type SandboxDataOptions = {
  clock: { now(): Date };
};

const prefix = '/__sandbox/vtu/data';
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;
const listPageSize = 20;
const identLengthMax = 100;
const localPhonePattern = /^0[789][01]\d{8}$/;
const airtimeKoboMin = 50_00n;
const airtimeKoboMax = 50_000_00n;

type Body = Record<string, unknown>;
type Kind = SandboxDataOrder['kind'];

export function registerSandboxData(
  app: FastifyInstance,
  state: SandboxDataState,
  options: SandboxDataOptions,
): void {
  /** Requests left unanswered on purpose (numbers ending in 4), released all at once on close. */
  const held = new Map<Socket, NodeJS.Timeout>();
  const releaseAll = async () => {
    for (const [socket, timer] of held) {
      clearTimeout(timer);
      socket.destroy();
    }
    held.clear();
  };
  // preClose runs before the server stops accepting and waits for open connections; onClose covers
  // an app that never listened. Without the first, close() would wait for every hold to run out.
  app.addHook('preClose', releaseAll);
  app.addHook('onClose', releaseAll);

  void app.register(
    async (api) => {
      api.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
        const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
        if (status === 500) return reply.code(500).send({ detail: 'A server error occurred.' });
        return reply.code(status).send({ detail: error.message });
      });
      api.setNotFoundHandler((_request, reply) => reply.code(404).send({ detail: 'Not found.' }));
      api.addHook('onRequest', async (request, reply) => {
        const problem = authProblem(request);
        if (problem !== null) {
          return reply.code(401).header('www-authenticate', 'Token').send({ detail: problem });
        }
      });

      for (const kind of ['data', 'topup'] as const) {
        const path = `/api/${kind}/`;
        api.post(path, routeOptions, async (request, reply) =>
          kind === 'data' ? buyData(request, reply) : buyAirtime(request, reply),
        );
        api.get(path, routeOptions, async (request, reply) => list(kind, request, reply));
        for (const detail of [`/api/${kind}/:id`, `/api/${kind}/:id/`]) {
          api.get(detail, routeOptions, async (request, reply) => {
            const { id } = request.params as { id: string };
            const order = /^\d{1,12}$/.test(id)
              ? state.orders.find((o) => o.kind === kind && o.id === Number(id))
              : undefined;
            if (order === undefined) return reply.code(404).send({ detail: 'Not found.' });
            settle(order);
            return orderJson(order);
          });
        }
      }

      api.get('/api/user/', routeOptions, async () => accountJson());
    },
    { prefix },
  );

  app.get('/__sandbox/providers/data/balance', routeOptions, async () => ({
    balance: koboToNaira(state.balanceKobo),
  }));
  app.post('/__sandbox/providers/data/balance', routeOptions, async (request, reply) => {
    const amount = asBody(request.body).amount;
    if (typeof amount !== 'number' || !isNairaAmount(amount)) {
      return reply.code(400).send({
        success: false,
        error: {
          code: 'VALIDATION_ERROR',
          message: 'amount: naira, 0 or more, two decimals at most',
        },
      });
    }
    state.balanceKobo = nairaToKobo(amount);
    return { balance: koboToNaira(state.balanceKobo) };
  });

  async function buyData(request: FastifyRequest, reply: FastifyReply) {
    const body = asBody(request.body);
    const common = commonFields(body);
    if ('errors' in common) return reply.code(400).send(common.errors);
    const planId = wholeNumber(body.plan);
    if (body.plan === undefined || body.plan === null) return reply.code(400).send(required('plan'));
    const plan = planId === null ? undefined : state.plans.find((p) => p.id === planId);
    if (plan === undefined) {
      return reply.code(400).send({ plan: [`Invalid pk "${String(body.plan)}" - object does not exist.`] });
    }
    if (plan.network !== common.network) {
      return reply.code(400).send({ error: [`This plan is not available for ${common.network}`] });
    }
    return place(reply, 'data', common, plan, null, plan.priceKobo);
  }

  async function buyAirtime(request: FastifyRequest, reply: FastifyReply) {
    const body = asBody(request.body);
    const common = commonFields(body);
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
    return place(reply, 'topup', common, null, amountKobo, (amountKobo * state.topupPercent) / 100n);
  }

  type Common = {
    network: SandboxNetwork;
    networkId: number;
    mobileNumber: string;
    ported: boolean;
    ident: string | null;
  };

  function commonFields(body: Body): Common | { errors: Record<string, string[]> } {
    if (body.network === undefined || body.network === null) return { errors: required('network') };
    if (body.mobile_number === undefined || body.mobile_number === null)
      return { errors: required('mobile_number') };
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
    if (
      ident !== undefined &&
      ident !== null &&
      (typeof ident !== 'string' || ident.length > identLengthMax)
    ) {
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

  function place(
    reply: FastifyReply,
    kind: Kind,
    common: Common,
    plan: SandboxDataPlan | null,
    amountKobo: bigint | null,
    priceKobo: bigint,
  ) {
    if (common.ident !== null) {
      const existing = state.orders.find((o) => o.kind === kind && o.ident === common.ident);
      if (existing !== undefined) {
        const same =
          existing.networkId === common.networkId &&
          existing.mobileNumber === common.mobileNumber &&
          existing.plan?.id === plan?.id &&
          existing.amountKobo === amountKobo;
        if (!same) return reply.code(400).send({ ident: ['An order with this ident already exists.'] });
        return reply.code(200).send(orderJson(existing));
      }
    }
    if (state.balanceKobo < priceKobo) {
      const message =
        kind === 'data'
          ? "You can't purchase this plan due to insufficient balance"
          : "You can't topup due to insufficient balance";
      return reply.code(400).send({ error: [message] });
    }

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
      createdAt: options.clock.now(),
    };
    state.orders.push(order);

    if (digit === '4') {
      // The order stands; only its answer is lost, as when a vendor's gateway times out.
      const socket = reply.raw.socket;
      // No socket: the client is gone already, and there is no answer to lose.
      if (socket === null) return reply.code(201).send(orderJson(order));
      reply.hijack();
      const timer = setTimeout(() => socket.destroy(), state.timeoutHoldMs);
      timer.unref();
      held.set(socket, timer);
      // However the connection ends (the hold, the client giving up, close), the hold is over.
      socket.once('close', () => {
        clearTimeout(timer);
        held.delete(socket);
      });
      return reply;
    }
    return reply.code(201).send(orderJson(order));
  }

  /** A pending order reaches its final state the first time anyone reads it. */
  function settle(order: SandboxDataOrder): void {
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

  function list(kind: Kind, request: FastifyRequest, reply: FastifyReply) {
    const rawPage = (request.query as { page?: unknown }).page;
    const page = rawPage === undefined ? 1 : wholeNumber(rawPage);
    const orders = state.orders.filter((o) => o.kind === kind).reverse();
    const pages = Math.max(1, Math.ceil(orders.length / listPageSize));
    if (page === null || page < 1 || page > pages) return reply.code(404).send({ detail: 'Invalid page.' });
    const results = orders.slice((page - 1) * listPageSize, page * listPageSize);
    for (const order of results) settle(order);
    const url = (n: number) => `${request.protocol}://${request.host}${prefix}/api/${kind}/?page=${n}`;
    return {
      count: orders.length,
      next: page < pages ? url(page + 1) : null,
      previous: page > 1 ? url(page - 1) : null,
      results: results.map(orderJson),
    };
  }

  function orderJson(order: SandboxDataOrder) {
    const common = {
      id: order.id,
      ident: order.ident,
      network: order.networkId,
      mobile_number: order.mobileNumber,
      plan_network: order.network,
      Status: order.status,
      api_response: order.apiResponse,
      balance_before: nairaText(order.balanceBeforeKobo),
      balance_after: nairaText(order.balanceAfterKobo),
      payment_medium: 'MAIN WALLET',
      client_ip: '127.0.0.1',
      create_date: order.createdAt.toISOString(),
      Ported_number: order.ported,
    };
    if (order.kind === 'topup') {
      return {
        ...common,
        airtime_type: 'VTU',
        amount: nairaText(order.amountKobo ?? 0n),
        paid_amount: nairaText(order.priceKobo),
      };
    }
    const plan = order.plan;
    return {
      ...common,
      plan: plan?.id ?? null,
      plan_type: plan?.planType ?? null,
      plan_name: plan?.plan ?? null,
      duration: plan?.validity ?? null,
      plan_amount: nairaText(order.priceKobo),
    };
  }

  function accountJson() {
    const networks: SandboxNetwork[] = ['MTN', 'GLO', 'AIRTEL', '9MOBILE'];
    const planJson = (plan: SandboxDataPlan) => ({
      id: plan.id,
      dataplan_id: String(plan.id),
      network: state.networkIds[plan.network],
      plan_type: plan.planType,
      plan_network: plan.network,
      month_validate: plan.validity,
      plan: plan.plan,
      plan_amount: nairaText(plan.priceKobo),
    });
    return {
      user: {
        id: 1,
        username: 'billrail',
        email: 'vendor@billrail.example',
        FullName: 'Billrail Sandbox',
        Phone: '08030000000',
        user_type: 'API',
        email_verify: true,
        wallet_balance: nairaText(state.balanceKobo),
        bonus_balance: '0.0',
      },
      Dataplans: Object.fromEntries(
        networks.map((n) => [`${n}_PLAN`, { ALL: state.plans.filter((p) => p.network === n).map(planJson) }]),
      ),
      topuppercentage: Object.fromEntries(networks.map((n) => [n, { percent: Number(state.topupPercent) }])),
    };
  }
}

function authProblem(request: FastifyRequest): string | null {
  const given = request.headers.authorization;
  if (typeof given !== 'string' || given.trim() === '')
    return 'Authentication credentials were not provided.';
  return sameSecret(given, `Token ${SANDBOX_DATA_TOKEN}`) ? null : 'Invalid token.';
}

function successMessage(
  kind: Kind,
  mobileNumber: string,
  plan: SandboxDataPlan | null,
  amountKobo: bigint | null,
) {
  if (kind === 'topup')
    return `You have successfully topped up ₦${nairaText(amountKobo ?? 0n)} airtime to ${mobileNumber}`;
  return `Dear Customer, You have successfully gifted ${mobileNumber} with ${plan?.plan ?? ''} of Data. Thank you`;
}

function failedMessage(mobileNumber: string) {
  return `Transaction to ${mobileNumber} failed at the network, please try again later`;
}

/** Naira as these vendors write decimals: "560.0", "97.5", "97.25". */
function nairaText(kobo: bigint): string {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  const fraction = (abs % 100n).toString().padStart(2, '0').replace(/0$/, '');
  return `${negative ? '-' : ''}${abs / 100n}.${fraction === '' ? '0' : fraction}`;
}

function required(field: string): Record<string, string[]> {
  return { [field]: ['This field is required.'] };
}

/** A positive whole number from JSON or a form: 5 or "5". */
function wholeNumber(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : null;
  if (typeof value === 'string' && /^[1-9]\d{0,9}$/.test(value)) return Number(value);
  return null;
}

function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}
