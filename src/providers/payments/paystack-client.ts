import { z } from 'zod';
import {
  type EndpointOptions,
  exchangeJson,
  issuePaths,
  type JsonEndpoint,
  jsonEndpoint,
  strangerAnswer,
} from '../http-exchange.ts';
import {
  type DedicatedAccount,
  type PaymentProvider,
  PaymentProviderError,
  type ProviderBank,
  type TransactionStatus,
  type Transfer,
  type TransferStatus,
  type VerifiedTransaction,
} from './payment-provider.ts';

// The payment provider client, speaking Paystack's REST API (shared/reference/providers.md section 1,
// shared/reference/paystack-openapi.yaml): `Authorization: Bearer <secret key>`, every answer in the
// envelope `{status, message, data}`, amounts as integer kobo on the wire. In the sandbox the same
// client talks to the simulator under /__sandbox/payments.
//
// Outcomes of a call (PaymentProviderError.definite says which failure is which):
// - an answer: a 2xx with status:true and a body of the documented shape;
// - "unknown reference" (null): a 404 with status:false on the verify, fetch and resolve calls;
// - a definite failure: a 4xx with status:false. The provider refused, nothing happened;
// - an indefinite failure: timeout, network error, 5xx, 429, or anything we cannot read (not JSON, the
//   wrong shape, an answer about another reference). The request may or may not have taken effect.
//
// Retries: a GET (verify, fetch, list transactions, resolve, balance, list banks) changes nothing, so
// it is repeated once after a network error or a 5xx, inside the same time budget. A POST is never
// repeated here: a repeated initialize or transfer could act twice; after an indefinite failure the
// caller verifies by reference.

export type PaystackClientOptions = EndpointOptions & { secretKey: string };

/** Amounts cross the wire as JSON numbers, exact only up to 2^53 - 1. */
const wireAmountKoboMax = BigInt(Number.MAX_SAFE_INTEGER);
/** How much of a provider's error message goes into ours. */
const providerMessageLengthMax = 200;
/** Banks asked for per page of List Banks (cursor pagination). */
const bankPageSize = 100;
/** Pages of List Banks followed at most: Paystack lists a few hundred Nigerian banks, not thousands. */
const bankPagesMax = 20;

const transactionStatuses = [
  'success',
  'failed',
  'abandoned',
  'reversed',
  'ongoing',
  'pending',
  'processing',
  'queued',
] as const satisfies readonly TransactionStatus[];
const transferStatuses = [
  'pending',
  'success',
  'reversed',
  'failed',
  'otp',
  'abandoned',
  'blocked',
  'rejected',
  'received',
] as const satisfies readonly TransferStatus[];

/** A wire amount: an integer number of kobo that JSON carried exactly (zod's int() is safe-integer only). */
const wireKobo = z
  .number()
  .int()
  .min(0)
  .transform((n) => BigInt(n));

/** Paystack's envelope around a successful answer. */
const ok = <T extends z.ZodType>(data: T) => z.object({ status: z.literal(true), message: z.string(), data });
/** Paystack's envelope around a refusal: `{status: false, message}`. */
const refusal = z.object({ status: z.literal(false), message: z.string() });

const initializeAnswer = ok(
  z.object({
    authorization_url: z.url({ protocol: /^https?$/ }),
    access_code: z.string().min(1),
    reference: z.string().min(1),
  }),
);

const timestamp = z.iso.datetime({ offset: true });
/** A time that may not be there yet: null, absent, or "" (List's paidAt and Fetch's paid_at before payment). */
const laterTimestamp = z
  .union([timestamp, z.literal('')])
  .nullish()
  .transform((value) => (value === '' || value === undefined ? null : value));

const transactionData = z
  .object({
    id: z.number().int().positive(),
    reference: z.string().min(1),
    status: z.enum(transactionStatuses),
    amount: wireKobo,
    currency: z.string().min(1),
    paid_at: laterTimestamp,
    paidAt: laterTimestamp,
    // Verify and List send both spellings; either will do.
    created_at: timestamp.nullish(),
    createdAt: timestamp.nullish(),
    // An object as initialize got it, "" for none (verify), or the JSON text of an object.
    metadata: z.unknown().optional().transform(metadataStrings),
    channel: z.string().nullish(),
    gateway_response: z.string().nullish(),
    customer: z.object({ email: z.string().nullish(), customer_code: z.string().nullish() }).nullish(),
    // An empty object for an abandoned checkout; for money into a dedicated account, the account.
    authorization: z.object({ receiver_bank_account_number: z.string().nullish() }).nullish(),
  })
  .refine((data) => (data.created_at ?? data.createdAt) != null, {
    message: 'no creation time',
    path: ['created_at'],
  });
const transactionAnswer = ok(transactionData);
const transactionListAnswer = ok(z.array(transactionData)).extend({
  meta: z.object({ page: z.number().int(), pageCount: z.number().int().min(0) }),
});

/** The string values of a transaction's metadata; {} for none, for "" and for anything not an object. */
function metadataStrings(value: unknown): Record<string, string> {
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return {};
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
  // fromEntries defines own properties: a "__proto__" key stays a key.
  return Object.fromEntries(
    Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

function verifiedTransaction(data: z.output<typeof transactionData>): VerifiedTransaction {
  const paidAt = data.paid_at ?? data.paidAt;
  // transactionData refuses an answer with neither spelling.
  const createdAt = (data.created_at ?? data.createdAt)!;
  return {
    id: data.id,
    reference: data.reference,
    status: data.status,
    amountKobo: data.amount,
    currency: data.currency,
    paidAt: paidAt === null ? null : new Date(paidAt),
    channel: data.channel ?? null,
    customerEmail: data.customer?.email ?? null,
    customerCode: data.customer?.customer_code ?? null,
    gatewayResponse: data.gateway_response ?? null,
    // Fetch's schema wants every authorization field, so "" may stand for none.
    receiverAccountNumber: data.authorization?.receiver_bank_account_number || null,
    createdAt: new Date(createdAt),
    metadata: data.metadata,
  };
}

const customerAnswer = ok(z.object({ customer_code: z.string().min(1), email: z.string() }));

const dedicatedAccountAnswer = ok(
  z.object({
    account_number: z.string().regex(/^\d{10}$/),
    account_name: z.string().trim().min(1),
    bank: z.object({ name: z.string().trim().min(1), slug: z.string().min(1) }),
    customer: z.object({ customer_code: z.string().min(1) }),
  }),
);

const resolveAnswer = ok(
  z.object({ account_number: z.string().min(1), account_name: z.string().trim().min(1) }),
);

const recipientAnswer = ok(z.object({ recipient_code: z.string().min(1) }));

const transferAnswer = ok(
  z.object({
    reference: z.string().min(1),
    transfer_code: z.string().min(1),
    status: z.enum(transferStatuses),
    amount: wireKobo,
    reason: z.string().nullish(),
  }),
);

// List Banks with use_cursor: `meta.next` is the cursor of the next page, null on the last. Without
// cursor pagination Paystack sends no `meta.next`, which reads as one page.
const bankListAnswer = ok(
  z.array(
    z.object({
      name: z.string().trim().min(1),
      code: z.string().trim().min(1),
      active: z.boolean(),
      is_deleted: z.boolean().nullish(),
      type: z.string(),
      country: z.string(),
      currency: z.string(),
    }),
  ),
).extend({ meta: z.object({ next: z.string().nullish() }).nullish() });

const balanceAnswer = ok(z.array(z.object({ currency: z.string(), balance: wireKobo })));

type Answer = { kind: 'ok'; body: unknown } | { kind: 'not_found' };
type Call = {
  what: string;
  method: 'GET' | 'POST';
  path: string;
  body?: Record<string, unknown>;
  /** Verify, fetch and resolve: a 404 with status:false means "no such reference/account", an answer. */
  notFoundIsAnswer?: boolean;
};

/** What every call to Paystack needs, made once by createPaystackClient. */
type PaystackConnection = {
  /** The base URL and the `Authorization: Bearer` every call carries. */
  endpoint: JsonEndpoint;
};

/** The request of one operation of the PaymentProvider interface. */
type RequestOf<K extends keyof PaymentProvider> = Parameters<PaymentProvider[K]>[0];

export function createPaystackClient(options: PaystackClientOptions): PaymentProvider {
  const connection: PaystackConnection = {
    endpoint: jsonEndpoint('paystack', options, { authorization: `Bearer ${options.secretKey}` }),
  };
  return {
    initializeTransaction: (request) => initializeTransaction(connection, request),
    verifyTransaction: (reference) => verifyTransaction(connection, reference),
    fetchTransaction: (id) => fetchTransaction(connection, id),
    listTransactions: (request) => listTransactions(connection, request),
    createCustomer: (request) => createCustomer(connection, request),
    createDedicatedAccount: (request) => createDedicatedAccount(connection, request),
    resolveAccount: (request) => resolveAccount(connection, request),
    createTransferRecipient: (request) => createTransferRecipient(connection, request),
    initiateTransfer: (request) => initiateTransfer(connection, request),
    verifyTransfer: (reference) => verifyTransfer(connection, reference),
    balance: () => balance(connection),
    listBanks: () => listBanks(connection),
  };
}

/** One call; only a GET is sent twice (see the header). Throws PaymentProviderError for every failure. */
async function send(connection: PaystackConnection, call: Call): Promise<Answer> {
  const { what } = call;
  const reply = await exchangeJson(connection.endpoint, {
    operation: what,
    method: call.method,
    path: call.path,
    ...(call.body !== undefined ? { body: { json: call.body } } : {}),
    retry: call.method === 'GET',
  });
  if (reply.kind === 'no_answer') throw indefinite(what, reply.reason, reply.status);
  const { status, body } = reply;
  if (status >= 200 && status < 300) return { kind: 'ok', body };
  const refused = refusal.safeParse(body);
  if (refused.success) {
    if (status === 404 && call.notFoundIsAnswer === true) return { kind: 'not_found' };
    const message = refused.data.message.slice(0, providerMessageLengthMax);
    if (status === 401 || status === 403) {
      throw definite(what, `refused our secret key (${status}): ${message}`, status);
    }
    throw definite(what, `refused the request (${status}): ${message}`, status);
  }
  // A 4xx without Paystack's envelope comes from something in between (a proxy, a wrong base URL):
  // we cannot tell whether the provider saw the request.
  throw indefinite(what, strangerAnswer(status, "the provider's envelope"), status);
}

function validate<T>(what: string, schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    throw indefinite(what, `answered with an unexpected body (at ${issuePaths(result.error)})`, null);
  }
  return result.data;
}

async function initializeTransaction(
  connection: PaystackConnection,
  request: RequestOf<'initializeTransaction'>,
): Promise<{ authorizationUrl: string; accessCode: string; reference: string }> {
  const what = 'initialize transaction';
  requireText(what, 'reference', request.reference);
  const answer = await send(connection, {
    what,
    method: 'POST',
    path: '/transaction/initialize',
    body: {
      email: request.email,
      amount: toWireAmount(what, request.amountKobo),
      currency: 'NGN',
      reference: request.reference,
      ...(request.callbackUrl !== undefined ? { callback_url: request.callbackUrl } : {}),
      ...(request.metadata !== undefined ? { metadata: request.metadata } : {}),
    },
  });
  const { data } = validate(what, initializeAnswer, okBody(answer));
  if (data.reference !== request.reference)
    throw indefinite(what, 'answered for a different reference', null);
  return {
    authorizationUrl: data.authorization_url,
    accessCode: data.access_code,
    reference: data.reference,
  };
}

async function verifyTransaction(
  connection: PaystackConnection,
  reference: string,
): Promise<VerifiedTransaction | null> {
  const what = 'verify transaction';
  requireText(what, 'reference', reference);
  const answer = await send(connection, {
    what,
    method: 'GET',
    path: `/transaction/verify/${encodeURIComponent(reference)}`,
    notFoundIsAnswer: true,
  });
  if (answer.kind === 'not_found') return null;
  const { data } = validate(what, transactionAnswer, answer.body);
  if (data.reference !== reference) throw indefinite(what, 'answered for a different reference', null);
  return verifiedTransaction(data);
}

async function fetchTransaction(
  connection: PaystackConnection,
  id: number,
): Promise<VerifiedTransaction | null> {
  const what = 'fetch transaction';
  if (!Number.isSafeInteger(id) || id < 1) {
    throw definite(what, `refused locally: ${id} is not a transaction id`, null);
  }
  const answer = await send(connection, {
    what,
    method: 'GET',
    path: `/transaction/${id}`,
    notFoundIsAnswer: true,
  });
  if (answer.kind === 'not_found') return null;
  const { data } = validate(what, transactionAnswer, answer.body);
  if (data.id !== id) throw indefinite(what, 'answered for a different transaction', null);
  return verifiedTransaction(data);
}

async function listTransactions(
  connection: PaystackConnection,
  request: RequestOf<'listTransactions'>,
): Promise<{ transactions: VerifiedTransaction[]; pageCount: number }> {
  const what = 'list transactions';
  // No status or channel: Paystack lists every one.
  const query = new URLSearchParams({
    ...(request.status !== undefined ? { status: request.status } : {}),
    ...(request.channel !== undefined ? { channel: request.channel } : {}),
    from: request.from.toISOString(),
    to: request.to.toISOString(),
    page: String(request.page),
    per_page: String(request.perPage),
  });
  const answer = await send(connection, { what, method: 'GET', path: `/transaction?${query}` });
  if (answer.kind === 'not_found') throw indefinite(what, 'answered 404', 404);
  const { data, meta } = validate(what, transactionListAnswer, answer.body);
  return { transactions: data.map(verifiedTransaction), pageCount: meta.pageCount };
}

async function createCustomer(
  connection: PaystackConnection,
  request: RequestOf<'createCustomer'>,
): Promise<{ customerCode: string }> {
  const what = 'create customer';
  const answer = await send(connection, {
    what,
    method: 'POST',
    path: '/customer',
    body: {
      email: request.email,
      first_name: request.firstName,
      last_name: request.lastName,
      phone: request.phone,
    },
  });
  const { data } = validate(what, customerAnswer, okBody(answer));
  return { customerCode: data.customer_code };
}

async function createDedicatedAccount(
  connection: PaystackConnection,
  request: RequestOf<'createDedicatedAccount'>,
): Promise<DedicatedAccount> {
  const what = 'create dedicated account';
  requireText(what, 'customer code', request.customerCode);
  const answer = await send(connection, {
    what,
    method: 'POST',
    path: '/dedicated_account',
    body: { customer: request.customerCode, preferred_bank: request.preferredBank },
  });
  const { data } = validate(what, dedicatedAccountAnswer, okBody(answer));
  if (data.customer.customer_code !== request.customerCode) {
    throw indefinite(what, 'answered for a different customer', null);
  }
  return {
    accountNumber: data.account_number,
    accountName: data.account_name.trim(),
    bankName: data.bank.name.trim(),
    providerSlug: data.bank.slug,
    customerCode: data.customer.customer_code,
  };
}

async function resolveAccount(
  connection: PaystackConnection,
  request: RequestOf<'resolveAccount'>,
): Promise<{ accountNumber: string; accountName: string } | null> {
  const what = 'resolve account';
  requireText(what, 'account number', request.accountNumber);
  requireText(what, 'bank code', request.bankCode);
  const query = new URLSearchParams({
    account_number: request.accountNumber,
    bank_code: request.bankCode,
  });
  const answer = await send(connection, {
    what,
    method: 'GET',
    path: `/bank/resolve?${query}`,
    notFoundIsAnswer: true,
  });
  if (answer.kind === 'not_found') return null;
  const { data } = validate(what, resolveAnswer, answer.body);
  if (data.account_number !== request.accountNumber) {
    throw indefinite(what, 'answered for a different account', null);
  }
  return { accountNumber: data.account_number, accountName: data.account_name.trim() };
}

async function createTransferRecipient(
  connection: PaystackConnection,
  request: RequestOf<'createTransferRecipient'>,
): Promise<{ recipientCode: string }> {
  const what = 'create transfer recipient';
  const answer = await send(connection, {
    what,
    method: 'POST',
    path: '/transferrecipient',
    body: {
      type: 'nuban',
      name: request.name,
      account_number: request.accountNumber,
      bank_code: request.bankCode,
      currency: 'NGN',
    },
  });
  const { data } = validate(what, recipientAnswer, okBody(answer));
  return { recipientCode: data.recipient_code };
}

async function initiateTransfer(
  connection: PaystackConnection,
  request: RequestOf<'initiateTransfer'>,
): Promise<Transfer> {
  const what = 'initiate transfer';
  requireText(what, 'reference', request.reference);
  const amount = toWireAmount(what, request.amountKobo);
  const answer = await send(connection, {
    what,
    method: 'POST',
    path: '/transfer',
    body: {
      source: 'balance',
      amount,
      recipient: request.recipientCode,
      reference: request.reference,
      reason: request.reason,
      currency: 'NGN',
    },
  });
  const transfer = toTransfer(validate(what, transferAnswer, okBody(answer)).data);
  if (transfer.reference !== request.reference) {
    throw indefinite(what, 'answered for a different reference', null);
  }
  if (transfer.amountKobo !== request.amountKobo) {
    throw indefinite(what, 'answered with a different amount', null);
  }
  return transfer;
}

async function verifyTransfer(connection: PaystackConnection, reference: string): Promise<Transfer | null> {
  const what = 'verify transfer';
  requireText(what, 'reference', reference);
  const answer = await send(connection, {
    what,
    method: 'GET',
    path: `/transfer/verify/${encodeURIComponent(reference)}`,
    notFoundIsAnswer: true,
  });
  if (answer.kind === 'not_found') return null;
  const transfer = toTransfer(validate(what, transferAnswer, answer.body).data);
  if (transfer.reference !== reference) throw indefinite(what, 'answered for a different reference', null);
  return transfer;
}

async function balance(connection: PaystackConnection): Promise<{ balanceKobo: bigint }> {
  const what = 'balance';
  const answer = await send(connection, { what, method: 'GET', path: '/balance' });
  const { data } = validate(what, balanceAnswer, okBody(answer));
  const ngn = data.filter((entry) => entry.currency === 'NGN');
  if (ngn.length !== 1) throw indefinite(what, `answered with ${ngn.length} NGN balances`, null);
  return { balanceKobo: ngn[0]!.balance };
}

/** Every page of List Banks, by cursor, bounded by bankPagesMax. */
async function listBanks(connection: PaystackConnection): Promise<ProviderBank[]> {
  const what = 'list banks';
  const banks: ProviderBank[] = [];
  const cursorsSeen = new Set<string>();
  let cursor: string | null = null;
  for (let page = 1; page <= bankPagesMax; page += 1) {
    const query = new URLSearchParams({
      country: 'nigeria',
      use_cursor: 'true',
      perPage: String(bankPageSize),
    });
    if (cursor !== null) query.set('next', cursor);
    const answer = await send(connection, { what, method: 'GET', path: `/bank?${query}` });
    const { data, meta } = validate(what, bankListAnswer, okBody(answer));
    banks.push(...data.map(toProviderBank));
    const next = meta?.next ?? null;
    if (next === null || next === '' || data.length === 0) return banks;
    // A cursor given twice would page for ever.
    if (cursorsSeen.has(next)) throw indefinite(what, 'answered with a cursor it gave before', null);
    cursorsSeen.add(next);
    cursor = next;
  }
  throw indefinite(what, `listed more than ${bankPagesMax} pages of ${bankPageSize} banks`, null);
}

function toProviderBank(data: z.output<typeof bankListAnswer>['data'][number]): ProviderBank {
  return {
    code: data.code,
    name: data.name,
    active: data.active && data.is_deleted !== true,
    type: data.type,
    country: data.country,
    currency: data.currency,
  };
}

function toTransfer(data: z.output<typeof transferAnswer>['data']): Transfer {
  return {
    reference: data.reference,
    transferCode: data.transfer_code,
    status: data.status,
    amountKobo: data.amount,
    reason: data.reason ?? null,
  };
}

/** The body of an answer to a call that has no "not found" outcome. */
function okBody(answer: Answer): unknown {
  // send() returns not_found only for calls that asked for it.
  if (answer.kind !== 'ok') throw new Error('unreachable: not_found on a call without notFoundIsAnswer');
  return answer.body;
}

/** Kobo for the wire: a positive integer that a JSON number carries exactly. Refused here otherwise. */
function toWireAmount(what: string, kobo: bigint): number {
  if (kobo <= 0n || kobo > wireAmountKoboMax) {
    throw definite(what, `refused locally: ${kobo} kobo is not between 1 and ${wireAmountKoboMax}`, null);
  }
  return Number(kobo);
}

/** A path segment or query value that is empty would address another endpoint: refuse it. */
function requireText(what: string, name: string, value: string): void {
  if (value.trim() === '') throw definite(what, `refused locally: the ${name} is empty`, null);
}

function definite(what: string, happened: string, httpStatus: number | null): PaymentProviderError {
  return new PaymentProviderError(`Payment provider (${what}) ${happened}`, { definite: true, httpStatus });
}

function indefinite(what: string, happened: string, httpStatus: number | null) {
  return new PaymentProviderError(`Payment provider (${what}) ${happened}`, { definite: false, httpStatus });
}
