import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Clock } from '../../clock.ts';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { sameSecret } from '../secrets.ts';

// The sandbox social provider: an SMM panel speaking the standard API v2 ("Perfect Panel",
// shared/reference/providers.md section 4) at POST /__sandbox/vtu/social/api/v2, so a client's base
// URL is `${publicBaseUrl}/__sandbox/vtu/social/api/v2`. Bodies may be form-encoded (what panels
// document) or JSON (what they accept too). Every request carries `key` (SANDBOX_SOCIAL_API_KEY) and
// `action`; every refusal is `{error}` with HTTP 200, as on a real panel. It reaches nothing but its
// own state: no ledger, no domain module.
//
// Actions: services, add (service, link, quantity), status (order, or orders = up to 100 ids
// separated by commas) and balance. Prices are in NGN, per 1,000 units.
//
// Sandbox rules (API.md section 14, "the quantity's last digit decides"): every order the panel can
// take (a known service, a link, a quantity within the service's min/max, a balance that covers the
// charge) is accepted with `{order}` and charged; the last digit of the ORDER QUANTITY then decides
// what becomes of it:
//   1      → Canceled from the start: the whole charge goes back to the balance (charge 0,
//            remains = quantity), as a panel refunds a canceled order;
//   2      → Partial from the start, half delivered: remains = floor(quantity / 2), and the panel
//            keeps only the delivered share of the charge (it refunds remains / quantity × charge,
//            rounded down, so it keeps the delivered share rounded up: the panels' convention);
//   3      → In progress: on the add and on the first status query; Completed from the second
//            status query on;
//   other  → Completed at once (remains 0).
// The charge is rate × quantity / 1000 in kobo, rounded up; the balance (₦1,000,000 at start; set it
// with POST /__sandbox/providers/social/balance {amount (naira)}, read it with GET) must cover it,
// else {error: "Not enough funds on balance"}. Quantities outside a service's min/max are refused as
// a panel does ("Quantity less than minimal 10"). A status query about several orders (`orders`)
// counts as a query about each.

export const SANDBOX_SOCIAL_API_KEY = 'sandbox-social-key';

export type SandboxSocialStatus = 'Pending' | 'In progress' | 'Completed' | 'Partial' | 'Canceled';

export type SandboxSocialService = {
  service: number;
  name: string;
  type: string;
  category: string;
  /** Naira per 1,000, as the panel writes it. */
  rate: string;
  min: number;
  max: number;
  refill: boolean;
  cancel: boolean;
};

export type SandboxSocialOrder = {
  order: number;
  service: number;
  link: string;
  quantity: number;
  chargeKobo: bigint;
  startCount: number;
  status: SandboxSocialStatus;
  remains: number;
  /** Status queries still answered `In progress` before the order turns Completed (digit 3). */
  inProgressQueriesLeft: number;
  createdAt: Date;
};

export type SandboxSocialState = {
  balanceKobo: bigint;
  orders: Map<number, SandboxSocialOrder>;
  nextOrderId: number;
  services: SandboxSocialService[];
};

export type SandboxSocialOptions = { clock: Clock };

export const sandboxSocialPath = '/__sandbox/vtu/social/api/v2';
const balancePath = '/__sandbox/providers/social/balance';
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;
const formBodyLimitBytes = 64 * 1024;
const startingBalanceKobo = 100_000_000n;
/** The most order ids one status query may ask about (the panels' own limit). */
const statusOrdersMax = 100;

const catalogue: readonly SandboxSocialService[] = [
  service(
    1001,
    'Instagram Followers [Real, 30-day refill]',
    'Instagram Followers',
    '1450.00',
    10,
    100_000,
    true,
  ),
  service(1002, 'Instagram Likes [Instant]', 'Instagram Likes', '320.50', 10, 50_000, false),
  service(1003, 'Instagram Reel Views', 'Instagram Views', '18.75', 100, 5_000_000, false),
  {
    ...service(1004, 'Instagram Custom Comments', 'Instagram Comments', '9000.00', 5, 1_000, false),
    type: 'Custom Comments',
  },
  service(2001, 'TikTok Views [Fast]', 'TikTok Views', '45.25', 100, 10_000_000, false),
  service(2002, 'TikTok Likes', 'TikTok Likes', '12.345', 50, 100_000, false),
  service(2003, 'TikTok Followers', 'TikTok Followers', '2600.00', 50, 50_000, true),
  service(3001, 'YouTube Views [Non-drop]', 'YouTube Views', '2100.00', 500, 1_000_000, true),
  service(3002, 'YouTube Subscribers', 'YouTube Subscribers', '12500.00', 100, 10_000, true),
  service(4001, 'Twitter/X Followers', 'Twitter/X Followers', '3800.75', 50, 50_000, true),
  service(4002, 'Twitter/X Likes', 'Twitter/X Likes', '900.00', 20, 20_000, false),
  service(5001, 'Facebook Page Likes', 'Facebook Page Likes', '1800.00', 100, 100_000, true),
  service(6001, 'Telegram Channel Members', 'Telegram Members', '950.50', 100, 100_000, false),
];

export function createSandboxSocialState(): SandboxSocialState {
  return {
    balanceKobo: startingBalanceKobo,
    orders: new Map(),
    nextOrderId: 23_501,
    services: catalogue.map((item) => ({ ...item })),
  };
}

/** Adds to the panel balance, as a payment into the panel would. */
export function fundSandboxSocial(state: SandboxSocialState, kobo: bigint): void {
  if (kobo <= 0n) throw new RangeError(`funding must be positive, got ${kobo} kobo`);
  state.balanceKobo += kobo;
}

type Fields = Record<string, string>;

export function registerSandboxSocial(
  app: FastifyInstance,
  state: SandboxSocialState,
  options: SandboxSocialOptions,
): void {
  void app.register(async (scope) => {
    // Panels document form-encoded bodies; the parser is scoped to this plugin so the rest of the app
    // keeps refusing them.
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: formBodyLimitBytes },
      (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(String(body)))),
    );
    scope.post(sandboxSocialPath, routeOptions, async (request) =>
      panelAction(state, options.clock, asFields(request.body)),
    );
    scope.post(balancePath, routeOptions, async (request, reply) => setBalance(state, request.body, reply));
    // `{balance}` in naira, like the data and bills sandboxes' controls (API.md section 8).
    scope.get(balancePath, routeOptions, async () => ({ balance: koboToNaira(state.balanceKobo) }));
  });
}

/** The panel's one endpoint: `key` checked, then the `action` asked for. */
function panelAction(state: SandboxSocialState, clock: Clock, fields: Fields) {
  if (!keyMatches(fields.key)) return { error: 'Invalid API key' };
  switch (fields.action) {
    case 'services':
      return state.services;
    case 'balance':
      return { balance: nairaText(state.balanceKobo), currency: 'NGN' };
    case 'add':
      return add(state, clock, fields);
    case 'status':
      return status(state, fields);
    default:
      return { error: 'Incorrect request' };
  }
}

function setBalance(state: SandboxSocialState, body: unknown, reply: FastifyReply) {
  const amount =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>).amount
      : undefined;
  if (typeof amount !== 'number' || !isNairaAmount(amount) || Object.keys(body as object).length !== 1) {
    return invalid(reply, 'amount: naira, 0 or more, two decimals at most');
  }
  state.balanceKobo = nairaToKobo(amount);
  return { balance: koboToNaira(state.balanceKobo) };
}

/** An order the panel can take is charged and accepted; its quantity's last digit decides the rest. */
function add(state: SandboxSocialState, clock: Clock, fields: Fields) {
  const item = state.services.find((s) => String(s.service) === fields.service);
  if (item === undefined) return { error: 'Incorrect service ID' };
  const link = fields.link?.trim() ?? '';
  if (link === '') return { error: 'Incorrect link' };
  const quantityText = fields.quantity ?? '';
  if (!/^\d{1,9}$/.test(quantityText)) return { error: 'Incorrect quantity' };
  const quantity = Number(quantityText);
  if (quantity < item.min) return { error: `Quantity less than minimal ${item.min}` };
  if (quantity > item.max) return { error: `Quantity more than maximal ${item.max}` };
  const chargeKobo = chargeFor(item.rate, quantity);
  if (chargeKobo > state.balanceKobo) return { error: 'Not enough funds on balance' };

  state.balanceKobo -= chargeKobo;
  const order: SandboxSocialOrder = {
    order: state.nextOrderId++,
    service: item.service,
    link,
    quantity,
    chargeKobo,
    // A made-up but stable count of what the account had before the order.
    startCount: (item.service * 7 + quantity) % 10_000,
    status: 'Completed',
    remains: 0,
    inProgressQueriesLeft: 0,
    createdAt: clock.now(),
  };
  applyQuantityDigit(state, order);
  state.orders.set(order.order, order);
  return { order: order.order };
}

function applyQuantityDigit(state: SandboxSocialState, order: SandboxSocialOrder): void {
  const { quantity, chargeKobo } = order;
  switch (quantity % 10) {
    case 1:
      // Canceled before anything was delivered: the whole charge goes back.
      order.status = 'Canceled';
      order.remains = quantity;
      refund(state, order, chargeKobo);
      break;
    case 2:
      // Half delivered: the undelivered share of the charge goes back, rounded down, so the panel
      // keeps the delivered share rounded up.
      order.status = 'Partial';
      order.remains = Math.floor(quantity / 2);
      refund(state, order, (chargeKobo * BigInt(order.remains)) / BigInt(quantity));
      break;
    case 3:
      order.status = 'In progress';
      order.remains = quantity;
      order.inProgressQueriesLeft = 1;
      break;
  }
}

/** Gives part of an order's charge back to the balance, as a panel does on a cancel or partial. */
function refund(state: SandboxSocialState, order: SandboxSocialOrder, kobo: bigint): void {
  order.chargeKobo -= kobo;
  state.balanceKobo += kobo;
}

function status(state: SandboxSocialState, fields: Fields) {
  if (fields.order !== undefined) return statusOf(state, fields.order);
  if (fields.orders === undefined) return { error: 'Incorrect request' };
  const ids = fields.orders
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id !== '');
  if (ids.length === 0 || ids.length > statusOrdersMax) return { error: 'Incorrect request' };
  return Object.fromEntries(ids.map((id) => [id, statusOf(state, id)]));
}

function statusOf(state: SandboxSocialState, id: string) {
  const order = /^\d{1,15}$/.test(id) ? state.orders.get(Number(id)) : undefined;
  if (order === undefined) return { error: 'Incorrect order ID' };
  if (order.status === 'In progress') {
    if (order.inProgressQueriesLeft > 0) order.inProgressQueriesLeft -= 1;
    else {
      order.status = 'Completed';
      order.remains = 0;
    }
  }
  return {
    charge: nairaText(order.chargeKobo),
    start_count: String(order.startCount),
    status: order.status,
    remains: String(order.remains),
    currency: 'NGN',
  };
}

function service(
  id: number,
  name: string,
  category: string,
  rate: string,
  min: number,
  max: number,
  refill: boolean,
): SandboxSocialService {
  return { service: id, name, type: 'Default', category, rate, min, max, refill, cancel: !refill };
}

/** Kobo for rate (naira per 1,000, a decimal string) × quantity / 1000, rounded up to the kobo. */
function chargeFor(rate: string, quantity: number): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(rate);
  if (match === null) throw new Error(`sandbox catalogue broken: rate ${rate}`);
  const fraction = match[2] ?? '';
  const numerator = BigInt(`${match[1]}${fraction}`) * 100n * BigInt(quantity);
  const denominator = 10n ** BigInt(fraction.length) * 1000n;
  return (numerator + denominator - 1n) / denominator;
}

/** Naira as a panel writes them: a decimal string. */
function nairaText(kobo: bigint): string {
  return `${kobo / 100n}.${(kobo % 100n).toString().padStart(2, '0')}`;
}

/** Form fields arrive as strings; JSON may carry numbers (quantity: 100), which mean the same. */
function asFields(body: unknown): Fields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const fields: Fields = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>)) {
    if (typeof value === 'string') fields[name] = value;
    else if (typeof value === 'number' && Number.isFinite(value)) fields[name] = String(value);
  }
  return fields;
}

function keyMatches(given: string | undefined): boolean {
  return sameSecret(given, SANDBOX_SOCIAL_API_KEY);
}

/** The service's envelope, for the sandbox's own control endpoint. */
function invalid(reply: FastifyReply, message: string) {
  return reply.code(400).send({ success: false, error: { code: 'VALIDATION_ERROR', message } });
}
