import { z } from 'zod';
import { clipMessage, exchangeJson, issuePaths, strangerAnswer } from '../http-exchange.ts';
import { type VtuClientOptions, type VtuConnection, vtuConnection } from './vtu-connection.ts';
import {
  catalogueCallsNotOffered,
  notOffered,
  type PurchaseOutcome,
  type PurchaseRequest,
  type RequeryOutcome,
  type RequeryRequest,
  type SocialServiceItem,
  type VtuProvider,
  VtuProviderError,
  type VtuService,
} from './vtu-provider.ts';

// The social provider client, speaking the standard SMM panel API v2 ("Perfect Panel",
// shared/reference/providers.md section 4): one endpoint, `POST <panel>/api/v2`, form-encoded, every
// request carrying `key` and `action`; errors come as `{error: "..."}` with HTTP 200. In the sandbox
// the same client talks to the simulator at /__sandbox/vtu/social/api/v2.
//
// Outcomes of a purchase (`action=add`):
// - `{order}`: the order is placed. A panel never completes an order within the add's answer, so the
//   client asks `status` for that order once, right away (a status query only reads, so it may be
//   retried as every read is), and answers with what that says (the mapping below). When that
//   status query gets no usable answer (a timeout, a network error, a 5xx, an `{error}`, a body we
//   cannot read, a Partial without a readable remains), the outcome is pending with the order id as
//   providerReference: the order WAS placed, so never failed, and the id is kept for the requery
//   (an `unknown` would lose it: without the id no requery can find a panel order). The add and the
//   status query each have the time budget, so a purchase may take twice it.
// - `{error}` with a message that is a known refusal (not enough funds, incorrect request, an
//   invalid service, link or quantity, an active order on the link, an invalid API key): failed. A
//   panel creates the order and hands back its id in one step, so a refusal placed nothing.
//   "Invalid API key" is failed too: the panel did not know who we were, so it cannot have placed an
//   order for us (it is a configuration fault, and the reason says so, for the alert).
// - `{error}` with any other message, a timeout, a network error, a 5xx, a 429 or an answer we cannot
//   read: unknown. The panel may have placed the order.
//
// Status words (`action=status&order=<id>`, the same for the purchase's query and a requery; API.md
// section 14), read without regard to case or surrounding spaces:
// - Completed: success, with the panel's charge as chargedKobo when it is in a currency we convert.
// - Partial: success with `remains`, the units not delivered (the settlement refunds their share).
//   remains must read as a non-negative whole number (a JSON number or a string of digits); any other
//   remains is unknown, for a person to check in the panel: a refund is never guessed.
// - Canceled or Cancelled: failed (the panel refunds a canceled order; so do we).
// - Pending, In progress, Processing and every other word: pending. The field is free-form, and an
//   unexpected word must not refund (or charge) anyone.
// On a requery, "Incorrect order ID" about the id the panel itself gave is unknown (never not_found,
// which refunds: another API key, say, does not know it), and so is any other error or unreadable
// answer. Panels take no client reference, so without the order id (the `add` answer was lost) nothing
// can find the order: requery answers unknown and says so, and the purchase needs a person (the panel's
// order history, by link and time).
//
// Money: rates are per 1,000 units in the panel's currency, as decimal strings ("0.45"). The panel's
// currency is the one its `balance` answer names (the services list does not say); NGN converts at 100
// kobo per naira, any other currency at options.koboPerCurrencyUnit[currency] or not at all (the
// catalogue call throws). Conversions are exact decimal-string arithmetic on bigint and round a
// fraction of a kobo UP for prices and charges, so that we never sell below what the panel takes,
// and DOWN for the balance, so that we never count on a fraction of a kobo we do not have.
//
// Retries: `services`, `status` and `balance` change nothing, so one of them is sent once more after a
// network error or a 5xx, inside the same time budget. `add` is never repeated: it would place a
// second order.

/** The base URL is the panel's one API URL, `https://<panel>/api/v2`. */
export type SmmPanelClientOptions = VtuClientOptions & {
  apiKey: string;
  /** Kobo per unit of each foreign currency a panel may price in (USD: 160_000n at ₦1,600/$). NGN is always 100. */
  koboPerCurrencyUnit?: Record<string, bigint>;
};

const nairaKoboPerUnit = 100n;
/** Decimal digits of a rate or charge that we accept; panels write at most 5 or so. */
const fractionDigitsMax = 12;

/**
 * The `{error}` messages of `add` that are refusals: the order was not placed. Any other message is
 * read as "we do not know" (see the header).
 */
const refusalPatterns: readonly RegExp[] = [
  /not enough funds/i,
  /incorrect request/i,
  /invalid api key/i,
  /incorrect (service|link|quantity)/i,
  /invalid (service|link|quantity)/i,
  /service (is )?(disabled|not (found|available|active))/i,
  /quantity (is )?(less|more|greater) than (min|max)/i,
  /active order with this link/i,
];
const unknownOrderPattern = /incorrect order id|order not found/i;

const panelError = z.object({ error: z.string() });
const orderId = z.union([
  z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  z.string().regex(/^[A-Za-z0-9_-]{1,64}$/),
]);
const addAnswer = z.object({ order: orderId });
/** A decimal the panel wrote as a string ("0.45") or, on some panels, as a JSON number. */
const decimal = z.union([z.string(), z.number()]);
const count = z.union([
  z.number().int().min(0),
  z
    .string()
    .regex(/^\d{1,15}$/)
    .transform(Number),
]);
const statusAnswer = z.object({
  status: z.string(),
  charge: decimal.nullish(),
  remains: z.unknown().optional(),
  currency: z.string().nullish(),
});
type StatusAnswer = z.infer<typeof statusAnswer>;
const serviceItem = z.object({
  service: orderId,
  name: z.string().trim().min(1),
  type: z.string().nullish(),
  category: z.string().trim().min(1),
  rate: decimal,
  min: count,
  max: count,
});
const balanceAnswer = z.object({ balance: decimal, currency: z.string().trim().min(1) });

type Answer = { kind: 'answer'; body: unknown } | { kind: 'indefinite'; reason: string };
/** A status query's answer: the order's status, the panel's `{error}`, or no usable answer. */
type StatusRead =
  | { kind: 'status'; order: StatusAnswer }
  | { kind: 'error'; message: string }
  | { kind: 'indefinite'; reason: string };

/** What every call to the panel needs, made once by createSmmPanelClient. */
type SmmPanelConnection = VtuConnection & {
  /** Travels in each form, not in a header. */
  apiKey: string;
  /** Kobo per unit of each currency the panel may price in, NGN included. */
  koboPerUnit: ReadonlyMap<string, bigint>;
  /**
   * The panel's currency, learnt from its balance answer (a panel does not change it). Held by this
   * client, so by one context: never shared between contexts.
   */
  learnt: { currency: string | null };
};

export function createSmmPanelClient(options: SmmPanelClientOptions): VtuProvider {
  const provider = options.name;
  const connection: SmmPanelConnection = {
    ...vtuConnection(options, {}),
    apiKey: options.apiKey,
    koboPerUnit: koboPerUnitOf(provider, options.koboPerCurrencyUnit ?? {}),
    learnt: { currency: null },
  };
  return {
    name: provider,
    services: new Set<VtuService>(['social']),
    airtimeAmounts: null,
    ...catalogueCallsNotOffered(provider),
    socialServices: () => listSocialServices(connection),
    purchase: (request) => purchase(connection, request),
    requery: (request) => requery(connection, request),
    balance: () => balance(connection),
  };
}

/** The configured conversions, checked, with NGN's 100 kobo per naira. */
function koboPerUnitOf(provider: string, configured: Record<string, bigint>): Map<string, bigint> {
  const koboPerUnit = new Map<string, bigint>(
    Object.entries(configured).map(([currency, kobo]) => [currency.toUpperCase(), kobo]),
  );
  for (const [currency, kobo] of koboPerUnit) {
    if (kobo <= 0n) throw new VtuProviderError(provider, `koboPerCurrencyUnit.${currency} must be positive`);
  }
  if (koboPerUnit.has('NGN') && koboPerUnit.get('NGN') !== nairaKoboPerUnit) {
    throw new VtuProviderError(provider, 'koboPerCurrencyUnit.NGN must be 100 (or absent)');
  }
  koboPerUnit.set('NGN', nairaKoboPerUnit);
  return koboPerUnit;
}

/** One action, form-encoded; every action but `add` only reads, so only `add` is never sent twice. */
async function send(
  connection: SmmPanelConnection,
  action: string,
  params: Record<string, string>,
): Promise<Answer> {
  const reply = await exchangeJson(connection.endpoint, {
    operation: action,
    method: 'POST',
    path: '',
    body: { form: { key: connection.apiKey, action, ...params } },
    // A repeated `add` could place a second order.
    retry: action !== 'add',
  });
  if (reply.kind === 'no_answer') return indefinite(reply.reason);
  const { status, body } = reply;
  if (status >= 200 && status < 300) return { kind: 'answer', body };
  // Some panels send their `{error}` with a 4xx instead of a 200: it is still the panel speaking.
  if (panelError.safeParse(body).success) return { kind: 'answer', body };
  // A 4xx without the panel's `{error}` comes from something in between (a proxy, a wrong URL).
  return indefinite(strangerAnswer(status, "the panel's error shape"));
}

function indefinite(reason: string): Answer {
  return { kind: 'indefinite', reason: `the panel ${reason}` };
}

/** For catalogue and balance calls: the answer's body, or a VtuProviderError. */
async function read<T>(connection: SmmPanelConnection, action: string, schema: z.ZodType<T>): Promise<T> {
  const { provider } = connection;
  const answer = await send(connection, action, {});
  if (answer.kind === 'indefinite') throw new VtuProviderError(provider, `${action}: ${answer.reason}`);
  const refused = panelError.safeParse(answer.body);
  if (refused.success) {
    throw new VtuProviderError(provider, `${action}: the panel refused: ${clipMessage(refused.data.error)}`);
  }
  const result = schema.safeParse(answer.body);
  if (!result.success) throw new VtuProviderError(provider, `${action}: ${unexpected(result.error)}`);
  return result.data;
}

async function readBalance(connection: SmmPanelConnection): Promise<{ amount: string; currency: string }> {
  const answer = await read(connection, 'balance', balanceAnswer);
  const currency = answer.currency.toUpperCase();
  connection.learnt.currency = currency;
  return { amount: String(answer.balance), currency };
}

function factorFor(connection: SmmPanelConnection, currency: string, what: string): bigint {
  const factor = connection.koboPerUnit.get(currency.toUpperCase());
  if (factor === undefined) {
    throw new VtuProviderError(
      connection.provider,
      `${what}: the panel's currency ${currency} is not configured (koboPerCurrencyUnit.${currency.toUpperCase()})`,
    );
  }
  return factor;
}

async function listSocialServices(connection: SmmPanelConnection): Promise<SocialServiceItem[]> {
  const currency = connection.learnt.currency ?? (await readBalance(connection)).currency;
  const factor = factorFor(connection, currency, 'services');
  const list = await read(connection, 'services', z.array(z.unknown()));
  const items: SocialServiceItem[] = [];
  for (const raw of list) {
    // One service the panel describes oddly must not take the others off sale: it is left out.
    const item = serviceItem.safeParse(raw);
    if (!item.success) continue;
    const { data } = item;
    // Only the "Default" type orders with service, link and quantity alone; comments, packages,
    // subscriptions and polls need fields a PurchaseRequest does not carry.
    if (data.type !== undefined && data.type !== null && data.type.trim().toLowerCase() !== 'default')
      continue;
    const rate = toKobo(String(data.rate), factor, 'up');
    if (rate === null || data.min < 1 || data.max < data.min) continue;
    items.push({
      serviceId: String(data.service),
      name: data.name,
      category: data.category,
      ratePer1000Kobo: rate,
      min: data.min,
      max: data.max,
    });
  }
  if (list.length > 0 && items.length === 0) {
    throw new VtuProviderError(
      connection.provider,
      `services: none of the ${list.length} services could be read`,
    );
  }
  return items;
}

async function purchase(connection: SmmPanelConnection, request: PurchaseRequest): Promise<PurchaseOutcome> {
  if (request.service !== 'social') return notOffered(connection.provider, request.service);
  if (request.serviceId.trim() === '') return { status: 'failed', reason: 'refused locally: no service id' };
  if (request.link.trim() === '') return { status: 'failed', reason: 'refused locally: no link' };
  if (!Number.isSafeInteger(request.quantity) || request.quantity < 1) {
    return {
      status: 'failed',
      reason: `refused locally: quantity ${request.quantity} is not a positive integer`,
    };
  }
  const answer = await send(connection, 'add', {
    service: request.serviceId,
    link: request.link,
    quantity: String(request.quantity),
  });
  if (answer.kind === 'indefinite') return { status: 'unknown', reason: answer.reason };
  const refused = panelError.safeParse(answer.body);
  if (refused.success) return addRefusal(clipMessage(refused.data.error));
  const placed = addAnswer.safeParse(answer.body);
  if (!placed.success) return { status: 'unknown', reason: `the panel ${unexpected(placed.error)}` };
  const providerReference = String(placed.data.order);
  // The order is placed: from here on nothing may answer failed or unknown (which loses the id).
  const stillPending = { status: 'pending', providerReference } as const;
  try {
    const read = await readStatus(connection, providerReference);
    if (read.kind !== 'status') return stillPending;
    const outcome = statusOutcome(connection, providerReference, read.order);
    return outcome.status === 'unknown' ? stillPending : outcome;
  } catch {
    return stillPending;
  }
}

/** What the panel's `{error}` to an `add` means (see the header). */
function addRefusal(message: string): PurchaseOutcome {
  if (/invalid api key/i.test(message)) {
    return {
      status: 'failed',
      reason: `the panel refused our API key (check the configuration): ${message}`,
    };
  }
  if (refusalPatterns.some((pattern) => pattern.test(message))) {
    return { status: 'failed', reason: `the panel refused the order: ${message}` };
  }
  return { status: 'unknown', reason: `the panel answered with an error we do not know: ${message}` };
}

async function requery(connection: SmmPanelConnection, request: RequeryRequest): Promise<RequeryOutcome> {
  if (request.service !== 'social') return notOffered(connection.provider, request.service);
  if (request.providerReference === null) {
    return {
      status: 'unknown',
      reason:
        'the SMM panel API takes no reference of ours, so an order whose add answer was lost cannot be ' +
        'looked up: check the panel order history by link and time',
    };
  }
  const providerReference = request.providerReference;
  const read = await readStatus(connection, providerReference);
  if (read.kind === 'indefinite') return { status: 'unknown', reason: read.reason };
  if (read.kind === 'error') {
    // The panel gave us this order id: not knowing it now (another API key, say) is no proof that
    // nothing was delivered, so never the refund that not_found leads to.
    if (unknownOrderPattern.test(read.message)) {
      return {
        status: 'unknown',
        reason: `the panel does not know its own order ${providerReference} (${read.message}): check the panel account`,
      };
    }
    return {
      status: 'unknown',
      reason: `the panel answered the status query with an error: ${read.message}`,
    };
  }
  return statusOutcome(connection, providerReference, read.order);
}

async function balance(connection: SmmPanelConnection): Promise<bigint> {
  const { amount, currency } = await readBalance(connection);
  const kobo = toKobo(amount, factorFor(connection, currency, 'balance'), 'down');
  if (kobo === null) {
    throw new VtuProviderError(connection.provider, `balance: the panel wrote an unreadable amount`);
  }
  return kobo;
}

/** Asks the panel about one order (`action=status&order=<id>`). */
async function readStatus(connection: SmmPanelConnection, providerReference: string): Promise<StatusRead> {
  const answer = await send(connection, 'status', { order: providerReference });
  if (answer.kind === 'indefinite') return answer;
  const refused = panelError.safeParse(answer.body);
  if (refused.success) return { kind: 'error', message: clipMessage(refused.data.error) };
  const parsed = statusAnswer.safeParse(answer.body);
  if (!parsed.success) return { kind: 'indefinite', reason: `the panel ${unexpected(parsed.error)}` };
  return { kind: 'status', order: parsed.data };
}

/** What a status word means (see the header); unknown only for a Partial we cannot read. */
function statusOutcome(
  connection: SmmPanelConnection,
  providerReference: string,
  order: StatusAnswer,
): PurchaseOutcome {
  const word = order.status.trim().toLowerCase();
  if (word === 'canceled' || word === 'cancelled') {
    return { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' };
  }
  if (word !== 'completed' && word !== 'partial') return { status: 'pending', providerReference };
  const chargedKobo = chargeInKobo(connection, order.charge, order.currency ?? connection.learnt.currency);
  const charged = chargedKobo !== null ? { chargedKobo } : {};
  if (word === 'completed') return { status: 'success', providerReference, ...charged };
  const remains = remainsOf(order.remains);
  if (remains === null) {
    return {
      status: 'unknown',
      reason:
        `the panel reports order ${providerReference} Partial with a remains we cannot read ` +
        `(${describe(order.remains)}): a person must check the order in the panel before anything is refunded`,
    };
  }
  return { status: 'success', providerReference, ...charged, remains };
}

/** The charge in kobo when the panel said it in a currency we can convert; otherwise null (charge is informative). */
function chargeInKobo(
  connection: SmmPanelConnection,
  charge: string | number | null | undefined,
  currency: string | null,
): bigint | null {
  if (charge === null || charge === undefined || currency === null) return null;
  const factor = connection.koboPerUnit.get(currency.trim().toUpperCase());
  if (factor === undefined) return null;
  const kobo = toKobo(String(charge), factor, 'up');
  return kobo !== null && kobo >= 0n ? kobo : null;
}

/**
 * A decimal string times a whole number of kobo per unit, in exact bigint arithmetic; a fraction of a
 * kobo goes up or down as asked (towards +∞ or −∞). Null when the text is not a plain decimal.
 */
export function toKobo(text: string, koboPerUnit: bigint, round: 'up' | 'down'): bigint | null {
  const match = new RegExp(`^(-?)(\\d{1,18})(?:\\.(\\d{1,${fractionDigitsMax}}))?$`).exec(text.trim());
  if (match === null) return null;
  const fraction = match[3] ?? '';
  const scale = 10n ** BigInt(fraction.length);
  let scaled = BigInt(`${match[2]}${fraction}`) * koboPerUnit;
  if (match[1] === '-') scaled = -scaled;
  const whole = scaled / scale;
  const rest = scaled % scale;
  // bigint division truncates towards zero; a remainder moves the result one kobo the asked way.
  if (rest > 0n && round === 'up') return whole + 1n;
  if (rest < 0n && round === 'down') return whole - 1n;
  return whole;
}

/** A Partial's remains: a non-negative safe integer, written as a JSON number or a string of digits. */
function remainsOf(remains: unknown): number | null {
  if (typeof remains === 'number') return Number.isSafeInteger(remains) && remains >= 0 ? remains : null;
  if (typeof remains !== 'string' || !/^\d{1,16}$/.test(remains.trim())) return null;
  const value = Number(remains.trim());
  return Number.isSafeInteger(value) ? value : null;
}

/** A value the panel sent, short enough for a reason. */
function describe(value: unknown): string {
  if (value === undefined) return 'none given';
  const text = JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

function unexpected(error: z.ZodError): string {
  return `answered with an unexpected body (at ${issuePaths(error)})`;
}
