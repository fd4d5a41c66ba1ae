import { z } from 'zod';
import { koboToNaira, nairaKoboMax } from '../../money.ts';
import { clipMessage, exchangeJson, issuePaths, strangerAnswer } from '../http-exchange.ts';
import { type VtuClientOptions, type VtuConnection, vtuConnection } from './vtu-connection.ts';
import {
  type BettingCompanyItem,
  type CablePlanItem,
  type CableProviderItem,
  type CustomerLookup,
  type CustomerLookupRequest,
  catalogueCallsNotOffered,
  type DataPlanItem,
  type Delivery,
  type DiscoItem,
  type EducationItem,
  type Network,
  type NetworkItem,
  notOffered,
  type PurchaseOutcome,
  type PurchaseRequest,
  type RequeryOutcome,
  type RequeryRequest,
  type VtuProvider,
  VtuProviderError,
  VtuRefusedLocally,
  type VtuService,
} from './vtu-provider.ts';

// The bills provider client, speaking VTpass's REST API (shared/reference/providers.md sections 2,
// 8-11). GET calls carry `api-key` + `public-key`, POST calls `api-key` + `secret-key`. Amounts cross
// the wire as naira; catalogue prices arrive as decimal strings and are read into kobo through their
// digits, never through a float. In the sandbox the same client talks to the simulator under
// /__sandbox/vtu/bills/api.
//
// What a purchase answer means (VTpass's own rule: anything it did not document is "pending"):
// - 000: processed; the outcome is content.transactions.status: delivered → success, failed and
//   reversed → failed, initiated and pending → pending. Any other status, or none, is unknown.
// - 099, 089, 001: accepted and still processing → pending.
// - 014 (request id already exists): VTpass already holds an order under our reference, and this
//   answer says nothing about it, so the outcome is unknown and the caller requeries. Calling it
//   failed would refund a purchase that may well have been delivered.
// - The refusals in `definiteRefusals` (016, 040, 091 and the validation codes): failed.
// - Anything else (083 system error, 044, unknown codes), a timeout, a network error, a 5xx, a 4xx
//   without VTpass's envelope, or a body we cannot read: unknown.
// A requery answers in the same shape, except that 015 means VTpass never received the reference
// (when it never gave us a transaction id), and that only 000 failed/reversed, 016 and 040 speak of
// the order: any other refusal is of the requery call itself, so unknown.
//
// A delivered bill's answer may name the customer (IKEDC customerName, KEDCO CustomerName, at the top
// level or in content.transactions): read loosely, since a name is for the receipt and an odd one
// must never make a delivered order's answer unreadable.
//
// VTpass documents no betting category; betting companies are read from the `betting` category of
// /services and bought like any other biller (billersCode = the customer id).
// References are the caller's (the purchase domain makes them in VTpass's form, src/vtu/purchases.ts):
// a purchase whose reference is not of that form is refused here before anything is sent, and a
// stale one is the provider's to refuse (085).
//
// Retries: a GET (catalogue, balance) changes nothing, so it is repeated once after a network error
// or a 5xx inside the same time budget. A POST (pay, requery, merchant-verify) is never repeated.

export type VtpassClientOptions = VtuClientOptions & {
  apiKey: string;
  publicKey: string;
  secretKey: string;
};

/** A request id: 12 digits of Lagos time (YYYYMMDDHHmm), then our alphanumeric suffix. */
const requestIdSuffixLengthMax = 38;
const requestIdPattern = new RegExp(
  `^(\\d{4})(\\d{2})(\\d{2})(\\d{2})(\\d{2})[A-Za-z0-9]{0,${requestIdSuffixLengthMax}}$`,
);

/** True when s has VTpass's request id form: a real date and time to the minute, then letters and digits. */
export function isVtpassRequestId(s: string): boolean {
  const match = requestIdPattern.exec(s);
  if (match === null) return false;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute));
  // Date.UTC rolls 31 February over into March; a real date reads back unchanged.
  return (
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    hour < 24 &&
    minute < 60
  );
}

/**
 * Naira as VTpass writes them ("1234.56", "1,200", 500) read into kobo through the digits. Null when
 * the text is not a non-negative amount with at most two decimals.
 */
export function vtpassNairaToKobo(naira: string | number): bigint | null {
  const text = typeof naira === 'number' ? (Number.isFinite(naira) ? String(naira) : '') : naira;
  const match = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$/.exec(text.trim());
  if (match === null) return null;
  const whole = match[1]!.replaceAll(',', '');
  return BigInt(whole) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

const networkServiceIds: Record<Network, string> = {
  mtn: 'mtn',
  glo: 'glo',
  airtel: 'airtel',
  '9mobile': 'etisalat',
};
const networkNames: Record<Network, string> = {
  mtn: 'MTN',
  glo: 'Glo',
  airtel: 'Airtel',
  '9mobile': '9mobile',
};
const networks = Object.keys(networkServiceIds) as Network[];
const dataServiceId = (network: Network) => `${networkServiceIds[network]}-data`;

const offered: ReadonlySet<VtuService> = new Set<VtuService>([
  'airtime',
  'data',
  'cable',
  'electricity',
  'betting',
  'education',
]);

/** Codes that say VTpass refused the order and nothing was delivered or charged. */
/** Refusal codes that speak of the order itself, on a requery as on a purchase. */
const orderFailureCodes: ReadonlySet<string> = new Set(['016', '040']);

const definiteRefusals: ReadonlyMap<string, string> = new Map([
  ['010', 'variation code does not exist'],
  ['011', 'invalid arguments'],
  ['012', 'product does not exist'],
  ['013', 'below the minimum amount'],
  ['016', 'transaction failed'],
  ['017', 'above the maximum amount'],
  ['018', 'low wallet balance'],
  ['019', 'likely duplicate transaction'],
  ['021', 'account locked'],
  ['022', 'account suspended'],
  ['023', 'API access not enabled'],
  ['024', 'account inactive'],
  ['025', 'recipient bank invalid'],
  ['026', 'recipient account could not be verified'],
  ['027', 'IP not whitelisted'],
  ['028', 'product not whitelisted on the account'],
  ['030', 'biller not reachable'],
  ['031', 'below the minimum quantity'],
  ['032', 'above the maximum quantity'],
  ['033', 'quantity refused'],
  ['034', 'service suspended'],
  ['035', 'service inactive'],
  ['040', 'transaction reversed'],
  ['085', 'improper request id'],
  ['087', 'invalid credentials'],
  ['091', 'transaction not processed'],
]);
const processingCodes: ReadonlySet<string> = new Set(['099', '089', '001']);

/** VTpass writes codes as strings ("000"); some answers carry numbers, read back to three digits. */
const wireCode = z.union([
  z
    .string()
    .regex(/^\d{1,3}$/)
    .transform((code) => code.padStart(3, '0')),
  z
    .number()
    .int()
    .min(0)
    .max(999)
    .transform((code) => String(code).padStart(3, '0')),
]);
const idText = z.union([z.string(), z.number().int()]).transform((value) => String(value));
const amountText = z.union([z.string(), z.number()]);
const looseText = z.union([z.string(), z.number()]).transform((value) => String(value).trim());

const transactionSchema = z.object({
  status: z.string(),
  transactionId: idText.nullish(),
  total_amount: amountText.nullish(),
  amount: amountText.nullish(),
  product_name: z.string().nullish(),
  // Read loosely (nameIn), as at the top level.
  customerName: z.unknown().optional(),
  CustomerName: z.unknown().optional(),
});
const card = z.object({ Serial: looseText.nullish(), Pin: looseText });

const payAnswer = z.object({
  code: wireCode,
  response_description: z.string().nullish(),
  requestId: z.string().nullish(),
  purchased_code: z.string().nullish(),
  content: z
    .object({ transactions: transactionSchema.nullish(), error: z.unknown().optional() })
    .nullish()
    .catch(null),
  token: looseText.nullish(),
  Token: looseText.nullish(),
  mainToken: looseText.nullish(),
  units: looseText.nullish(),
  Units: looseText.nullish(),
  mainTokenUnits: looseText.nullish(),
  cards: z.array(card).nullish(),
  tokens: z.array(looseText).nullish(),
  customerName: z.unknown().optional(),
  CustomerName: z.unknown().optional(),
});
type PayAnswer = z.output<typeof payAnswer>;

const envelope = z.object({ code: wireCode, response_description: z.string().nullish() });

const servicesAnswer = z.object({
  response_description: wireCode,
  content: z.array(z.object({ serviceID: z.string().min(1), name: z.string().trim().min(1) })),
});

const variation = z.object({
  variation_code: z.string().min(1),
  name: z.string().trim().min(1),
  variation_amount: amountText,
});
const variationsAnswer = z.object({
  response_description: wireCode,
  content: z.object({
    serviceID: z.string().nullish(),
    variations: z.array(variation).nullish(),
    varations: z.array(variation).nullish(),
  }),
});

const verifyAnswer = z.object({
  code: wireCode,
  response_description: z.string().nullish(),
  content: z.record(z.string(), z.unknown()).nullish(),
});

const balanceAnswer = z.object({
  code: z.unknown(),
  response_description: z.string().nullish(),
  contents: z.object({ balance: amountText }).nullish(),
  content: z.object({ balance: amountText }).nullish(),
});

/** What every call to VTpass needs, made once by createVtpassClient. */
type VtpassConnection = VtuConnection & {
  publicKey: string;
  secretKey: string;
};

type Call = { what: string; method: 'GET' | 'POST'; path: string; body?: Record<string, unknown> };
/** What became of a call: a readable JSON body, or no usable answer (and why). */
type Reply = { kind: 'body'; body: unknown } | { kind: 'none'; reason: string };

export function createVtpassClient(options: VtpassClientOptions): VtuProvider {
  const connection: VtpassConnection = {
    ...vtuConnection(options, { 'api-key': options.apiKey }),
    publicKey: options.publicKey,
    secretKey: options.secretKey,
  };
  const provider = options.name;
  return {
    name: provider,
    services: offered,
    // VTpass takes airtime to the kobo and answers its own limits per service (013, 017: ₦50-₦50,000,
    // the service's own bounds): nothing of it for the purchase to check before the debit.
    airtimeAmounts: null,
    // VTpass sells no social services, and no airtime-to-cash: the bills party's airtime-to-cash
    // client answers that (combined-provider.ts).
    ...catalogueCallsNotOffered(provider),
    networks: (service) => listNetworks(connection, service),
    dataPlans: (network) => listDataPlans(connection, network),
    cableProviders: async () =>
      (await listServices(connection, 'tv-subscription')).map(
        (s): CableProviderItem => ({ id: s.serviceID, name: s.name }),
      ),
    cablePlans: (cableProvider) => listCablePlans(connection, cableProvider),
    discos: async () =>
      (await listServices(connection, 'electricity-bill')).map(
        (s): DiscoItem => ({ id: s.serviceID, name: s.name }),
      ),
    bettingCompanies: async () =>
      (await listServices(connection, 'betting')).map(
        (s): BettingCompanyItem => ({ id: s.serviceID, name: s.name }),
      ),
    educationItems: () => listEducationItems(connection),
    verifyCustomer: (request) => verifyCustomer(connection, request),
    purchase: (request) => purchase(connection, request),
    requery: (request) => requery(connection, request),
    balance: () => balance(connection),
  };
}

/** One call: GET carries `public-key`, POST `secret-key`; only a GET is sent twice (see the header). */
async function send(connection: VtpassConnection, call: Call): Promise<Reply> {
  const reply = await exchangeJson(connection.endpoint, {
    // `services (airtime)`: the catalogue's service id is dropped, for the label's set stays small.
    operation: call.what.replace(/ \(.*\)$/, ''),
    method: call.method,
    path: call.path,
    headers:
      call.method === 'GET' ? { 'public-key': connection.publicKey } : { 'secret-key': connection.secretKey },
    ...(call.body !== undefined ? { body: { json: call.body } } : {}),
    retry: call.method === 'GET',
  });
  if (reply.kind === 'no_answer') return { kind: 'none', reason: reply.reason };
  const { status, body } = reply;
  if (status >= 200 && status < 300) return { kind: 'body', body };
  // VTpass answers its refusals with a code in the body; a non-2xx without one comes from something
  // in between (a proxy, a wrong base URL), which tells nothing about the order.
  if (envelope.safeParse(body).success) return { kind: 'body', body };
  return { kind: 'none', reason: strangerAnswer(status, "VTpass's envelope") };
}

function vtpassError(connection: VtpassConnection, what: string, happened: string): VtuProviderError {
  return new VtuProviderError(connection.provider, `${what} ${happened}`);
}

/** Nothing was sent: the request cannot go on the wire (vtu-provider.ts VtuRefusedLocally). */
function refusedLocally(connection: VtpassConnection, what: string, why: string): VtuRefusedLocally {
  return new VtuRefusedLocally(connection.provider, `${what} refused locally: ${why}`);
}

function requireOffered(connection: VtpassConnection, service: VtuService): void {
  if (!offered.has(service)) notOffered(connection.provider, service);
}

/** A call whose failure is an error (catalogue, verify, balance), its body read by the schema. */
async function fetchChecked<T>(connection: VtpassConnection, call: Call, schema: z.ZodType<T>): Promise<T> {
  const reply = await send(connection, call);
  if (reply.kind === 'none') throw vtpassError(connection, call.what, reply.reason);
  const result = schema.safeParse(reply.body);
  if (!result.success) {
    const refused = envelope.safeParse(reply.body);
    if (refused.success) {
      throw vtpassError(connection, call.what, `was refused: ${describeCode(refused.data)}`);
    }
    throw vtpassError(
      connection,
      call.what,
      `answered with an unexpected body (at ${issuePaths(result.error)})`,
    );
  }
  return result.data;
}

async function listServices(
  connection: VtpassConnection,
  identifier: string,
): Promise<{ serviceID: string; name: string }[]> {
  const what = `services (${identifier})`;
  const answer = await fetchChecked(
    connection,
    { what, method: 'GET', path: `/services?${new URLSearchParams({ identifier })}` },
    servicesAnswer,
  );
  if (answer.response_description !== '000') {
    throw vtpassError(connection, what, `answered code ${answer.response_description}`);
  }
  return answer.content.map((service) => ({ serviceID: service.serviceID, name: service.name }));
}

async function listVariations(
  connection: VtpassConnection,
  serviceID: string,
): Promise<{ code: string; name: string; kobo: bigint }[]> {
  const what = `service variations (${serviceID})`;
  const answer = await fetchChecked(
    connection,
    { what, method: 'GET', path: `/service-variations?${new URLSearchParams({ serviceID })}` },
    variationsAnswer,
  );
  if (answer.response_description !== '000') {
    throw vtpassError(connection, what, `answered code ${answer.response_description}`);
  }
  // VTpass spells the list both ways, depending on the service.
  const list = answer.content.variations ?? answer.content.varations;
  if (list === undefined || list === null) {
    throw vtpassError(connection, what, 'answered without a list of variations');
  }
  return list.map((item) => {
    const kobo = vtpassNairaToKobo(item.variation_amount);
    if (kobo === null) {
      throw vtpassError(
        connection,
        what,
        `priced ${item.variation_code} unreadably: ${String(item.variation_amount)}`,
      );
    }
    return { code: item.variation_code, name: item.name, kobo };
  });
}

async function listNetworks(
  connection: VtpassConnection,
  service: 'airtime' | 'data',
): Promise<NetworkItem[]> {
  requireOffered(connection, service);
  const wanted =
    service === 'airtime'
      ? networkServiceIds
      : Object.fromEntries(networks.map((n) => [n, dataServiceId(n)]));
  const available = new Set((await listServices(connection, service)).map((s) => s.serviceID));
  return networks
    .filter((network) => available.has(wanted[network]!))
    .map((network): NetworkItem => ({ id: network, name: networkNames[network] }));
}

async function listDataPlans(connection: VtpassConnection, network: Network): Promise<DataPlanItem[]> {
  if (!(network in networkServiceIds)) {
    throw vtpassError(connection, 'data plans', `know no network ${String(network)}`);
  }
  return (await listVariations(connection, dataServiceId(network))).map(
    (item): DataPlanItem => ({
      planId: item.code,
      network,
      // VTpass sells the networks' own bundles; its separate SME products are not listed here.
      planType: /\bSME\b/i.test(item.name) ? 'SME' : 'GIFTING',
      name: item.name,
      validity: validityOf(item.name),
      wholesaleKobo: item.kobo,
    }),
  );
}

async function listCablePlans(connection: VtpassConnection, cableProvider: string): Promise<CablePlanItem[]> {
  return (await listVariations(connection, cableProvider)).map(
    (item): CablePlanItem => ({
      planId: item.code,
      provider: cableProvider,
      name: item.name,
      wholesaleKobo: item.kobo,
    }),
  );
}

async function listEducationItems(connection: VtpassConnection): Promise<EducationItem[]> {
  const exams = await listServices(connection, 'education');
  const lists = await Promise.all(exams.map((exam) => listVariations(connection, exam.serviceID)));
  return exams.flatMap((exam, index) =>
    lists[index]!.map(
      (item): EducationItem => ({
        exam: exam.serviceID,
        variation: item.code,
        name: item.name,
        wholesaleKobo: item.kobo,
      }),
    ),
  );
}

async function verifyCustomer(
  connection: VtpassConnection,
  request: CustomerLookupRequest,
): Promise<CustomerLookup> {
  requireOffered(connection, request.service);
  const what = 'merchant verify';
  const body =
    request.service === 'cable'
      ? { billersCode: request.iuc, serviceID: request.provider }
      : request.service === 'electricity'
        ? { billersCode: request.meter, serviceID: request.disco, type: request.meterType }
        : { billersCode: request.customerId, serviceID: request.company };
  if (body.billersCode.trim() === '') {
    throw vtpassError(connection, what, 'refused locally: the number is empty');
  }
  const answer = await fetchChecked(
    connection,
    { what, method: 'POST', path: '/merchant-verify', body },
    verifyAnswer,
  );
  const content = answer.content ?? {};
  const wrong = content.WrongBillersCode === true || content.WrongBillersCode === 'true';
  if (content.error !== undefined || wrong) {
    const reason = typeof content.error === 'string' ? content.error : 'the number was not found';
    return { found: false, reason: clipMessage(reason) };
  }
  // 011 is VTpass's answer to a number it cannot read at all: the customer is not there.
  if (answer.code === '011') return { found: false, reason: describeCode(answer) };
  if (answer.code !== '000' && answer.code !== '020') {
    throw vtpassError(connection, what, `was refused: ${describeCode(answer)}`);
  }
  const name = content.Customer_Name;
  if (typeof name !== 'string' || name.trim() === '') {
    throw vtpassError(connection, what, 'answered without a customer name');
  }
  const details: Record<string, string> = {};
  for (const [key, value] of Object.entries(content)) {
    if (key === 'Customer_Name' || key === 'WrongBillersCode') continue;
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
      details[key] = String(value);
    }
  }
  return { found: true, name: name.trim(), details };
}

async function purchase(connection: VtpassConnection, request: PurchaseRequest): Promise<PurchaseOutcome> {
  requireOffered(connection, request.service);
  if (!isVtpassRequestId(request.reference)) {
    throw refusedLocally(connection, 'purchase', `${request.reference} is not a VTpass request id`);
  }
  const body = purchaseBody(connection, request);
  const reply = await send(connection, { what: 'purchase', method: 'POST', path: '/pay', body });
  const outcome = outcomeOf(connection, reply, request.service, request.reference);
  // 015 answers a requery; on a purchase it is one more code we cannot place.
  return outcome.status === 'not_found'
    ? { status: 'unknown', reason: `${connection.provider} answered a purchase with 015` }
    : outcome;
}

async function requery(connection: VtpassConnection, request: RequeryRequest): Promise<RequeryOutcome> {
  const { provider } = connection;
  requireOffered(connection, request.service);
  const reply = await send(connection, {
    what: 'requery',
    method: 'POST',
    path: '/requery',
    body: { request_id: request.reference },
  });
  const parsed = reply.kind === 'body' ? envelope.safeParse(reply.body) : null;
  const code = parsed?.success === true ? parsed.data.code : null;
  if (code === '015') {
    // "No such request id" is believable only while VTpass has never named the order to us.
    return request.providerReference === null
      ? { status: 'not_found' }
      : {
          status: 'unknown',
          reason: `${provider} has no record of ${request.reference}, yet named it ${request.providerReference}`,
        };
  }
  const outcome = outcomeOf(connection, reply, request.service, request.reference);
  // A refusal of the requery (credentials, IP whitelist, float, account state, validation) is
  // about this call, not the order, which may well have been delivered: never a refund. Only
  // VTpass's word about the order itself is a failure.
  if (outcome.status === 'failed' && code !== '000' && !orderFailureCodes.has(code ?? '')) {
    return { status: 'unknown', reason: `${provider} refused the requery: ${outcome.reason}` };
  }
  return outcome;
}

async function balance(connection: VtpassConnection): Promise<bigint> {
  const what = 'balance';
  const answer = await fetchChecked(connection, { what, method: 'GET', path: '/balance' }, balanceAnswer);
  const amount = answer.contents?.balance ?? answer.content?.balance;
  if (amount === undefined) {
    const refused = envelope.safeParse(answer);
    throw vtpassError(
      connection,
      what,
      refused.success ? `was refused: ${describeCode(refused.data)}` : 'answered without a balance',
    );
  }
  const kobo = vtpassNairaToKobo(amount);
  if (kobo === null) throw vtpassError(connection, what, `answered an unreadable balance: ${String(amount)}`);
  return kobo;
}

/** The body of /pay for each service VTpass sells. */
function purchaseBody(connection: VtpassConnection, request: PurchaseRequest): Record<string, unknown> {
  const request_id = request.reference;
  const naira = (kobo: bigint) => wireNaira(connection, kobo);
  switch (request.service) {
    case 'airtime':
      return {
        request_id,
        serviceID: networkServiceIds[request.network],
        amount: naira(request.amountKobo),
        phone: request.phone,
      };
    case 'data':
      return {
        request_id,
        serviceID: dataServiceId(request.network),
        billersCode: request.phone,
        variation_code: request.planId,
        phone: request.phone,
      };
    case 'cable':
      return cableBody(request, naira(request.amountKobo));
    case 'electricity':
      return {
        request_id,
        serviceID: request.disco,
        billersCode: request.meter,
        variation_code: request.meterType,
        amount: naira(request.amountKobo),
        phone: request.phone,
      };
    case 'betting':
      return {
        request_id,
        serviceID: request.company,
        billersCode: request.customerId,
        amount: naira(request.amountKobo),
      };
    case 'education':
      if (!Number.isSafeInteger(request.quantity) || request.quantity < 1) {
        throw refusedLocally(
          connection,
          'purchase',
          `quantity ${request.quantity} is not a positive integer`,
        );
      }
      return {
        request_id,
        serviceID: request.exam,
        variation_code: request.variation,
        quantity: request.quantity,
        phone: request.phone,
        ...(request.profileId !== undefined ? { billersCode: request.profileId } : {}),
      };
    case 'airtime_to_cash':
    case 'social':
      return notOffered(connection.provider, request.service);
  }
}

/** Renew pays the amount verify quoted for the current bouquet; change names the new one. */
function cableBody(
  request: Extract<PurchaseRequest, { service: 'cable' }>,
  amount: number,
): Record<string, unknown> {
  const common = {
    request_id: request.reference,
    serviceID: request.provider,
    billersCode: request.iuc,
  };
  return request.subscriptionType === 'renew'
    ? { ...common, amount, phone: request.phone, subscription_type: 'renew' }
    : {
        ...common,
        variation_code: request.planId,
        amount,
        phone: request.phone,
        subscription_type: 'change',
        quantity: 1,
      };
}

function wireNaira(connection: VtpassConnection, kobo: bigint): number {
  if (kobo <= 0n || kobo > nairaKoboMax) {
    throw refusedLocally(
      connection,
      'purchase',
      `${kobo} kobo is not an amount a JSON number carries exactly`,
    );
  }
  return koboToNaira(kobo);
}

/** Reads a pay or requery answer into an outcome; `notFound` only for a requery. */
function outcomeOf(
  connection: VtpassConnection,
  reply: Reply,
  service: VtuService,
  reference: string,
): RequeryOutcome {
  const { provider } = connection;
  if (reply.kind === 'none') return { status: 'unknown', reason: `${provider} ${reply.reason}` };
  const parsed = payAnswer.safeParse(reply.body);
  if (!parsed.success) {
    return {
      status: 'unknown',
      reason: `${provider} answered with an unexpected body (at ${issuePaths(parsed.error)})`,
    };
  }
  const answer = parsed.data;
  const described = describeCode(answer);
  if (answer.requestId !== undefined && answer.requestId !== null && answer.requestId !== reference) {
    return { status: 'unknown', reason: `${provider} answered for a different request id` };
  }
  const transaction = answer.content?.transactions ?? null;
  const providerReference = transaction?.transactionId ?? null;
  if (answer.code === '000') {
    switch (transaction?.status.toLowerCase()) {
      case 'delivered':
        return { status: 'success', ...delivery(answer, service, providerReference) };
      case 'failed':
      case 'reversed':
        return {
          status: 'failed',
          reason: `${provider} ${transaction!.status.toLowerCase()}: ${described}`,
        };
      case 'initiated':
      case 'pending':
        return { status: 'pending', providerReference };
      default:
        return {
          status: 'unknown',
          reason: `${provider} processed the order with status ${transaction?.status ?? '(none)'}`,
        };
    }
  }
  if (processingCodes.has(answer.code)) return { status: 'pending', providerReference };
  if (answer.code === '014') {
    return { status: 'unknown', reason: `${provider} already holds this request id (014): requery it` };
  }
  const refusal = definiteRefusals.get(answer.code);
  if (refusal !== undefined) return { status: 'failed', reason: `${provider} refused: ${described}` };
  return { status: 'unknown', reason: `${provider} answered code ${described}` };
}

/** What a successful order carries for the user, from wherever this DisCo or exam put it. */
function delivery(answer: PayAnswer, service: VtuService, providerReference: string | null): Delivery {
  const result: Delivery = { providerReference };
  const transaction = answer.content?.transactions;
  const charged = transaction?.total_amount ?? transaction?.amount;
  const chargedKobo = charged === undefined || charged === null ? null : vtpassNairaToKobo(charged);
  if (chargedKobo !== null) result.chargedKobo = chargedKobo;
  const purchased = answer.purchased_code?.trim() ?? '';
  if (service === 'electricity') {
    const token =
      nonEmpty(answer.token) ?? nonEmpty(answer.Token) ?? nonEmpty(answer.mainToken) ?? tokenIn(purchased);
    if (token !== null) result.token = token;
    const units = nonEmpty(answer.units) ?? nonEmpty(answer.Units) ?? nonEmpty(answer.mainTokenUnits);
    if (units !== null) result.units = units;
  }
  if (service === 'education') {
    const pins = pinsOf(answer, purchased);
    if (pins.length > 0) result.pins = pins;
  }
  if (service === 'electricity' || service === 'cable' || service === 'betting') {
    // IKEDC writes customerName, KEDCO CustomerName (providers.md section 9), at the top level or
    // inside content.transactions; other DisCos, cable and betting answers do not name the customer.
    const customerName =
      nameIn(answer.customerName) ??
      nameIn(answer.CustomerName) ??
      nameIn(transaction?.customerName) ??
      nameIn(transaction?.CustomerName);
    if (customerName !== null) result.customerName = customerName;
  }
  return result;
}

/** Longer than any person's or company's name: what is, is not a name. */
const customerNameLengthMax = 200;

/** A customer's name as the provider wrote it, its spaces tidied; null for anything that is not one. */
function nameIn(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const name = value.replace(/\s+/g, ' ').trim();
  return name === '' || name.length > customerNameLengthMax ? null : name;
}

function pinsOf(answer: PayAnswer, purchased: string): string[] {
  if (answer.cards !== undefined && answer.cards !== null && answer.cards.length > 0) {
    // A result checker needs the serial as well as the pin, so both stay together.
    return answer.cards.map((c) =>
      nonEmpty(c.Serial) === null ? c.Pin : `Serial: ${c.Serial}, Pin: ${c.Pin}`,
    );
  }
  const tokens = (answer.tokens ?? []).map((t) => t.trim()).filter((t) => t !== '');
  if (tokens.length > 0) return tokens;
  // purchased_code holds one line per pin ("Pin : 3675...", "Serial No:WRN..., pin: 3926...").
  return purchased
    .split(/\|\||\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '')
    .map((line) => /^Pin\s*:\s*(\S+)$/i.exec(line)?.[1] ?? line);
}

/** The main token in a purchased_code such as "Token : 1234-5678-... Bonus Token : ...". */
function tokenIn(purchased: string): string | null {
  const match = /(?<!Bonus\s*)Token\s*:\s*(\d[\d -]*\d)/i.exec(purchased);
  return match === null ? null : match[1]!.trim();
}

function nonEmpty(value: string | null | undefined): string | null {
  return value === undefined || value === null || value.trim() === '' ? null : value.trim();
}

/** The validity VTpass writes at the end of a bundle's name ("MTN N1000 1.5GB - 30 days"). */
function validityOf(name: string): string | null {
  const match = /(\d+\s*(?:hrs?|hours?|days?|weeks?|months?|years?))\s*\)?\s*$/i.exec(name);
  return match === null ? null : match[1]!;
}

function describeCode(answer: { code: string; response_description?: string | null | undefined }): string {
  const description =
    answer.response_description === undefined || answer.response_description === null
      ? undefined
      : clipMessage(answer.response_description);
  return description === undefined || description === '' ? answer.code : `${answer.code} ${description}`;
}
