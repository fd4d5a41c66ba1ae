import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  asBody,
  emailPattern,
  httpUrl,
  metadataObject,
  refuse,
  routeOptions,
  text,
  uniqueKey,
  wireAmount,
} from './requests.ts';
import { customerFor, customerOf, type PaymentsSimulator } from './simulator.ts';
import type { SandboxTransaction } from './state.ts';
import {
  lowerAlphanumeric,
  newCode,
  nextId,
  transactionFetchJson,
  transactionJson,
  transactionListItemJson,
} from './wire.ts';

// Paystack's transactions: Initialize Transaction (the checkout), Verify Transaction, Fetch
// Transaction (by id) and List Transactions. An initialized transaction is "abandoned" (unpaid) until
// its checkout page pays or declines it (checkout.ts); a bank transfer into a dedicated account makes
// a paid one (controls.ts). Every one is listed and fetched alike, whatever became of its webhook.

const transactionReferencePattern = /^[A-Za-z0-9.=-]{1,100}$/;

export function registerTransactionRoutes(api: FastifyInstance, sim: PaymentsSimulator): void {
  api.post('/transaction/initialize', routeOptions, async (request, reply) =>
    initializeTransaction(sim, request, reply),
  );
  api.get('/transaction/verify/:reference', routeOptions, async (request, reply) =>
    verifyTransaction(sim, request, reply),
  );
  api.get('/transaction', routeOptions, async (request, reply) => listTransactions(sim, request, reply));
  // One segment after /transaction: no clash with /transaction/verify/:reference (two) or with
  // POST /transaction/initialize (another method).
  api.get('/transaction/:id', routeOptions, async (request, reply) => fetchTransaction(sim, request, reply));
}

function initializeTransaction(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { payments } = sim;
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
  if (given !== undefined && payments.transactions.has(given)) return duplicateReference(reply);
  const callbackUrl = body.callback_url === undefined ? null : httpUrl(body.callback_url);
  if (callbackUrl === undefined) return refuse(reply, 400, 'Invalid callback_url');
  const metadata = metadataObject(body.metadata);
  if (metadata === undefined) return refuse(reply, 400, 'Invalid metadata: a JSON object is expected');

  const reference = given ?? uniqueKey(payments.transactions, () => lowerAlphanumeric(10));
  const customer = customerFor(sim, email, {});
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
    createdAt: sim.clock.now(),
    paidAt: null,
  };
  payments.transactions.set(reference, transaction);
  return {
    status: true,
    message: 'Authorization URL created',
    data: {
      authorization_url: `${sim.publicBaseUrl}/__sandbox/checkout/${encodeURIComponent(reference)}`,
      access_code: transaction.accessCode,
      reference,
    },
  };
}

function duplicateReference(reply: FastifyReply) {
  return reply.code(400).send({
    status: false,
    message: 'Duplicate Transaction Reference',
    meta: { nextStep: 'Try and create the Transaction or Charge with a new reference' },
    type: 'validation_error',
    code: 'duplicate_reference',
  });
}

function verifyTransaction(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { reference } = request.params as { reference: string };
  const transaction = sim.payments.transactions.get(reference);
  if (transaction === undefined) return refuse(reply, 404, 'Transaction reference not found');
  return {
    status: true,
    message: 'Verification successful',
    data: transactionJson(transaction, customerOf(sim.payments, transaction.customerCode)),
  };
}

/**
 * Fetch Transaction, by Paystack's numeric id (404 for an id it never gave). A segment that is no
 * number is another of Paystack's paths (/transaction/totals, /transaction/export): not implemented.
 */
function fetchTransaction(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { id } = request.params as { id: string };
  if (!/^\d{1,15}$/.test(id)) return reply.callNotFound();
  const wanted = Number(id);
  const transaction = [...sim.payments.transactions.values()].find((t) => t.id === wanted);
  if (transaction === undefined) return refuse(reply, 404, 'Transaction not found');
  return {
    status: true,
    message: 'Transaction retrieved',
    data: transactionFetchJson(transaction, customerOf(sim.payments, transaction.customerCode)),
  };
}

const dayMs = 86_400_000;

/**
 * A `from` or `to` of the list: a date-time as given, or a date alone (2026-11-28, as Paystack takes
 * it) for the start of that day UTC (`from`) or its last millisecond (`to`). null when absent,
 * undefined when unreadable.
 */
function listBound(value: string | undefined, edge: 'start' | 'end'): Date | null | undefined {
  if (value === undefined) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const start = new Date(`${value}T00:00:00.000Z`);
    // Date rolls 2026-02-30 over into March: a day that does not exist is unreadable.
    if (Number.isNaN(start.getTime()) || start.toISOString().slice(0, 10) !== value) return undefined;
    return edge === 'start' ? start : new Date(start.getTime() + dayMs - 1);
  }
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/**
 * List Transactions: newest first, filtered by status, channel and creation time, paged like Paystack
 * (perPage default 50; `per_page` is the OpenAPI document's spelling of the same).
 */
function listTransactions(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const query = request.query as Record<string, string | undefined>;
  const page = Number(query.page ?? '1');
  const perPage = Number(query.per_page ?? query.perPage ?? '50');
  const from = listBound(query.from, 'start');
  const to = listBound(query.to, 'end');
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1 || perPage > 1000)
    return refuse(reply, 400, 'Invalid page or perPage');
  if (from === undefined || to === undefined) return refuse(reply, 400, 'Invalid date in from or to');
  const matching = [...sim.payments.transactions.values()]
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
    data: items.map((t) => transactionListItemJson(t, customerOf(sim.payments, t.customerCode))),
    meta: {
      total: matching.length,
      total_volume: Number(matching.reduce((sum, t) => sum + t.amountKobo, 0n)),
      skipped: (page - 1) * perPage,
      perPage,
      page,
      pageCount: Math.ceil(matching.length / perPage),
    },
  };
}
