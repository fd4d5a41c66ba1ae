import type { FastifyInstance } from 'fastify';
import type { Clock } from '../clock.ts';
import { registerBankRoutes } from './payments/banks.ts';
import { registerCheckoutRoutes } from './payments/checkout.ts';
import { registerControlRoutes } from './payments/controls.ts';
import { registerCustomerRoutes } from './payments/customers.ts';
import { registerDedicatedAccountRoutes } from './payments/dedicated-accounts.ts';
import { refuse, registerJsonBodies } from './payments/requests.ts';
import type { PaymentsSimulator } from './payments/simulator.ts';
import type { SandboxPaymentsState } from './payments/state.ts';
import { registerTransactionRoutes } from './payments/transactions.ts';
import { registerTransferRoutes } from './payments/transfers.ts';
import { createTimers, createWebhookSender } from './payments/webhooks.ts';
import { sameSecret } from './secrets.ts';

// The sandbox payment provider: Paystack's REST API under /__sandbox/payments (so a client's base URL
// is `${publicBaseUrl}/__sandbox/payments`), its hosted checkout page, and its signed webhooks. It
// checks `Authorization: Bearer <secret key>`, where the secret key is the signing secret (Paystack
// has one secret key for both the API and the webhook HMAC), and answers in the shapes of
// shared/reference/paystack-openapi.yaml. It reaches the service only over HTTP (the webhooks) and
// never touches the ledger.
//
// Sandbox rules (what Paystack's test mode leaves to the tester, fixed here so every path is reachable):
// - Checkout: POST /transaction/initialize stores an "abandoned" (unpaid) transaction whose
//   authorization_url is the page /__sandbox/checkout/<reference>. Pay makes it "success" (channel
//   card, paid_at = the sandbox clock) and sends charge.success; Decline makes it "failed" and sends
//   nothing (Paystack sends webhooks for successful charges only). Either outcome is final.
// - GET /transaction lists every transaction (checkouts whatever their outcome, money into dedicated
//   accounts, payments whose webhook was dropped), newest first, by status, channel and creation
//   time: `from`/`to` date-times, or dates alone for the start and the end of that day UTC. GET
//   /transaction/:id fetches one by its numeric id.
// - A transaction reference may hold only letters, digits, "-", "." and "=" (Paystack's rule); a
//   reused one is refused (400 "Duplicate Transaction Reference").
// - Customers: one per email (case-insensitive); POST /customer again with the same email returns it,
//   updated with the names and phone sent.
// - Dedicated accounts: the customer needs first_name, last_name and phone; the only bank is
//   test-bank ("Test Bank", Paystack's test-mode provider); one account per customer, so asking again
//   returns the same account. Account numbers are 10 digits, unique, starting with 7; the name is
//   "BILLRAIL/<LAST> <FIRST>" in capitals. POST /__sandbox/bank-transfer {accountNumber, amount
//   (naira)} pays into one: a successful transaction on channel dedicated_nuban and a charge.success.
// - Resolve: any 10-digit account at a known bank code resolves to a name (a dedicated account's own
//   name, else a name made from the digits), except 0000000000: 404 (no such account). An unknown
//   bank code or a malformed account number: 422.
// - Transfer recipients (nuban only): the same account number and bank code give back the same
//   recipient, as Paystack documents.
// - Transfers: need a reference of 16-50 lower-case letters, digits, "-" and "_", and enough balance
//   (else 400 "Your balance is not enough to fulfil this request"); the amount leaves the balance at
//   once and the transfer answers "pending". It settles after state.transferSettleDelayMs, by the last
//   digit of the recipient's account number:
//     1      → failed (the money returns to the balance), transfer.failed;
//     2      → success, transfer.success, then after state.transferReversalDelayMs reversed (the money
//              returns), transfer.reversed;
//     other  → success, transfer.success.
//   The same reference again with the same recipient and amount answers the existing transfer; with a
//   different recipient or amount it is refused (400).
// - Banks: GET /bank lists the Nigerian banks of payments/wire.ts (with a retired bank and a bank
//   listed twice, as Paystack's list has), by cursor when asked; resolve and transfer recipients
//   know the active ones.
// - Balance: starts at ₦10,000,000; POST /__sandbox/payments/balance {amount (naira)} sets it. Money
//   paid in does not add to it (Paystack settles collections to the merchant's bank).
// - Webhooks: see payments/webhooks.ts; POST /__sandbox/webhooks {mode: deliver|drop}.
// - Bodies: JSON with `Content-Type: application/json` or with no Content-Type at all (Paystack's own
//   Node SDK sends none), or form-encoded. A body that is not JSON: 400 "Invalid JSON body".
// - Anything else under /__sandbox/payments (another of Paystack's paths, or another method on one of
//   these) is checked for the key like the rest, then answers 404 {"status": false, "message": "Route
//   not found"}. The sandbox's own controls (bank-transfer, webhooks, the balance setter) answer in the
//   service's envelope instead.
//
// Each group of routes is a file of payments/: transactions.ts, customers.ts, dedicated-accounts.ts,
// banks.ts, transfers.ts, checkout.ts and controls.ts, over the PaymentsSimulator of simulator.ts.

export type SandboxPaymentsOptions = {
  clock: Clock;
  /** The provider's secret key: the API's bearer token and the webhook HMAC key. */
  signingSecret: string;
  /** The service's webhook endpoint (state.webhookUrlOverride takes precedence). */
  webhookUrl: string;
  /** The service's public base URL, where the checkout page is served. */
  publicBaseUrl: string;
  /**
   * Told of every transfer that settles, so the sandbox's VTU simulators can see money arrive in
   * their bank accounts, as a real provider's float grows when our transfer lands.
   */
  onTransferSettled?: (accountNumber: string, amountKobo: bigint) => void;
  /** Told of every settled transfer that is reversed: the money leaves the recipient's account again. */
  onTransferReversed?: (accountNumber: string, amountKobo: bigint) => void;
};

const apiPrefix = '/__sandbox/payments';
/** Form bodies (the checkout's buttons, Paystack's form-encoded requests) are small. */
const formBodyLimitBytes = 64 * 1024;

export function registerSandboxPayments(
  app: FastifyInstance,
  payments: SandboxPaymentsState,
  options: SandboxPaymentsOptions,
): void {
  const timers = createTimers();
  const sim: PaymentsSimulator = {
    payments,
    clock: options.clock,
    timers,
    webhooks: createWebhookSender({
      state: payments,
      signingSecret: options.signingSecret,
      webhookUrl: options.webhookUrl,
      clock: options.clock,
      timers,
    }),
    publicBaseUrl: options.publicBaseUrl,
    onTransferSettled: options.onTransferSettled,
    onTransferReversed: options.onTransferReversed,
  };

  void app.register(async (sandbox) => {
    sandbox.addHook('onClose', async () => timers.close());
    // Paystack accepts form-encoded bodies too, and the checkout page's buttons are plain forms.
    sandbox.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: formBodyLimitBytes },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    void sandbox.register(async (api) => registerApi(api, sim, options.signingSecret), { prefix: apiPrefix });
    registerCheckoutRoutes(sandbox, sim);
    registerControlRoutes(sandbox, sim, apiPrefix);
  });
}

/** Paystack's API itself: its key check, its error shapes, and its routes by group. */
function registerApi(api: FastifyInstance, sim: PaymentsSimulator, secretKey: string): void {
  api.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
    return reply
      .code(status)
      .send({ status: false, message: status === 500 ? 'An error occurred' : error.message });
  });
  // A path (or a method on a path) the sandbox does not implement answers as Paystack answers one it
  // does not know: in its own shape, after the key check below, so that a client pointed at the wrong
  // path reads what it would read from Paystack, not the service's envelope.
  api.setNotFoundHandler((_request, reply) => refuse(reply, 404, 'Route not found'));
  registerJsonBodies(api);
  api.addHook('onRequest', async (request, reply) => {
    if (!sameSecret(request.headers.authorization, `Bearer ${secretKey}`)) {
      return reply.code(401).send({ status: false, message: 'Invalid key' });
    }
  });
  registerTransactionRoutes(api, sim);
  registerCustomerRoutes(api, sim);
  registerDedicatedAccountRoutes(api, sim);
  registerBankRoutes(api, sim);
  registerTransferRoutes(api, sim);
}
