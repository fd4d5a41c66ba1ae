import assert from 'node:assert/strict';
import { z } from 'zod';
import { isNairaAmount, nairaToKobo } from '../../money.ts';
import { clipMessage, exchangeJson, issuePaths, strangerAnswer } from '../http-exchange.ts';
import { type VtuClientOptions, type VtuConnection, vtuConnection } from './vtu-connection.ts';
import {
  type AmountRule,
  amountBreach,
  catalogueCallsNotOffered,
  type DataPlanItem,
  type Network,
  type NetworkItem,
  notOffered,
  type ProviderOrder,
  type ProviderOrderListRequest,
  type PurchaseOutcome,
  type PurchaseRequest,
  type RequeryOutcome,
  type RequeryRequest,
  type VtuProvider,
  VtuProviderError,
  type VtuService,
} from './vtu-provider.ts';

// The data provider client, speaking the API of the "DataStation clone" family of Nigerian data
// vendors (shared/reference/providers.md section 3.1): one Django REST framework script run by many
// vendors. `Authorization: Token <key>`; data at POST /api/data/, airtime at POST /api/topup/, an order
// read back at GET /api/data/{id} (or /api/topup/{id}), the order lists at GET /api/data/ and
// /api/topup/, and the account with its wallet balance and plan catalogue at GET /api/user/. An order
// carries its state in `Status` (capital S): successful, pending (or processing), failed.
//
// The outcome rule. Many clients of these vendors treat anything but "successful" as failed; this one
// must not, because `failed` refunds the user (vtu-provider.ts). So:
// - Status "successful" → success; "pending"/"processing" → pending;
// - Status "failed", or a 400/401/403 whose body is the vendor's own refusal (`{"error": [...]}`,
//   `{"detail": ...}`, DRF field errors such as `{"plan": [...]}`) → failed: the vendor refused and
//   nothing was sent. A 401 counts: DRF checks the token before the purchase view runs;
// - everything else → unknown: a timeout, a network error, a 5xx, a 429, any other Status, a body that
//   is not JSON or not an order, an order for another reference, and a refusal that is about our
//   `ident` (the reference was already used: an earlier attempt may have delivered). The caller
//   requeries an unknown outcome and never refunds on it.
//
// Our reference travels as `ident`, which is how a purchase whose answer never came is found again:
// requery without the vendor's id reads the order list (newest first, up to listPagesMax pages) and
// looks for it. `not_found` is answered when the whole list was read without it, or when the pages
// read already reach orders the vendor created well before we sent ours (create_date older than the
// request's sentAt by more than listClockSkewSeconds): the list is newest first, so ours would have
// been among them. Reading only the newest 10 pages, with no such stop, kept a purchase that never
// reached the vendor `unknown`, and processing, for ever once 200 newer orders came after it (the
// long soak left 14 so: over 1,900 data orders, and purchases sent while the vendor timed out). A
// vendor still working on a request that timed out may not list it yet, so the caller should trust
// not_found only some time after the purchase. An order missing from the pages we read, with no
// create_date we can read past its send time, is `unknown`, never not_found. `Ported_number: true` is
// always sent, because the service checks the prefix itself and a ported number is still the user's.
//
// The same lists give the daily reconciliation every order of a period (listOrders): both lists are
// read newest first until a whole page is older than the period, each order read as a requery of it
// would be. Unlike a requery, which answers `unknown` and tries again later, the listing throws on a
// page or an order it cannot read: the reconciliation then fails and says why, never compares a
// short list. A create_date without a time zone cannot be placed in a period, so it throws too.
//
// Retries: a GET is repeated once after a network error or a 5xx, inside the call's time budget. A
// POST is never repeated here; the caller requeries instead.

export type DataVendorClientOptions = VtuClientOptions & {
  /** The vendor's API token, sent as `Authorization: Token <token>`. */
  token: string;
  /** The vendor's network ids, where they differ from DataStation's (1 MTN, 2 GLO, 3 9MOBILE, 4 AIRTEL). */
  networkIds?: Partial<Record<Network, number>>;
};

export const defaultDataVendorNetworkIds: Readonly<Record<Network, number>> = {
  mtn: 1,
  glo: 2,
  '9mobile': 3,
  airtel: 4,
};

const networkNames: Readonly<Record<Network, string>> = {
  mtn: 'MTN',
  glo: 'GLO',
  airtel: 'Airtel',
  '9mobile': '9mobile',
};

/** The catalogue's key for each network's plans in `Dataplans`. */
const planKeys: Readonly<Record<Network, string>> = {
  mtn: 'MTN_PLAN',
  glo: 'GLO_PLAN',
  airtel: 'AIRTEL_PLAN',
  '9mobile': '9MOBILE_PLAN',
};

const networksInOrder: readonly Network[] = ['mtn', 'glo', 'airtel', '9mobile'];

/**
 * Requery by reference, and the listing of a period's orders, read at most this many pages of an
 * order list (20 orders each), newest first: a backstop against a list that never ends. A requery
 * normally stops sooner, at the orders created before the purchase was sent (readPastSend); a
 * listing at the first page wholly before its period. The list holds only our own orders of one
 * kind, so 250 pages is hours of a busy day; 10 pages left a purchase that never reached the vendor
 * unknown for ever once 200 newer orders came after it.
 */
export const listPagesMax = 250;

/**
 * How far the vendor's clock (create_date) may be behind ours (sentAt) before an order it created
 * "earlier" than our send is taken as really earlier. Generous: reading a few more pages is cheap,
 * and a wrong not_found refunds a purchase that may have been delivered.
 */
export const listClockSkewSeconds = 10 * 60;

/** A create_date we can compare: ISO 8601 with its offset (a naive one is in an unknown zone). */
const zonedTimestamp = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;
/**
 * Airtime is sold in whole naira between these bounds by every vendor of this family (its `amount`
 * is an integer). Exposed as the provider's `airtimeAmounts`, so a purchase is refused before its
 * debit; checked again here before anything is sent.
 */
const dataVendorAirtimeAmounts: AmountRule = {
  amountKoboMin: 50_00n,
  amountKoboMax: 50_000_00n,
  amountKoboStep: 100n,
};

const localPhonePattern = /^0\d{10}$/;
const planIdPattern = /^[1-9]\d{0,9}$/;

/** A naira amount as these vendors write it: "560.0", "1,000.50", "₦560", or a JSON number. */
const nairaText = z.union([z.string(), z.number()]).transform((value, ctx) => {
  const kobo = parseNaira(value);
  if (kobo === null) {
    ctx.addIssue({ code: 'custom', message: 'not an exact naira amount' });
    return z.NEVER;
  }
  return kobo;
});

const vendorId = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]).transform(String);

/** An order, data or airtime: only the fields we read. */
const orderSchema = z.object({
  id: vendorId.nullish(),
  ident: z.string().nullish(),
  Status: z.string(),
  api_response: z.string().nullish(),
  mobile_number: z.string().nullish(),
  plan_amount: z.unknown().optional(),
  paid_amount: z.unknown().optional(),
});
type Order = z.output<typeof orderSchema>;

const orderListSchema = z.union([
  z.array(z.unknown()),
  z.object({
    count: z.number().int().nonnegative().nullish(),
    next: z.string().nullish(),
    previous: z.string().nullish(),
    results: z.array(z.unknown()),
  }),
]);

const planSchema = z.object({
  id: vendorId,
  network: z.number().int().nullish(),
  plan_type: z.string().trim().min(1),
  plan_network: z.string().nullish(),
  month_validate: z.string().nullish(),
  plan: z.string().trim().min(1),
  plan_amount: nairaText,
});

/** A network's plans: `{ALL: [...]}` in most of these scripts, a bare array in some. */
const networkPlansSchema = z.union([z.array(z.unknown()), z.object({ ALL: z.array(z.unknown()) })]);

const accountSchema = z.object({
  user: z.object({ wallet_balance: nairaText }),
  Dataplans: z.record(z.string(), z.unknown()).nullish(),
});

/** A DRF error body: every value a message or a list of messages. */
const refusalSchema = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .refine((body) => Object.keys(body).length > 0);

type Answer =
  | { kind: 'ok'; body: unknown }
  /** A 4xx with the vendor's refusal body. */
  | { kind: 'refused'; httpStatus: number; message: string; aboutIdent: boolean }
  /** A 404 with DRF's `{"detail": "Not found."}`. */
  | { kind: 'not_found' }
  | { kind: 'indefinite'; reason: string };

type Call = { what: string; method: 'GET' | 'POST'; path: string; body?: Record<string, unknown> };

type Kind = { path: '/api/data/' | '/api/topup/'; label: string };
const dataKind: Kind = { path: '/api/data/', label: 'data' };
const topupKind: Kind = { path: '/api/topup/', label: 'airtime' };

/** What every call to the vendor needs, made once by createDataVendorClient. */
type DataVendorConnection = VtuConnection & {
  networkIds: Record<Network, number>;
};

export function createDataVendorClient(options: DataVendorClientOptions): VtuProvider {
  const provider = options.name;
  const connection: DataVendorConnection = {
    ...vtuConnection(options, { authorization: `Token ${options.token}` }),
    networkIds: { ...defaultDataVendorNetworkIds, ...options.networkIds },
  };
  return {
    name: provider,
    services: new Set<VtuService>(['data', 'airtime']),
    airtimeAmounts: dataVendorAirtimeAmounts,
    ...catalogueCallsNotOffered(provider),
    networks: (service) => listNetworks(connection, service),
    dataPlans: (network) => listDataPlans(connection, network),
    purchase: (request) => purchase(connection, request),
    requery: (request) => requery(connection, request),
    listOrders: (request) => listOrders(connection, request),
    balance: async () => (await account(connection, 'balance')).user.wallet_balance,
  };
}

/** One call; only a GET is sent twice (see the header). */
async function send(connection: DataVendorConnection, call: Call): Promise<Answer> {
  const reply = await exchangeJson(connection.endpoint, {
    operation: call.what,
    method: call.method,
    path: call.path,
    ...(call.body !== undefined ? { body: { json: call.body } } : {}),
    retry: call.method === 'GET',
  });
  if (reply.kind === 'no_answer') return indefinite(`${call.what} ${reply.reason}`);
  const { status, body } = reply;
  if (status >= 200 && status < 300) return { kind: 'ok', body };
  if (status === 404 && isNotFoundBody(body)) return { kind: 'not_found' };
  // A failed order may come back with a 4xx; any other Status on a 4xx contradicts itself.
  const order = orderSchema.safeParse(body);
  if (order.success && order.data.Status.trim().toLowerCase() === 'failed') return { kind: 'ok', body };
  const refused = refusalSchema.safeParse(body);
  if ((status === 400 || status === 401 || status === 403) && refused.success) {
    return {
      kind: 'refused',
      httpStatus: status,
      message: refusalMessage(refused.data),
      aboutIdent: isAboutIdent(refused.data),
    };
  }
  // Any other 4xx (no DRF body, or 404/405 from a wrong base URL or a proxy): we cannot tell
  // whether the vendor saw the request.
  return indefinite(`${call.what} ${strangerAnswer(status, "the vendor's error body")}`);
}

/** The outcome an order describes, for a purchase or a requery of `reference`. */
function outcomeOf(
  connection: DataVendorConnection,
  what: string,
  reference: string,
  body: unknown,
  kind: Kind,
): PurchaseOutcome {
  const { provider } = connection;
  const parsed = orderSchema.safeParse(body);
  if (!parsed.success) {
    return { status: 'unknown', reason: `${provider}: ${what} answered with an unexpected body` };
  }
  const order = parsed.data;
  if (order.ident != null && order.ident !== '' && order.ident !== reference) {
    return {
      status: 'unknown',
      reason: `${provider}: ${what} answered about another order (${order.ident})`,
    };
  }
  const providerReference = order.id ?? null;
  const status = order.Status.trim().toLowerCase();
  switch (status) {
    case 'successful':
    case 'success': {
      const charged = chargedKobo(order, kind);
      return {
        status: 'success',
        providerReference,
        ...(charged !== null ? { chargedKobo: charged } : {}),
      };
    }
    case 'pending':
    case 'processing':
      return { status: 'pending', providerReference };
    case 'failed':
      return {
        status: 'failed',
        reason: `${provider}: ${kind.label} order failed${order.api_response ? `: ${clipMessage(order.api_response)}` : ''}`,
      };
    default:
      return {
        status: 'unknown',
        reason: `${provider}: ${what} answered with Status "${clipMessage(order.Status)}"`,
      };
  }
}

function purchaseAnswer(
  connection: DataVendorConnection,
  what: string,
  reference: string,
  answer: Answer,
  kind: Kind,
): PurchaseOutcome {
  const { provider } = connection;
  switch (answer.kind) {
    case 'ok':
      return outcomeOf(connection, what, reference, answer.body, kind);
    case 'refused':
      // A refusal about the reference itself says an order with it may exist: find out, never refund.
      if (answer.aboutIdent) {
        return {
          status: 'unknown',
          reason: `${provider}: ${what} refused our reference: ${answer.message}`,
        };
      }
      return {
        status: 'failed',
        reason: `${provider}: ${what} refused (${answer.httpStatus}): ${answer.message}`,
      };
    case 'not_found':
      return { status: 'unknown', reason: `${provider}: ${what} answered 404 (is the base URL right?)` };
    case 'indefinite':
      return { status: 'unknown', reason: `${provider}: ${answer.reason}` };
  }
}

async function purchase(
  connection: DataVendorConnection,
  request: PurchaseRequest,
): Promise<PurchaseOutcome> {
  if (request.service !== 'data' && request.service !== 'airtime') {
    return notOffered(connection.provider, request.service);
  }
  // Refused here, before anything is sent: nothing can have been delivered, so failed is exact.
  if (request.reference.trim() === '') return localRefusal(connection, 'the reference is empty');
  if (!localPhonePattern.test(request.phone)) {
    return localRefusal(connection, `${request.phone} is not an 11-digit local number`);
  }
  const network = connection.networkIds[request.network];
  if (network === undefined) return localRefusal(connection, `unknown network ${String(request.network)}`);
  return request.service === 'data'
    ? purchaseData(connection, request, network)
    : purchaseAirtime(connection, request, network);
}

async function purchaseData(
  connection: DataVendorConnection,
  request: Extract<PurchaseRequest, { service: 'data' }>,
  network: number,
): Promise<PurchaseOutcome> {
  if (!planIdPattern.test(request.planId)) {
    return localRefusal(connection, `${request.planId} is not one of its plan ids`);
  }
  return placeOrder(connection, dataKind, request.reference, {
    network,
    mobile_number: request.phone,
    plan: Number(request.planId),
    Ported_number: true,
  });
}

async function purchaseAirtime(
  connection: DataVendorConnection,
  request: Extract<PurchaseRequest, { service: 'airtime' }>,
  network: number,
): Promise<PurchaseOutcome> {
  const kobo = request.amountKobo;
  if (amountBreach(dataVendorAirtimeAmounts, kobo) !== null) {
    const { amountKoboMin, amountKoboMax } = dataVendorAirtimeAmounts;
    return localRefusal(
      connection,
      `airtime of ${kobo} kobo is not whole naira between ₦${amountKoboMin / 100n} and ₦${amountKoboMax / 100n}`,
    );
  }
  return placeOrder(connection, topupKind, request.reference, {
    network,
    amount: Number(kobo / 100n),
    mobile_number: request.phone,
    Ported_number: true,
    airtime_type: 'VTU',
  });
}

/** Places an order of the kind, our reference as its `ident`, and reads its outcome; never repeated (see the header). */
async function placeOrder(
  connection: DataVendorConnection,
  kind: Kind,
  reference: string,
  order: Record<string, unknown>,
): Promise<PurchaseOutcome> {
  const what = `${kind.label} purchase`;
  const body = { ...order, ident: reference };
  const answer = await send(connection, { what, method: 'POST', path: kind.path, body });
  return purchaseAnswer(connection, what, reference, answer, kind);
}

function localRefusal(connection: DataVendorConnection, why: string): PurchaseOutcome {
  return { status: 'failed', reason: `${connection.provider}: refused locally: ${why}` };
}

async function requery(connection: DataVendorConnection, request: RequeryRequest): Promise<RequeryOutcome> {
  if (request.service !== 'data' && request.service !== 'airtime') {
    return notOffered(connection.provider, `requery for ${request.service}`);
  }
  const kind = request.service === 'data' ? dataKind : topupKind;
  if (request.providerReference !== null) {
    return requeryById(connection, request.reference, request.providerReference, kind);
  }
  if (request.reference.trim() === '') {
    return { status: 'unknown', reason: `${connection.provider}: empty reference` };
  }
  return requeryByIdent(connection, request.reference, kind, request.sentAt);
}

async function requeryById(
  connection: DataVendorConnection,
  reference: string,
  id: string,
  kind: Kind,
): Promise<RequeryOutcome> {
  const { provider } = connection;
  const what = `${kind.label} requery`;
  if (!/^\d+$/.test(id)) {
    return { status: 'unknown', reason: `${provider}: ${id} is not one of its order ids` };
  }
  const answer = await send(connection, { what, method: 'GET', path: `${kind.path}${id}` });
  // The vendor gave us this id, so "not found" is an anomaly to look into, never a reason to refund.
  if (answer.kind === 'not_found') {
    return { status: 'unknown', reason: `${provider}: ${what} says its own order ${id} does not exist` };
  }
  if (answer.kind === 'refused') {
    return {
      status: 'unknown',
      reason: `${provider}: ${what} refused (${answer.httpStatus}): ${answer.message}`,
    };
  }
  return purchaseAnswer(connection, what, reference, answer, kind);
}

async function requeryByIdent(
  connection: DataVendorConnection,
  reference: string,
  kind: Kind,
  sentAt: Date | undefined,
): Promise<RequeryOutcome> {
  const { provider } = connection;
  const what = `${kind.label} order list`;
  let query = '';
  for (let page = 1; page <= listPagesMax; page++) {
    const read = await readListPage(connection, kind, query);
    if (read.kind === 'unreadable') return { status: 'unknown', reason: `${provider}: ${read.reason}` };
    const { orders, next } = read;
    const found = orders.find((order) => isRecord(order) && order.ident === reference);
    if (found !== undefined) return outcomeOf(connection, what, reference, found, kind);
    if (next === null || readPastSend(orders, sentAt)) return { status: 'not_found' };
    // Only the query of `next` is used: the vendor builds it from the Host header it saw, and our
    // token goes to no address but the configured one.
    const nextQuery = queryOf(next);
    if (nextQuery === null || nextQuery === query) {
      return { status: 'unknown', reason: `${provider}: ${what} gave a next page we cannot follow` };
    }
    query = nextQuery;
  }
  return {
    status: 'unknown',
    reason: `${provider}: ${reference} is not in the newest ${listPagesMax} pages of the ${what}`,
  };
}

/** A page of an order list; `next` is the vendor's link to the next page, null on the last. */
type ListPage =
  | { kind: 'page'; orders: unknown[]; next: string | null }
  | { kind: 'unreadable'; reason: string };

/** One page of an order list, `query` its query string ('' for the first). */
async function readListPage(connection: DataVendorConnection, kind: Kind, query: string): Promise<ListPage> {
  const what = `${kind.label} order list`;
  const answer = await send(connection, { what, method: 'GET', path: `${kind.path}${query}` });
  if (answer.kind !== 'ok') {
    const reason = answer.kind === 'indefinite' ? answer.reason : `${what} answered ${answer.kind}`;
    return { kind: 'unreadable', reason };
  }
  const list = orderListSchema.safeParse(answer.body);
  if (!list.success) return { kind: 'unreadable', reason: `${what} answered with an unexpected body` };
  if (Array.isArray(list.data)) return { kind: 'page', orders: list.data, next: null };
  return { kind: 'page', orders: list.data.results, next: list.data.next ?? null };
}

/**
 * Every order of both lists created in [from, to] (VtuProvider.listOrders). Each list is read newest
 * first until a whole page is older than `from`; any page, or any order, that cannot be read throws,
 * because a short list taken for the whole one would hide the orders a reconciliation looks for.
 */
async function listOrders(
  connection: DataVendorConnection,
  request: ProviderOrderListRequest,
): Promise<ProviderOrder[]> {
  const { from, to } = request;
  assert.ok(from.getTime() <= to.getTime(), `the window ends (${to.toISOString()}) before it starts`);
  const data = await listOrdersOf(connection, dataKind, from, to);
  const airtime = await listOrdersOf(connection, topupKind, from, to);
  return [...data, ...airtime];
}

async function listOrdersOf(
  connection: DataVendorConnection,
  kind: Kind,
  from: Date,
  to: Date,
): Promise<ProviderOrder[]> {
  const { provider } = connection;
  const what = `${kind.label} order list`;
  // By the vendor's id: an order placed while we read pushes the older ones a place down, so the
  // next page may repeat the last one of this page. Nothing is skipped that way, only seen twice.
  const inWindow = new Map<string, ProviderOrder>();
  let query = '';
  for (let page = 1; page <= listPagesMax; page++) {
    const read = await readListPage(connection, kind, query);
    if (read.kind === 'unreadable') throw new VtuProviderError(provider, read.reason);
    const orders = read.orders.map((item) => listedOrder(connection, kind, item));
    for (const order of orders) {
      if (order.createdAt >= from && order.createdAt <= to) inWindow.set(order.providerReference, order);
    }
    // Newest first: once a whole page is older than the window, every later page is older still.
    const pastWindow = orders.length > 0 && orders.every((order) => order.createdAt < from);
    if (read.next === null || pastWindow) return [...inWindow.values()];
    // Only the query of `next` is used, as in requeryByIdent: our token goes to the configured address.
    const nextQuery = queryOf(read.next);
    if (nextQuery === null || nextQuery === query) {
      throw new VtuProviderError(provider, `${what} gave a next page we cannot follow`);
    }
    query = nextQuery;
  }
  throw new VtuProviderError(
    provider,
    `${what} still had orders newer than ${from.toISOString()} after ${listPagesMax} pages`,
  );
}

/** An item of an order list as a ProviderOrder; throws when it lacks what a reconciliation needs. */
function listedOrder(connection: DataVendorConnection, kind: Kind, item: unknown): ProviderOrder {
  const { provider } = connection;
  const what = `${kind.label} order list`;
  const parsed = orderSchema.safeParse(item);
  if (!parsed.success) {
    throw new VtuProviderError(
      provider,
      `${what} holds an order we cannot read (at ${issuePaths(parsed.error)})`,
    );
  }
  const order = parsed.data;
  if (order.id == null) throw new VtuProviderError(provider, `${what} holds an order without an id`);
  const createdAt = createdAtOf(item);
  if (createdAt === null) {
    throw new VtuProviderError(
      provider,
      `${what}: order ${order.id} has no create_date with a time zone we can read`,
    );
  }
  const reference = order.ident != null && order.ident !== '' ? order.ident : null;
  const outcome = outcomeOf(connection, what, reference ?? '', item, kind);
  return {
    reference,
    providerReference: order.id,
    service: kind === dataKind ? 'data' : 'airtime',
    outcome,
    chargedKobo: outcome.status === 'failed' ? 0n : chargedKobo(order, kind),
    recipient: order.mobile_number ?? null,
    createdAt,
  };
}

/** The account (GET /api/user/): the wallet balance and the plan catalogue. */
async function account(
  connection: DataVendorConnection,
  what: string,
): Promise<z.output<typeof accountSchema>> {
  const { provider } = connection;
  const answer = await send(connection, { what, method: 'GET', path: '/api/user/' });
  if (answer.kind === 'indefinite') throw new VtuProviderError(provider, answer.reason);
  if (answer.kind === 'refused') {
    throw new VtuProviderError(provider, `${what} refused (${answer.httpStatus}): ${answer.message}`);
  }
  if (answer.kind === 'not_found') {
    throw new VtuProviderError(provider, `${what} answered 404 (is the base URL right?)`);
  }
  const parsed = accountSchema.safeParse(answer.body);
  if (!parsed.success) {
    throw new VtuProviderError(
      provider,
      `${what} answered with an unexpected body (at ${issuePaths(parsed.error)})`,
    );
  }
  return parsed.data;
}

async function listNetworks(
  connection: DataVendorConnection,
  service: 'airtime' | 'data',
): Promise<NetworkItem[]> {
  if (service === 'airtime') return networksInOrder.map((id) => ({ id, name: networkNames[id] }));
  if (service !== 'data') return notOffered(connection.provider, `networks for ${String(service)}`);
  const { Dataplans } = await account(connection, 'catalogue');
  return networksInOrder
    .filter((network) => plansOf(connection, network, Dataplans ?? {}).length > 0)
    .map((id) => ({ id, name: networkNames[id] }));
}

async function listDataPlans(connection: DataVendorConnection, network: Network): Promise<DataPlanItem[]> {
  if (!(network in planKeys)) {
    throw new VtuProviderError(connection.provider, `unknown network ${String(network)}`);
  }
  const { Dataplans } = await account(connection, 'catalogue');
  return plansOf(connection, network, Dataplans ?? {});
}

/** A network's plans out of the account's `Dataplans`. */
function plansOf(
  connection: DataVendorConnection,
  network: Network,
  dataplans: Record<string, unknown>,
): DataPlanItem[] {
  const { provider, networkIds } = connection;
  const raw = dataplans[planKeys[network]];
  if (raw === undefined || raw === null) return [];
  const container = networkPlansSchema.safeParse(raw);
  if (!container.success) {
    throw new VtuProviderError(provider, `the catalogue's ${planKeys[network]} is not a list of plans`);
  }
  const items = Array.isArray(container.data) ? container.data : container.data.ALL;
  const plans: DataPlanItem[] = [];
  for (const item of items) {
    // One unreadable plan (a price we cannot read exactly, say) is left out rather than guessed at;
    // the rest of the catalogue stays usable.
    const plan = planSchema.safeParse(item);
    if (!plan.success) continue;
    const { data } = plan;
    if (data.network != null && data.network !== networkIds[network]) {
      throw new VtuProviderError(
        provider,
        `the catalogue lists ${planKeys[network]} under network id ${data.network}, but ${network} is configured as ${networkIds[network]}: check the vendor's network ids`,
      );
    }
    const validity = data.month_validate?.trim() || null;
    // Some of these scripts mark a withdrawn plan in its validity text rather than removing it.
    if (validity !== null && /unavailable/i.test(validity)) continue;
    if (data.plan_amount <= 0n) continue;
    plans.push({
      planId: data.id,
      network,
      planType: planType(data.plan_type),
      name: data.plan,
      validity,
      wholesaleKobo: data.plan_amount,
    });
  }
  return plans;
}

/** What the vendor charged, when the order says so exactly; an unreadable amount is left out. */
function chargedKobo(order: Order, kind: Kind): bigint | null {
  const raw = kind === topupKind ? order.paid_amount : order.plan_amount;
  if (typeof raw !== 'string' && typeof raw !== 'number') return null;
  return parseNaira(raw);
}

/**
 * Kobo from a naira amount as these vendors write it, exactly, or null. Strings are read digit by
 * digit, never through a float; a third decimal is accepted only when it adds nothing ("560.000").
 */
export function parseNaira(value: string | number): bigint | null {
  if (typeof value === 'number') return isNairaAmount(value) ? nairaToKobo(value) : null;
  const text = value
    .trim()
    .replace(/^(?:₦|NGN|N)\s*/i, '')
    .replace(/,(?=\d{3}(?:\D|$))/g, '');
  const match = /^(\d{1,15})(?:\.(\d+))?$/.exec(text);
  if (match === null) return null;
  const fraction = match[2] ?? '';
  if (/[^0]/.test(fraction.slice(2))) return null;
  return BigInt(match[1] ?? '0') * 100n + BigInt(fraction.slice(0, 2).padEnd(2, '0'));
}

/** "CORPORATE GIFTING" is CG in our catalogue; every other type as the vendor wrote it, upper case. */
function planType(vendorType: string): string {
  const upper = vendorType.trim().toUpperCase().replace(/\s+/g, ' ');
  return upper.replace(/^CORPORATE GIFTING\s*/, 'CG');
}

function isNotFoundBody(body: unknown): boolean {
  return isRecord(body) && typeof body.detail === 'string' && /not found/i.test(body.detail);
}

function isAboutIdent(body: Record<string, string | string[]>): boolean {
  if ('ident' in body) return true;
  const messages = Object.values(body).flat();
  return messages.some((message) =>
    /\bident\b|duplicate|already (?:been )?used|already exists/i.test(message),
  );
}

function refusalMessage(body: Record<string, string | string[]>): string {
  const parts = Object.entries(body).map(([key, value]) => {
    const text = Array.isArray(value) ? value.join(' ') : value;
    return key === 'error' || key === 'detail' || key === 'non_field_errors' ? text : `${key}: ${text}`;
  });
  return clipMessage(parts.join('; '));
}

function queryOf(next: string): string | null {
  try {
    const search = new URL(next, 'http://vendor.invalid').search;
    return search === '' ? null : search;
  } catch {
    return null;
  }
}

function indefinite(reason: string): Answer {
  return { kind: 'indefinite', reason };
}

/**
 * Whether a page of the list (newest first) holds an order the vendor created before we sent ours,
 * by more than the clock skew we allow: every order after it is older still, so ours is not there.
 * A create_date missing or unreadable proves nothing.
 */
function readPastSend(orders: unknown[], sentAt: Date | undefined): boolean {
  if (sentAt === undefined) return false;
  const before = sentAt.getTime() - listClockSkewSeconds * 1000;
  return orders.some((order) => {
    const created = createdAtOf(order);
    return created !== null && created.getTime() < before;
  });
}

/** When the vendor created an order, or null when its create_date is missing, unreadable or naive. */
function createdAtOf(order: unknown): Date | null {
  if (!isRecord(order) || typeof order.create_date !== 'string') return null;
  if (!zonedTimestamp.test(order.create_date)) return null;
  const created = Date.parse(order.create_date);
  return Number.isFinite(created) ? new Date(created) : null;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
