import type { FastifyInstance } from 'fastify';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { sameSecret } from '../secrets.ts';
import { registerCatalogueRoutes } from './bills/catalogue-routes.ts';
import { type BillsSimulator, registerPayRoutes } from './bills/pay.ts';
import {
  SANDBOX_BILLS_API_KEY,
  SANDBOX_BILLS_PUBLIC_KEY,
  SANDBOX_BILLS_SECRET_KEY,
  type SandboxBillsState,
} from './bills/state.ts';
import { registerVerifyRoutes } from './bills/verify.ts';
import { asBody, codeOnly, routeOptions } from './bills/wire.ts';

export {
  createSandboxBillsState,
  fundSandboxBills,
  SANDBOX_BILLS_API_KEY,
  SANDBOX_BILLS_PUBLIC_KEY,
  SANDBOX_BILLS_SECRET_KEY,
  type SandboxBillsOrder,
  type SandboxBillsState,
} from './bills/state.ts';

// The sandbox bills provider: VTpass's REST API under /__sandbox/vtu/bills/api (so a client's base
// URL is `${server}/__sandbox/vtu/bills/api`), speaking the wire format of
// shared/reference/providers.md section 2. It reaches nothing of the service and never the ledger.
//
// Sandbox rules (what VTpass's own sandbox leaves to fixed numbers, made reachable here):
// - Credentials: GET needs `api-key` + `public-key`, POST `api-key` + `secret-key`, equal to
//   SANDBOX_BILLS_*; anything else answers code 087 INVALID CREDENTIALS (HTTP 200: VTpass puts its
//   outcome in the body's code, and the client reads a code under any status below 500).
// - request_id: the first 12 characters are YYYYMMDDHHmm in Africa/Lagos and must lie within
//   requestIdSkewMinutes (5) of the injected clock, else 085; letters and digits only after them.
//   A request_id seen before (whatever became of it) answers 014.
// - Outcome of a purchase by the LAST DIGIT of the recipient (the phone for airtime, data and exam
//   pins; the meter for electricity; the smartcard/IUC for cable; the customer id for betting):
//     1      → 016 TRANSACTION FAILED, transactions.status failed, nothing charged;
//     2      → 000 with status pending; the first requery after it says delivered;
//     3      → 099 TRANSACTION PROCESSING (status pending); the first requery after it says failed
//              (016) and the charge returns to the balance;
//     4      → delivered and charged, but no answer: the request is held open for
//              state.timeoutHoldMs and then its socket destroyed (every held request is released at
//              once when the app closes); a requery says delivered;
//     6      → 000 TRANSACTION SUCCESSFUL, status delivered and charged, but an electricity
//              token or exam pins not released yet: the token fields null, cards and tokens empty,
//              purchased_code ''; the first requery after it answers with them (API.md section 8).
//              A purchase with nothing to release (postpaid, airtime, ...) is an ordinary success;
//     other  → 000 TRANSACTION SUCCESSFUL, status delivered.
//   "Later" is simply the next requery: deterministic, with no timers and no clock to move.
// - merchant-verify: any number resolves to a name made from its digits, except one ending in 9:
//   `content.error` with WrongBillersCode true (not found). 9 is not an outcome digit, so every
//   outcome stays reachable for a number that verifies.
// - Balance: starts at ₦1,000,000. A purchase is accepted only when the balance covers its wholesale
//   price (else 018 LOW WALLET BALANCE, nothing recorded); it is debited on acceptance and credited
//   back when the order ends failed. There is no commission: the wholesale price is the amount for
//   airtime, electricity, betting and cable renewals, and the variation price (times quantity) for
//   data, cable plans and exam pins. POST /__sandbox/providers/bills/balance {amount (naira)} sets
//   it, GET reads it; fundSandboxBills adds to it (a transfer into the provider's bank account).
// - Limits: airtime ₦50-₦50,000, electricity ₦1,000-₦500,000, betting ₦100-₦500,000 (013/017);
//   exam quantity 1-10 and JAMB 1 (031/032); cable months 1-12.
// - Electricity prepaid success carries a 20-digit token made from the request_id and the units at
//   ₦209.50/kWh, in each DisCo's fields: eko-electric mainToken/mainTokenUnits, kano-electric
//   Token/Units, the others token/units; always also purchased_code "Token : ...". Postpaid has none.
//   The customer's name (the one merchant-verify gives) and address come as each DisCo writes them,
//   prepaid and postpaid alike: kano-electric CustomerName/CustomerAddress, eko-electric and
//   portharcourt-electric not at all (their answers carry none), the others customerName/customerAddress.
//   Cable and betting answers never name the customer, as VTpass's do not.
// - Exam pins: cards [{Serial, Pin}] for waec and waec-registration and nabteb, tokens [...] for
//   neco, and only purchased_code ("Pin : ...", one per line) for jamb, which needs billersCode (the
//   profile id).
//
// The routes are in bills/: pay.ts (/pay, /requery), verify.ts (/merchant-verify), catalogue-routes.ts
// (categories, services, variations, balance), over the orders of orders.ts and products.ts.

const apiPrefix = '/__sandbox/vtu/bills/api';
const balancePath = '/__sandbox/providers/bills/balance';

export function registerSandboxBills(
  app: FastifyInstance,
  state: SandboxBillsState,
  options: { clock: { now(): Date } },
): void {
  const sim: BillsSimulator = { state, clock: options.clock, held: new Set() };
  // preClose runs before the server stops accepting and waits for open requests, so held requests
  // must go here; waiting for onClose would make every close wait for timeoutHoldMs.
  const releaseHeld = async () => {
    for (const entry of sim.held) {
      clearTimeout(entry.timer);
      entry.socket.destroy();
    }
    sim.held.clear();
  };
  app.addHook('preClose', releaseHeld);
  app.addHook('onClose', releaseHeld);
  void app.register(async (api) => registerApi(api, sim), { prefix: apiPrefix });
  registerBalanceControl(app, state);
}

/** VTpass's API: its credentials check, its error codes, and its routes. */
function registerApi(api: FastifyInstance, sim: BillsSimulator): void {
  api.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
    return status === 500
      ? reply.code(500).send(codeOnly('083', 'SYSTEM ERROR'))
      : reply.code(status).send(codeOnly('011', 'INVALID ARGUMENTS'));
  });
  api.addHook('onRequest', async (request, reply) => {
    const second = request.method === 'GET' ? 'public-key' : 'secret-key';
    const expected = request.method === 'GET' ? SANDBOX_BILLS_PUBLIC_KEY : SANDBOX_BILLS_SECRET_KEY;
    const authorised =
      sameSecret(request.headers['api-key'], SANDBOX_BILLS_API_KEY) &&
      sameSecret(request.headers[second], expected);
    if (!authorised) return reply.code(200).send(codeOnly('087', 'INVALID CREDENTIALS'));
  });
  registerCatalogueRoutes(api, sim.state);
  registerVerifyRoutes(api);
  registerPayRoutes(api, sim);
}

/** The sandbox's control of the provider's balance (API.md section 8): GET reads it, POST sets it. */
function registerBalanceControl(app: FastifyInstance, state: SandboxBillsState): void {
  app.get(balancePath, routeOptions, async () => ({ balance: koboToNaira(state.balanceKobo) }));
  app.post(balancePath, routeOptions, async (request, reply) => {
    const amount = asBody(request.body).amount;
    if (typeof amount !== 'number' || !isNairaAmount(amount)) {
      return reply.code(400).send({ message: 'amount must be naira, a number with at most 2 decimals' });
    }
    state.balanceKobo = nairaToKobo(amount);
    return { balance: koboToNaira(state.balanceKobo) };
  });
}
