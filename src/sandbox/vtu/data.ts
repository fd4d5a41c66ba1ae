import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { sameSecret } from '../secrets.ts';
import { SANDBOX_DATA_TOKEN, type SandboxDataState } from './data-state.ts';
import { buyAirtime, buyData, type DataSimulator } from './data-vendor/purchases.ts';
import { listOrders, readOrder } from './data-vendor/reads.ts';
import { accountJson, asBody, routeOptions } from './data-vendor/wire.ts';

export type { SandboxDataOrder, SandboxDataState } from './data-state.ts';
export { createSandboxDataState, fundSandboxData, SANDBOX_DATA_TOKEN } from './data-state.ts';

// The sandbox data vendor: the API of the "DataStation clone" family of Nigerian data vendors
// (shared/reference/providers.md section 3.1) under /__sandbox/vtu/data, so a client's base URL is
// `${server}/__sandbox/vtu/data`. It is a Django REST framework app in real life, and answers like
// one: `Authorization: Token <key>` (401 {"detail": "Invalid token."} otherwise), field errors as
// {"<field>": ["..."]}, business refusals as {"error": ["..."]}, 404 {"detail": "Not found."}, lists
// paginated as {count, next, previous, results} (20 a page, newest first, ?page=N). The lists hold
// every order taken, the unanswered ones (digit 4) too, each with its ident, create_date (ISO, as the
// vendor's script writes it) and price: what a reconciliation reads (VtuProvider.listOrders).
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
//
// The purchases are in data-vendor/purchases.ts, the reads that settle pending orders in
// data-vendor/reads.ts, the vendor's JSON in data-vendor/wire.ts.

export type SandboxDataOptions = {
  clock: { now(): Date };
};

const prefix = '/__sandbox/vtu/data';
const balancePath = '/__sandbox/providers/data/balance';

export function registerSandboxData(
  app: FastifyInstance,
  state: SandboxDataState,
  options: SandboxDataOptions,
): void {
  const sim: DataSimulator = { state, clock: options.clock, held: new Map() };
  const releaseAll = async () => {
    for (const [socket, timer] of sim.held) {
      clearTimeout(timer);
      socket.destroy();
    }
    sim.held.clear();
  };
  // preClose runs before the server stops accepting and waits for open connections; onClose covers
  // an app that never listened. Without the first, close() would wait for every hold to run out.
  app.addHook('preClose', releaseAll);
  app.addHook('onClose', releaseAll);
  void app.register(async (api) => registerApi(api, sim), { prefix });
  registerBalanceControl(app, state);
}

/** The vendor's API: its token check, its error shapes, and its routes for each kind of order. */
function registerApi(api: FastifyInstance, sim: DataSimulator): void {
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
      kind === 'data' ? buyData(sim, request, reply) : buyAirtime(sim, request, reply),
    );
    api.get(path, routeOptions, async (request, reply) =>
      listOrders(sim.state, `${prefix}${path}`, kind, request, reply),
    );
    for (const detail of [`/api/${kind}/:id`, `/api/${kind}/:id/`]) {
      api.get(detail, routeOptions, async (request, reply) => readOrder(sim.state, kind, request, reply));
    }
  }
  api.get('/api/user/', routeOptions, async () => accountJson(sim.state));
}

/** The sandbox's control of the vendor's wallet (API.md section 8): GET reads it, POST sets it. */
function registerBalanceControl(app: FastifyInstance, state: SandboxDataState): void {
  app.get(balancePath, routeOptions, async () => ({ balance: koboToNaira(state.balanceKobo) }));
  app.post(balancePath, routeOptions, async (request, reply) => {
    const amount = asBody(request.body).amount;
    if (typeof amount !== 'number' || !isNairaAmount(amount)) {
      return reply.code(400).send({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'amount: naira, 0 or more, two decimals at most' },
      });
    }
    state.balanceKobo = nairaToKobo(amount);
    return { balance: koboToNaira(state.balanceKobo) };
  });
}

function authProblem(request: FastifyRequest): string | null {
  const given = request.headers.authorization;
  if (typeof given !== 'string' || given.trim() === '')
    return 'Authentication credentials were not provided.';
  return sameSecret(given, `Token ${SANDBOX_DATA_TOKEN}`) ? null : 'Invalid token.';
}
