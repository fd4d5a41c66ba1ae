import { randomInt } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../money.ts';
import {
  checkoutContentSecurityPolicy,
  checkoutPage,
  unknownCheckoutPage,
} from './payments/checkout-page.ts';
import type {
  SandboxCustomer,
  SandboxRecipient,
  SandboxTransaction,
  SandboxTransfer,
} from './payments/state.ts';
import { createTimers, createWebhookSender } from './payments/webhooks.ts';
import {
  bankJson,
  banks,
  customerJson,
  dedicatedAccountJson,
  dedicatedBank,
  lowerAlphanumeric,
  newCode,
  nextId,
  recipientJson,
  sandboxBanks,
  transactionJson,
  transactionListItemJson,
  transferCreatedJson,
  transferEventJson,
  transferJson,
} from './payments/wire.ts';
import { sameSecret } from './secrets.ts';
import type { SandboxState } from './state.ts';

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
// - Anything else under /__sandbox/payments (another of Paystack's paths, or another method on one of
//   these) is checked for the key like the rest, then answers 404 {"status": false, "message": "Route
//   not found"}. The sandbox's own controls (bank-transfer, webhooks, the balance setter) answer in the
//   service's envelope instead.

export type SandboxPaymentsOptions = {
  clock: Clock;
  /** The provider's secret key: the API's bearer token and the webhook HMAC key. */
  signingSecret: string;
  /** The service's webhook endpoint (state.payments.webhookUrlOverride takes precedence). */
  webhookUrl: () => string;
  /** The service's public base URL, where the checkout page is served. */
  publicBaseUrl: () => string;
  /**
   * Told of every transfer that settles, so the sandbox's VTU simulators can see money arrive in
   * their bank accounts, as a real provider's float grows when our transfer lands.
   */
  onTransferSettled?: (accountNumber: string, amountKobo: bigint) => void;
  /** Told of every settled transfer that is reversed: the money leaves the recipient's account again. */
  onTransferReversed?: (accountNumber: string, amountKobo: bigint) => void;
};

const apiPrefix = '/__sandbox/payments';
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;
/** Form bodies (the checkout's buttons, Paystack's form-encoded requests) are small. */
const formBodyLimitBytes = 64 * 1024;

const transactionReferencePattern = /^[A-Za-z0-9.=-]{1,100}$/;
const transferReferencePattern = /^[a-z0-9_-]{16,50}$/;
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const accountNumberPattern = /^\d{10}$/;
const unresolvableAccountNumber = '0000000000';

type Body = Record<string, unknown>;

export function registerSandboxPayments(
  app: FastifyInstance,
  state: SandboxState,
  options: SandboxPaymentsOptions,
): void {
  const payments = state.payments;
  const timers = createTimers();
  const webhooks = createWebhookSender({
    state: payments,
    signingSecret: options.signingSecret,
    webhookUrl: options.webhookUrl,
    clock: options.clock,
    timers,
  });
  const now = () => options.clock.now();

  void app.register(async (sandbox) => {
    sandbox.addHook('onClose', async () => timers.close());
    // Paystack accepts form-encoded bodies too, and the checkout page's buttons are plain forms.
    sandbox.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: formBodyLimitBytes },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );

    void sandbox.register(
      async (api) => {
        api.setErrorHandler((error: { statusCode?: number; message: string }, _request, reply) => {
          const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
          return reply
            .code(status)
            .send({ status: false, message: status === 500 ? 'An error occurred' : error.message });
        });
        // A path (or a method on a path) the sandbox does not implement answers as Paystack answers
        // one it does not know: in its own shape, after the key check below, so that a client pointed
        // at the wrong path reads what it would read from Paystack, not the service's envelope.
        api.setNotFoundHandler((_request, reply) => refuse(reply, 404, 'Route not found'));
        api.addHook('onRequest', async (request, reply) => {
          if (!authorised(request, options.signingSecret)) {
            return reply.code(401).send({ status: false, message: 'Invalid key' });
          }
        });
        registerApi(api);
      },
      { prefix: apiPrefix },
    );

    registerCheckout(sandbox);
    registerControls(sandbox);
  });

  function registerApi(api: FastifyInstance): void {
    api.post('/transaction/initialize', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const email = text(body.email)?.trim();
      if (email === undefined || !emailPattern.test(email))
        return refuse(reply, 400, 'Invalid Email Address Passed');
      const amount = wireAmount(body.amount);
      if (amount === null) return refuse(reply, 400, 'Invalid Amount Sent');
      if (body.currency !== undefined && body.currency !== 'NGN') {
        return refuse(reply, 400, 'Currency not supported by merchant');
      }
      const given = text(body.reference);
      if (given !== undefined && !transactionReferencePattern.test(given)) {
        return refuse(
          reply,
          400,
          'Invalid transaction reference: only -, ., = and alphanumeric characters allowed',
        );
      }
      if (given !== undefined && payments.transactions.has(given)) {
        return reply.code(400).send({
          status: false,
          message: 'Duplicate Transaction Reference',
          meta: { nextStep: 'Try and create the Transaction or Charge with a new reference' },
          type: 'validation_error',
          code: 'duplicate_reference',
        });
      }
      const callbackUrl = body.callback_url === undefined ? null : httpUrl(body.callback_url);
      if (callbackUrl === undefined) return refuse(reply, 400, 'Invalid callback_url');
      const metadata = metadataObject(body.metadata);
      if (metadata === undefined) return refuse(reply, 400, 'Invalid metadata: a JSON object is expected');

      const reference = given ?? uniqueKey(payments.transactions, () => lowerAlphanumeric(10));
      const customer = customerFor(email, {});
      const transaction: SandboxTransaction = {
        id: nextId(payments),
        reference,
        accessCode: lowerAlphanumeric(15),
        amountKobo: amount,
        customerCode: customer.customerCode,
        status: 'abandoned',
        channel: 'card',
        callbackUrl,
        metadata,
        dedicatedAccountNumber: null,
        authorizationCode: newCode('AUTH_'),
        createdAt: now(),
        paidAt: null,
      };
      payments.transactions.set(reference, transaction);
      return {
        status: true,
        message: 'Authorization URL created',
        data: {
          authorization_url: `${options.publicBaseUrl()}/__sandbox/checkout/${encodeURIComponent(reference)}`,
          access_code: transaction.accessCode,
          reference,
        },
      };
    });

    api.get('/transaction/verify/:reference', routeOptions, async (request, reply) => {
      const { reference } = request.params as { reference: string };
      const transaction = payments.transactions.get(reference);
      if (transaction === undefined) return refuse(reply, 404, 'Transaction reference not found');
      return {
        status: true,
        message: 'Verification successful',
        data: transactionJson(transaction, customerOf(transaction.customerCode)),
      };
    });

    // List Transactions: newest first, filtered by status, channel and creation time, paged like
    // Paystack (perPage default 50; `per_page` is the OpenAPI document's spelling of the same).
    api.get('/transaction', routeOptions, async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const page = Number(query.page ?? '1');
      const perPage = Number(query.per_page ?? query.perPage ?? '50');
      const from = query.from === undefined ? null : new Date(query.from);
      const to = query.to === undefined ? null : new Date(query.to);
      if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1 || perPage > 1000)
        return refuse(reply, 400, 'Invalid page or perPage');
      if ((from !== null && Number.isNaN(from.getTime())) || (to !== null && Number.isNaN(to.getTime())))
        return refuse(reply, 400, 'Invalid date in from or to');
      const matching = [...payments.transactions.values()]
        .filter(
          (t) =>
            (query.status === undefined || t.status === query.status) &&
            (query.channel === undefined || t.channel === query.channel) &&
            (from === null || t.createdAt >= from) &&
            (to === null || t.createdAt <= to),
        )
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id - a.id);
      const items = matching.slice((page - 1) * perPage, page * perPage);
      return {
        status: true,
        message: 'Transactions retrieved',
        data: items.map((t) => transactionListItemJson(t, customerOf(t.customerCode))),
        meta: {
          total: matching.length,
          total_volume: Number(matching.reduce((sum, t) => sum + t.amountKobo, 0n)),
          skipped: (page - 1) * perPage,
          perPage,
          page,
          pageCount: Math.ceil(matching.length / perPage),
        },
      };
    });

    api.post('/customer', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const email = text(body.email)?.trim();
      if (email === undefined || !emailPattern.test(email))
        return refuse(reply, 400, 'Invalid Email Address Passed');
      const names = {
        firstName: nonBlank(body.first_name),
        lastName: nonBlank(body.last_name),
        phone: nonBlank(body.phone),
      };
      return { status: true, message: 'Customer created', data: customerJson(customerFor(email, names)) };
    });

    api.post('/dedicated_account', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const code = text(body.customer);
      const customer = code === undefined ? undefined : payments.customers.get(code);
      if (customer === undefined) return refuse(reply, 400, 'Customer not found');
      const bank = body.preferred_bank ?? dedicatedBank.slug;
      if (bank !== dedicatedBank.slug) {
        return refuse(
          reply,
          400,
          `Dedicated NUBAN not available for ${String(bank)}: test mode has test-bank only`,
        );
      }
      if (customer.firstName === null || customer.lastName === null || customer.phone === null) {
        return refuse(
          reply,
          400,
          "The customer's first_name, last_name and phone are required to create a dedicated account",
        );
      }
      let account = [...payments.dedicatedAccounts.values()].find(
        (a) => a.customerCode === customer.customerCode,
      );
      if (account === undefined) {
        const accountNumber = uniqueKey(
          payments.dedicatedAccounts,
          () => `7${randomInt(0, 1e9).toString().padStart(9, '0')}`,
        );
        account = {
          id: nextId(payments),
          accountNumber,
          accountName: `BILLRAIL/${customer.lastName} ${customer.firstName}`.toUpperCase(),
          customerCode: customer.customerCode,
          createdAt: now(),
        };
        payments.dedicatedAccounts.set(accountNumber, account);
      }
      return {
        status: true,
        message: 'Assigned Managed Account Successfully Created',
        data: dedicatedAccountJson(account, customer),
      };
    });

    // List Banks: the Nigerian banks (any other country or currency has none here), all at once, or
    // by cursor with use_cursor=true: perPage at a time (at most state.bankPageSizeMax), meta.next
    // the cursor of the next page and null on the last, as Paystack pages them.
    api.get('/bank', routeOptions, async (request, reply) => {
      const query = request.query as Record<string, string | undefined>;
      const nigerian =
        (query.country === undefined || query.country === 'nigeria') &&
        (query.currency === undefined || query.currency === 'NGN');
      const listed = nigerian ? sandboxBanks : [];
      if (query.use_cursor !== 'true') {
        return { status: true, message: 'Banks retrieved', data: listed.map(bankJson) };
      }
      const perPage = Number(query.perPage ?? '50');
      if (!Number.isInteger(perPage) || perPage < 1) return refuse(reply, 400, 'Invalid perPage');
      const after = query.next === undefined ? 0 : bankCursorId(query.next);
      if (after === null) return refuse(reply, 400, 'Invalid cursor');
      const pageSize = Math.min(perPage, payments.bankPageSizeMax);
      const rest = listed.filter((b) => b.id > after);
      const page = rest.slice(0, pageSize);
      // The previous page starts after the entry pageSize + 1 before this page's first (or at the start).
      const earlier = listed.filter((b) => b.id <= after);
      return {
        status: true,
        message: 'Banks retrieved',
        data: page.map(bankJson),
        meta: {
          next: rest.length > pageSize ? bankCursor(page.at(-1)!.id) : null,
          previous: query.next === undefined ? null : bankCursor(earlier.at(-pageSize - 1)?.id ?? 0),
          perPage: pageSize,
        },
      };
    });

    api.get('/bank/resolve', routeOptions, async (request, reply) => {
      const query = request.query as { account_number?: unknown; bank_code?: unknown };
      const accountNumber = text(query.account_number);
      const bankCode = text(query.bank_code);
      const bank = bankCode === undefined ? undefined : banks.get(bankCode);
      if (bank === undefined) return refuse(reply, 422, `Unknown bank code: ${bankCode ?? ''}`);
      if (accountNumber === undefined || !accountNumberPattern.test(accountNumber)) {
        return refuse(reply, 422, 'Account number must be 10 digits');
      }
      if (accountNumber === unresolvableAccountNumber) {
        return refuse(reply, 404, 'Could not resolve account name. Check parameters or try again.');
      }
      return {
        status: true,
        message: 'Account number resolved',
        data: { account_number: accountNumber, account_name: accountName(accountNumber), bank_id: bank.id },
      };
    });

    api.post('/transferrecipient', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      if (body.type !== 'nuban')
        return refuse(reply, 400, 'Recipient type not supported: the sandbox has nuban only');
      const name = nonBlank(body.name);
      if (name === null) return refuse(reply, 400, 'Name is required');
      const accountNumber = text(body.account_number);
      if (accountNumber === undefined || !accountNumberPattern.test(accountNumber)) {
        return refuse(reply, 400, 'Account number must be 10 digits');
      }
      const bankCode = text(body.bank_code);
      const bank = bankCode === undefined ? undefined : banks.get(bankCode);
      if (bankCode === undefined || bank === undefined)
        return refuse(reply, 400, `Unknown bank code: ${bankCode ?? ''}`);
      if (body.currency !== undefined && body.currency !== 'NGN')
        return refuse(reply, 400, 'Currency not supported');
      if (accountNumber === unresolvableAccountNumber) return refuse(reply, 400, 'Cannot resolve account');

      let recipient = [...payments.recipients.values()].find(
        (r) => r.accountNumber === accountNumber && r.bankCode === bankCode,
      );
      if (recipient === undefined) {
        recipient = {
          id: nextId(payments),
          recipientCode: uniqueKey(payments.recipients, () => newCode('RCP_')),
          name,
          accountNumber,
          accountName: accountName(accountNumber),
          bankCode,
          bankName: bank.name,
          createdAt: now(),
        };
        payments.recipients.set(recipient.recipientCode, recipient);
      }
      return reply.code(201).send({
        status: true,
        message: 'Transfer recipient created successfully',
        data: recipientJson(recipient),
      });
    });

    api.post('/transfer', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      if (body.source !== 'balance') return refuse(reply, 400, 'Invalid source: only balance is supported');
      const amount = wireAmount(body.amount);
      if (amount === null) return refuse(reply, 400, 'Invalid amount');
      const recipientCode = text(body.recipient);
      const recipient = recipientCode === undefined ? undefined : payments.recipients.get(recipientCode);
      if (recipient === undefined) return refuse(reply, 400, 'Recipient specified is invalid');
      if (body.currency !== undefined && body.currency !== 'NGN')
        return refuse(reply, 400, 'Currency not supported');
      const given = text(body.reference);
      if (given !== undefined && !transferReferencePattern.test(given)) {
        return refuse(reply, 400, 'Invalid reference: 16 to 50 lower-case letters, digits, - and _');
      }
      const reason = text(body.reason) ?? '';

      const existing = given === undefined ? undefined : payments.transfers.get(given);
      if (existing !== undefined) {
        if (existing.recipientCode !== recipient.recipientCode || existing.amountKobo !== amount) {
          return refuse(reply, 400, 'Duplicate Transfer Reference');
        }
        return {
          status: true,
          message: 'Transfer has been queued',
          data: transferCreatedJson(existing, recipient),
        };
      }
      if (payments.balanceKobo < amount) {
        return refuse(reply, 400, 'Your balance is not enough to fulfil this request');
      }
      const at = now();
      const transfer: SandboxTransfer = {
        id: nextId(payments),
        reference: given ?? uniqueKey(payments.transfers, () => lowerAlphanumeric(20)),
        transferCode: newCode('TRF_'),
        amountKobo: amount,
        recipientCode: recipient.recipientCode,
        reason,
        status: 'pending',
        gatewayResponse: null,
        createdAt: at,
        updatedAt: at,
        transferredAt: null,
      };
      payments.balanceKobo -= amount;
      payments.transfers.set(transfer.reference, transfer);
      timers.after(payments.transferSettleDelayMs, () => settleTransfer(transfer));
      return {
        status: true,
        message: 'Transfer has been queued',
        data: transferCreatedJson(transfer, recipient),
      };
    });

    api.get('/transfer/verify/:reference', routeOptions, async (request, reply) => {
      const { reference } = request.params as { reference: string };
      const transfer = payments.transfers.get(reference);
      if (transfer === undefined) return refuse(reply, 404, 'Transfer not found');
      return {
        status: true,
        message: 'Transfer retrieved',
        data: transferJson(transfer, recipientOf(transfer.recipientCode)),
      };
    });

    api.get('/balance', routeOptions, async () => ({
      status: true,
      message: 'Balances retrieved',
      data: [{ currency: 'NGN', balance: Number(payments.balanceKobo) }],
    }));
  }

  function registerCheckout(sandbox: FastifyInstance): void {
    const html = (reply: FastifyReply, status: number, body: string) =>
      reply
        .code(status)
        .header('content-type', 'text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-security-policy', checkoutContentSecurityPolicy)
        .header('referrer-policy', 'no-referrer')
        .send(body);

    sandbox.get('/__sandbox/checkout/:reference', routeOptions, async (request, reply) => {
      const { reference } = request.params as { reference: string };
      const transaction = payments.transactions.get(reference);
      if (transaction === undefined) return html(reply, 404, unknownCheckoutPage(reference));
      return html(reply, 200, checkoutPage(transaction, customerOf(transaction.customerCode)));
    });

    for (const outcome of ['pay', 'decline'] as const) {
      sandbox.post(`/__sandbox/checkout/:reference/${outcome}`, routeOptions, async (request, reply) => {
        const { reference } = request.params as { reference: string };
        const transaction = payments.transactions.get(reference);
        if (transaction === undefined) return html(reply, 404, unknownCheckoutPage(reference));
        // Only an unpaid transaction changes: a second press (or a reload) does nothing.
        if (transaction.status === 'abandoned') {
          if (outcome === 'pay') {
            transaction.status = 'success';
            transaction.paidAt = now();
            sendChargeSuccess(transaction);
          } else {
            transaction.status = 'failed';
          }
        }
        return reply.redirect(`/__sandbox/checkout/${encodeURIComponent(reference)}`, 303);
      });
    }
  }

  function registerControls(sandbox: FastifyInstance): void {
    sandbox.post('/__sandbox/bank-transfer', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const accountNumber = text(body.accountNumber);
      const amount = body.amount;
      if (
        accountNumber === undefined ||
        !accountNumberPattern.test(accountNumber) ||
        typeof amount !== 'number' ||
        !isNairaAmount(amount) ||
        amount <= 0
      ) {
        return invalid(
          reply,
          'accountNumber (10 digits) and amount (naira, above 0, two decimals at most) are required',
        );
      }
      const account = payments.dedicatedAccounts.get(accountNumber);
      if (account === undefined) {
        return reply.code(404).send({
          success: false,
          error: { code: 'NOT_FOUND', message: 'no dedicated account with that number' },
        });
      }
      const at = now();
      const transaction: SandboxTransaction = {
        id: nextId(payments),
        reference: uniqueKey(payments.transactions, () => lowerAlphanumeric(16)),
        accessCode: lowerAlphanumeric(15),
        amountKobo: nairaToKobo(amount),
        customerCode: account.customerCode,
        status: 'success',
        channel: 'dedicated_nuban',
        callbackUrl: null,
        metadata: { receiver_account_number: account.accountNumber, receiver_bank: dedicatedBank.name },
        dedicatedAccountNumber: account.accountNumber,
        authorizationCode: newCode('AUTH_'),
        createdAt: at,
        paidAt: at,
      };
      payments.transactions.set(transaction.reference, transaction);
      const delivery = sendChargeSuccess(transaction);
      return {
        success: true,
        data: { reference: transaction.reference, accountNumber, amount, webhook: delivery.status },
      };
    });

    sandbox.post('/__sandbox/webhooks', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      if ((body.mode !== 'deliver' && body.mode !== 'drop') || Object.keys(body).length !== 1) {
        return invalid(reply, 'mode must be "deliver" or "drop"');
      }
      payments.webhookMode = body.mode;
      return { success: true, data: { mode: payments.webhookMode } };
    });

    sandbox.get('/__sandbox/webhooks', routeOptions, async () => ({
      success: true,
      data: {
        mode: payments.webhookMode,
        deliveries: payments.webhookDeliveries
          .slice(-50)
          .map(({ settled: _settled, ...delivery }) => delivery)
          .reverse(),
      },
    }));

    sandbox.post(`${apiPrefix}/balance`, routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const amount = body.amount;
      if (typeof amount !== 'number' || !isNairaAmount(amount) || Object.keys(body).length !== 1) {
        return invalid(reply, 'amount: naira, 0 or more, two decimals at most');
      }
      const kobo = nairaToKobo(amount);
      if (kobo > BigInt(Number.MAX_SAFE_INTEGER)) return invalid(reply, 'amount is too large');
      payments.balanceKobo = kobo;
      return { success: true, data: { balance: koboToNaira(payments.balanceKobo) } };
    });
  }

  function sendChargeSuccess(transaction: SandboxTransaction) {
    const data = transactionJson(transaction, customerOf(transaction.customerCode));
    return webhooks.send('charge.success', transaction.reference, data);
  }

  function settleTransfer(transfer: SandboxTransfer): void {
    if (transfer.status !== 'pending') return;
    const recipient = recipientOf(transfer.recipientCode);
    const at = now();
    transfer.updatedAt = at;
    if (recipient.accountNumber.endsWith('1')) {
      transfer.status = 'failed';
      transfer.gatewayResponse =
        'The recipient account could not be credited (sandbox: account number ends in 1)';
      payments.balanceKobo += transfer.amountKobo;
      webhooks.send('transfer.failed', transfer.reference, transferEventJson(transfer, recipient));
      return;
    }
    transfer.status = 'success';
    transfer.transferredAt = at;
    options.onTransferSettled?.(recipient.accountNumber, transfer.amountKobo);
    webhooks.send('transfer.success', transfer.reference, transferEventJson(transfer, recipient));
    if (recipient.accountNumber.endsWith('2')) {
      timers.after(payments.transferReversalDelayMs, () => reverseTransfer(transfer, recipient));
    }
  }

  function reverseTransfer(transfer: SandboxTransfer, recipient: SandboxRecipient): void {
    if (transfer.status !== 'success') return;
    transfer.status = 'reversed';
    transfer.updatedAt = now();
    transfer.gatewayResponse = 'Reversed by the receiving bank (sandbox: account number ends in 2)';
    payments.balanceKobo += transfer.amountKobo;
    options.onTransferReversed?.(recipient.accountNumber, transfer.amountKobo);
    webhooks.send('transfer.reversed', transfer.reference, transferEventJson(transfer, recipient));
  }

  /** The customer with this email, made on first use; names and phone given update it. */
  function customerFor(
    email: string,
    update: { firstName?: string | null; lastName?: string | null; phone?: string | null },
  ): SandboxCustomer {
    const key = email.toLowerCase();
    const code = payments.customersByEmail.get(key);
    const at = now();
    let customer = code === undefined ? undefined : payments.customers.get(code);
    if (customer === undefined) {
      customer = {
        id: nextId(payments),
        customerCode: uniqueKey(payments.customers, () => newCode('CUS_')),
        email,
        firstName: null,
        lastName: null,
        phone: null,
        createdAt: at,
        updatedAt: at,
      };
      payments.customers.set(customer.customerCode, customer);
      payments.customersByEmail.set(key, customer.customerCode);
    }
    for (const field of ['firstName', 'lastName', 'phone'] as const) {
      const value = update[field];
      if (value !== undefined && value !== null) {
        customer[field] = value;
        customer.updatedAt = at;
      }
    }
    return customer;
  }

  function customerOf(code: string): SandboxCustomer {
    const customer = payments.customers.get(code);
    if (customer === undefined) throw new Error(`sandbox state broken: no customer ${code}`);
    return customer;
  }

  function recipientOf(code: string): SandboxRecipient {
    const recipient = payments.recipients.get(code);
    if (recipient === undefined) throw new Error(`sandbox state broken: no recipient ${code}`);
    return recipient;
  }

  /** A dedicated account's own name, else a stable made-up name from the digits ("SURNAME FIRSTNAME"). */
  function accountName(accountNumber: string): string {
    const dedicated = payments.dedicatedAccounts.get(accountNumber);
    if (dedicated !== undefined) return dedicated.accountName;
    const firstNames = [
      'ADAEZE',
      'BOLA',
      'CHINEDU',
      'DAMILOLA',
      'EMEKA',
      'FUNMI',
      'GARBA',
      'HAUWA',
      'IFEANYI',
      'JUMOKE',
    ];
    const lastNames = [
      'ADEYEMI',
      'BELLO',
      'CHUKWU',
      'DANJUMA',
      'EZE',
      'FASHOLA',
      'GANA',
      'IBRAHIM',
      'OKAFOR',
      'YUSUF',
    ];
    const digit = (i: number) => Number(accountNumber[i]);
    return `${lastNames[digit(8)]} ${firstNames[digit(9)]}`;
  }
}

function authorised(request: FastifyRequest, secret: string): boolean {
  return sameSecret(request.headers.authorization, `Bearer ${secret}`);
}

/** Paystack's refusal: `{status: false, message}`. */
function refuse(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ status: false, message });
}

/** The service's envelope, for the sandbox's own control endpoints. */
function invalid(reply: FastifyReply, message: string) {
  return reply.code(400).send({ success: false, error: { code: 'VALIDATION_ERROR', message } });
}

function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * A positive integer amount in kobo, exactly: a JSON number JSON carried exactly (a safe integer) or,
 * from a form, a string of digits. Anything else is null.
 */
function wireAmount(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : null;
  if (typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value)) return BigInt(value);
  return null;
}

/** An http(s) URL, or undefined when the value is not one. */
function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Metadata as an object (Paystack also takes it stringified); null when absent, undefined when bad. */
function metadataObject(value: unknown): Record<string, unknown> | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

/** Paystack's cursors are base64 text such as "YmFuazoxNjk=" (bank:169): the last id of a page. */
function bankCursor(id: number): string {
  return Buffer.from(`bank:${id}`).toString('base64');
}

/** The id a cursor of bankCursor names, or null when it is not one. */
function bankCursorId(cursor: string): number | null {
  const match = /^bank:(\d{1,9})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
  return match === null ? null : Number(match[1]);
}

/** A fresh key for the map (random codes practically never collide; this makes sure). */
function uniqueKey(map: ReadonlyMap<string, unknown>, make: () => string): string {
  for (;;) {
    const key = make();
    if (!map.has(key)) return key;
  }
}
