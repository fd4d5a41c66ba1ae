import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { lagosWallClock } from '../../lagos-time.ts';
import { isNairaAmount, koboToNaira, nairaToKobo } from '../../money.ts';
import { sameSecret } from '../secrets.ts';
import {
  type BillsService,
  billsServiceById,
  billsServices,
  categoryNames,
  nairaText,
  renewablePlans,
} from './bills-catalogue.ts';

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

export const SANDBOX_BILLS_API_KEY = 'sandbox-bills-api-key';
export const SANDBOX_BILLS_PUBLIC_KEY = 'PK_sandbox_bills_public';
export const SANDBOX_BILLS_SECRET_KEY = 'SK_sandbox_bills_secret';

const apiPrefix = '/__sandbox/vtu/bills/api';
const balancePath = '/__sandbox/providers/bills/balance';
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const startBalanceKobo = 100_000_000n;
const defaultTimeoutHoldMs = 30_000;
/** How far a request_id's minute may be from the clock's: clocks drift, and a minute can turn in flight. */
const requestIdSkewMinutes = 5;
const examQuantityMax = 10;
const cableMonthsMax = 12;
/** Band A's tariff, in kobo per kWh. */
const tariffKoboPerKwh = 20_950n;
const requestIdPattern = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})[A-Za-z0-9]*$/;
const phonePattern = /^0\d{10}$/;

type OrderStatus = 'delivered' | 'pending' | 'failed';

export type SandboxBillsOrder = {
  requestId: string;
  transactionId: string;
  serviceID: string;
  productName: string;
  /** The number the outcome digit was read from. */
  recipient: string;
  phone: string | null;
  amountKobo: bigint;
  /** What the balance paid (0 when the order was never charged). */
  chargedKobo: bigint;
  quantity: number;
  status: OrderStatus;
  /** What the next requery turns a pending order into. */
  settlesTo: 'delivered' | 'failed' | null;
  /** Product fields a delivered order answers with (token, cards, ...). */
  extras: Record<string, unknown>;
  createdAt: Date;
};

export type SandboxBillsState = {
  balanceKobo: bigint;
  orders: Map<string, SandboxBillsOrder>;
  /** How long a timeout-digit purchase is held open before its socket is destroyed. */
  timeoutHoldMs: number;
  nextTransactionNumber: number;
};

export function createSandboxBillsState(): SandboxBillsState {
  return {
    balanceKobo: startBalanceKobo,
    orders: new Map(),
    timeoutHoldMs: defaultTimeoutHoldMs,
    nextTransactionNumber: 1,
  };
}

/** Money arriving in the provider's bank account (a transfer from the service's float top-up). */
export function fundSandboxBills(state: SandboxBillsState, kobo: bigint): void {
  assert.ok(kobo > 0n, `a funding is positive: ${kobo}`);
  state.balanceKobo += kobo;
}

type Body = Record<string, unknown>;
type Answer = Record<string, unknown>;
type Held = { socket: Socket; timer: NodeJS.Timeout };

export function registerSandboxBills(
  app: FastifyInstance,
  state: SandboxBillsState,
  options: { clock: { now(): Date } },
): void {
  const now = () => options.clock.now();
  const held = new Set<Held>();

  // preClose runs before the server stops accepting and waits for open requests, so held requests
  // must go here; waiting for onClose would make every close wait for timeoutHoldMs.
  const releaseHeld = async () => {
    for (const entry of held) {
      clearTimeout(entry.timer);
      entry.socket.destroy();
    }
    held.clear();
  };
  app.addHook('preClose', releaseHeld);
  app.addHook('onClose', releaseHeld);

  void app.register(
    async (api) => {
      api.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
        const status = error.statusCode !== undefined && error.statusCode < 500 ? error.statusCode : 500;
        return status === 500
          ? reply.code(500).send(codeOnly('083', 'SYSTEM ERROR'))
          : reply.code(status).send(codeOnly('011', 'INVALID ARGUMENTS'));
      });
      api.addHook('onRequest', async (request, reply) => {
        if (!authorised(request)) return reply.code(200).send(codeOnly('087', 'INVALID CREDENTIALS'));
      });
      registerApi(api);
    },
    { prefix: apiPrefix },
  );

  app.get(balancePath, routeOptions, async () => ({ balance: koboToNaira(state.balanceKobo) }));
  app.post(balancePath, routeOptions, async (request, reply) => {
    const amount = asBody(request.body).amount;
    if (typeof amount !== 'number' || !isNairaAmount(amount)) {
      return reply.code(400).send({ message: 'amount must be naira, a number with at most 2 decimals' });
    }
    state.balanceKobo = nairaToKobo(amount);
    return { balance: koboToNaira(state.balanceKobo) };
  });

  function registerApi(api: FastifyInstance): void {
    api.get('/service-categories', routeOptions, async () => ({
      response_description: '000',
      content: Object.entries(categoryNames).map(([identifier, name]) => ({ identifier, name })),
    }));

    api.get('/services', routeOptions, async (request) => {
      const identifier = text((request.query as Body).identifier);
      const found = billsServices.filter((service) => service.category === identifier);
      if (found.length === 0) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
      return {
        response_description: '000',
        content: found.map((service) => ({
          serviceID: service.serviceID,
          name: service.name,
          minimium_amount: nairaText(service.minimumKobo),
          maximum_amount: nairaText(service.maximumKobo),
          convinience_fee: '0 %',
          product_type: service.fixedPrice ? 'fix' : 'flat',
          image: `https://sandbox.vtpass.com/resources/products/200X200/${service.serviceID}.jpg`,
        })),
      };
    });

    api.get('/service-variations', routeOptions, async (request) => {
      const service = billsServiceById.get(text((request.query as Body).serviceID) ?? '');
      if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
      return {
        response_description: '000',
        content: {
          ServiceName: service.name,
          serviceID: service.serviceID,
          convinience_fee: 'N0.00',
          [service.spelling]: service.variations.map((variation) => ({
            variation_code: variation.code,
            name: variation.name,
            variation_amount: nairaText(variation.amountKobo),
            fixedPrice: service.fixedPrice ? 'Yes' : 'No',
          })),
        },
      };
    });

    api.get('/balance', routeOptions, async () => ({
      code: 1,
      contents: { balance: koboToNaira(state.balanceKobo) },
    }));

    api.post('/merchant-verify', routeOptions, async (request) => {
      const body = asBody(request.body);
      const billersCode = text(body.billersCode)?.trim();
      const service = billsServiceById.get(text(body.serviceID) ?? '');
      if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');
      if (billersCode === undefined || billersCode === '') return codeOnly('011', 'INVALID ARGUMENTS');
      const type = text(body.type);
      if (service.category === 'electricity-bill' && type !== 'prepaid' && type !== 'postpaid') {
        return codeOnly('011', 'INVALID ARGUMENTS');
      }
      if (billersCode.endsWith('9')) {
        return {
          code: '000',
          content: {
            error: 'This number is invalid. Please check the number and try again.',
            WrongBillersCode: true,
          },
        };
      }
      return { code: '000', content: verifiedCustomer(service, billersCode, type ?? '') };
    });

    api.post('/pay', routeOptions, async (request, reply) => {
      const body = asBody(request.body);
      const requestId = text(body.request_id);
      if (requestId === undefined || requestId === '') return codeOnly('011', 'INVALID ARGUMENTS');
      if (!requestIdIsCurrent(requestId, now())) return codeOnly('085', 'IMPROPER REQUEST ID');
      if (state.orders.has(requestId)) return codeOnly('014', 'REQUEST ID ALREADY EXIST');
      const service = billsServiceById.get(text(body.serviceID) ?? '');
      if (service === undefined) return codeOnly('012', 'PRODUCT DOES NOT EXIST');

      const order = orderFor(service, body);
      if ('refusal' in order) return order.refusal;
      const recipient = order.recipient;
      const digit = recipient.at(-1);

      const record = (
        status: OrderStatus,
        settlesTo: SandboxBillsOrder['settlesTo'],
        chargedKobo: bigint,
      ) => {
        const created: SandboxBillsOrder = {
          requestId,
          transactionId: transactionId(),
          serviceID: service.serviceID,
          productName: order.productName,
          recipient,
          phone: order.phone,
          amountKobo: order.wholesaleKobo,
          chargedKobo,
          quantity: order.quantity,
          status,
          settlesTo,
          extras: status === 'failed' ? {} : order.extras(requestId),
          createdAt: now(),
        };
        state.orders.set(requestId, created);
        return created;
      };

      if (state.balanceKobo < order.wholesaleKobo) return codeOnly('018', 'LOW WALLET BALANCE');
      if (digit === '1') return answerFor(record('failed', null, 0n));

      state.balanceKobo -= order.wholesaleKobo;
      switch (digit) {
        case '2':
          return answerFor(record('pending', 'delivered', order.wholesaleKobo));
        case '3':
          return answerFor(record('pending', 'failed', order.wholesaleKobo), '099');
        case '4':
          record('delivered', null, order.wholesaleKobo);
          hold(request, reply);
          return reply;
        default:
          return answerFor(record('delivered', null, order.wholesaleKobo));
      }
    });

    api.post('/requery', routeOptions, async (request) => {
      const requestId = text(asBody(request.body).request_id);
      const order = requestId === undefined ? undefined : state.orders.get(requestId);
      if (order === undefined) return codeOnly('015', 'INVALID REQUEST ID');
      if (order.status === 'pending' && order.settlesTo !== null) {
        order.status = order.settlesTo;
        order.settlesTo = null;
        if (order.status === 'failed') {
          state.balanceKobo += order.chargedKobo;
          order.chargedKobo = 0n;
          order.extras = {};
        }
      }
      return answerFor(order);
    });
  }

  /** The timeout digit: the order stands, the answer never comes. */
  function hold(request: FastifyRequest, reply: FastifyReply): void {
    reply.hijack();
    const socket = request.raw.socket;
    const entry: Held = {
      socket,
      timer: setTimeout(() => {
        held.delete(entry);
        socket.destroy();
      }, state.timeoutHoldMs),
    };
    entry.timer.unref();
    held.add(entry);
    socket.once('close', () => {
      clearTimeout(entry.timer);
      held.delete(entry);
    });
  }

  function transactionId(): string {
    const number = state.nextTransactionNumber++;
    return `${now().getTime()}${String(number).padStart(8, '0')}`;
  }

  function answerFor(order: SandboxBillsOrder, pendingCode = '000'): Answer {
    const [code, description] =
      order.status === 'failed'
        ? ['016', 'TRANSACTION FAILED']
        : order.status === 'pending'
          ? [pendingCode, pendingCode === '099' ? 'TRANSACTION IS PROCESSING' : 'TRANSACTION PROCESSED']
          : ['000', 'TRANSACTION SUCCESSFUL'];
    const service = billsServiceById.get(order.serviceID)!;
    const amount = koboToNaira(order.amountKobo);
    return {
      code,
      response_description: description,
      requestId: order.requestId,
      amount,
      transaction_date: order.createdAt.toISOString(),
      purchased_code: order.status === 'delivered' ? (order.extras.purchased_code ?? '') : '',
      content: {
        transactions: {
          status: order.status === 'delivered' ? 'delivered' : order.status,
          product_name: order.productName,
          unique_element: order.recipient,
          unit_price: koboToNaira(order.amountKobo / BigInt(order.quantity)),
          quantity: order.quantity,
          service_verification: null,
          channel: 'api',
          commission: 0,
          total_amount: amount,
          discount: null,
          type: categoryNames[service.category],
          email: 'sandbox@billrail.test',
          phone: order.phone,
          name: null,
          convinience_fee: 0,
          amount,
          platform: 'api',
          method: 'api',
          transactionId: order.transactionId,
          commission_details: { amount: 0, rate: '0.00', rate_type: 'percent', computation_type: 'default' },
        },
      },
      ...(order.status === 'delivered' ? order.extras : {}),
    };
  }

  function authorised(request: FastifyRequest): boolean {
    const second = request.method === 'GET' ? 'public-key' : 'secret-key';
    const expected = request.method === 'GET' ? SANDBOX_BILLS_PUBLIC_KEY : SANDBOX_BILLS_SECRET_KEY;
    return (
      sameSecret(request.headers['api-key'], SANDBOX_BILLS_API_KEY) &&
      sameSecret(request.headers[second], expected)
    );
  }
}

type OrderPlan = {
  recipient: string;
  phone: string | null;
  productName: string;
  wholesaleKobo: bigint;
  quantity: number;
  extras(requestId: string): Record<string, unknown>;
};

/** Reads a /pay body for its product: what it costs, whose number decides the outcome, what it delivers. */
function orderFor(service: BillsService, body: Body): OrderPlan | { refusal: Answer } {
  const refuse = (code: string, description: string) => ({ refusal: codeOnly(code, description) });
  const phone = text(body.phone)?.trim();
  const billersCode = text(body.billersCode)?.trim();
  const variationCode = text(body.variation_code);
  const variation = service.variations.find((item) => item.code === variationCode);
  const nothing = () => ({});
  const amountInRange = (): bigint | { refusal: Answer } => {
    const amount = wireKobo(body.amount);
    if (amount === null || amount <= 0n) return refuse('011', 'INVALID ARGUMENTS');
    if (amount < service.minimumKobo) return refuse('013', 'BELOW MINIMUM AMOUNT ALLOWED');
    if (amount > service.maximumKobo) return refuse('017', 'ABOVE MAXIMUM AMOUNT ALLOWED');
    return amount;
  };

  switch (service.category) {
    case 'airtime': {
      if (phone === undefined || !phonePattern.test(phone)) return refuse('011', 'INVALID ARGUMENTS');
      const amount = amountInRange();
      if (typeof amount !== 'bigint') return amount;
      return {
        recipient: phone,
        phone,
        productName: service.name,
        wholesaleKobo: amount,
        quantity: 1,
        extras: nothing,
      };
    }
    case 'data': {
      const recipient = billersCode ?? phone;
      if (recipient === undefined || !phonePattern.test(recipient)) return refuse('011', 'INVALID ARGUMENTS');
      if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
      return {
        recipient,
        phone: phone ?? recipient,
        productName: `${service.name} - ${variation.name}`,
        wholesaleKobo: variation.amountKobo,
        quantity: 1,
        extras: nothing,
      };
    }
    case 'tv-subscription': {
      if (billersCode === undefined || !/^\d{6,16}$/.test(billersCode))
        return refuse('011', 'INVALID ARGUMENTS');
      if (text(body.subscription_type) === 'renew') {
        const amount = amountInRange();
        if (typeof amount !== 'bigint') return amount;
        return {
          recipient: billersCode,
          phone: phone ?? null,
          productName: `${service.name} - Renewal`,
          wholesaleKobo: amount,
          quantity: 1,
          extras: nothing,
        };
      }
      if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
      const months = body.quantity === undefined ? 1 : body.quantity;
      if (typeof months !== 'number' || !Number.isSafeInteger(months) || months < 1) {
        return refuse('031', 'BELOW MINIMUM QUANTITY ALLOWED');
      }
      if (months > cableMonthsMax) return refuse('032', 'ABOVE MAXIMUM QUANTITY ALLOWED');
      return {
        recipient: billersCode,
        phone: phone ?? null,
        productName: `${service.name} - ${variation.name}`,
        wholesaleKobo: variation.amountKobo * BigInt(months),
        quantity: months,
        extras: nothing,
      };
    }
    case 'electricity-bill': {
      if (billersCode === undefined || !/^\d{6,16}$/.test(billersCode))
        return refuse('011', 'INVALID ARGUMENTS');
      if (variationCode !== 'prepaid' && variationCode !== 'postpaid') {
        return refuse('010', 'VARIATION CODE DOES NOT EXIST');
      }
      const amount = amountInRange();
      if (typeof amount !== 'bigint') return amount;
      return {
        recipient: billersCode,
        phone: phone ?? null,
        productName: `${service.name} (${variationCode})`,
        wholesaleKobo: amount,
        quantity: 1,
        extras: (requestId) => ({
          ...meterHolder(service.serviceID, billersCode),
          ...(variationCode === 'prepaid'
            ? electricityToken(service.serviceID, requestId, amount)
            : { purchased_code: '' }),
        }),
      };
    }
    case 'education': {
      if (phone === undefined || !phonePattern.test(phone)) return refuse('011', 'INVALID ARGUMENTS');
      if (variation === undefined) return refuse('010', 'VARIATION CODE DOES NOT EXIST');
      const quantity = body.quantity === undefined ? 1 : body.quantity;
      if (typeof quantity !== 'number' || !Number.isSafeInteger(quantity) || quantity < 1) {
        return refuse('031', 'BELOW MINIMUM QUANTITY ALLOWED');
      }
      const jamb = service.serviceID === 'jamb';
      if (quantity > (jamb ? 1 : examQuantityMax)) return refuse('032', 'ABOVE MAXIMUM QUANTITY ALLOWED');
      if (jamb && (billersCode === undefined || billersCode === ''))
        return refuse('011', 'INVALID ARGUMENTS');
      return {
        recipient: phone,
        phone,
        productName: `${service.name} - ${variation.name}`,
        wholesaleKobo: variation.amountKobo * BigInt(quantity),
        quantity,
        extras: (requestId) => examPins(service.serviceID, requestId, quantity),
      };
    }
    case 'betting': {
      if (billersCode === undefined || !/^[A-Za-z0-9]{4,20}$/.test(billersCode)) {
        return refuse('011', 'INVALID ARGUMENTS');
      }
      const amount = amountInRange();
      if (typeof amount !== 'bigint') return amount;
      return {
        recipient: billersCode,
        phone: phone ?? null,
        productName: `${service.name} Wallet Funding`,
        wholesaleKobo: amount,
        quantity: 1,
        extras: nothing,
      };
    }
  }
}

/** A prepaid token in the fields the DisCo uses (providers.md section 9). */
function electricityToken(serviceID: string, requestId: string, amountKobo: bigint): Record<string, unknown> {
  const token = digitsFrom(`token:${requestId}`, 20);
  const spaced = token.replace(/(\d{4})(?=\d)/g, '$1 ');
  const tenthsKwh = (amountKobo * 10n) / tariffKoboPerKwh;
  const units = `${tenthsKwh / 10n}.${tenthsKwh % 10n}`;
  const common = { purchased_code: `Token : ${spaced}` };
  switch (serviceID) {
    case 'eko-electric':
      return {
        ...common,
        mainToken: token,
        mainTokenDescription: 'Normal Sale',
        mainTokenUnits: units,
        mainsTokenAmount: koboToNaira(amountKobo),
        bonusToken: null,
        tariffIndex: 'A',
      };
    case 'kano-electric':
      return {
        ...common,
        Token: token,
        Units: `${units} kWh`,
        Tariff: 'A',
        Receipt: digitsFrom(requestId, 10),
      };
    default:
      return {
        ...common,
        token,
        tokenAmount: koboToNaira(amountKobo),
        units: `${units} kWh`,
        tariff: 'Band A',
        exchangeReference: digitsFrom(`exchange:${requestId}`, 12),
      };
  }
}

/** The meter's holder in the fields the DisCo's answer uses, if it names them (providers.md section 9). */
function meterHolder(serviceID: string, meter: string): Record<string, unknown> {
  switch (serviceID) {
    case 'eko-electric':
    case 'portharcourt-electric':
      return {};
    case 'kano-electric':
      return { CustomerName: customerName(meter), CustomerAddress: customerAddress(meter) };
    default:
      return { customerName: customerName(meter), customerAddress: customerAddress(meter) };
  }
}

function examPins(serviceID: string, requestId: string, quantity: number): Record<string, unknown> {
  const pins = Array.from({ length: quantity }, (_, index) => ({
    Serial: `${serviceID === 'nabteb' ? 'NBT' : 'WRN'}${digitsFrom(`serial:${requestId}:${index}`, 9)}`,
    Pin: digitsFrom(`pin:${requestId}:${index}`, 12),
  }));
  switch (serviceID) {
    case 'jamb': {
      const pin = digitsFrom(`jamb:${requestId}`, 15);
      return { purchased_code: `Pin : ${pin}` };
    }
    case 'neco': {
      const tokens = pins.map((pin) => `NECO${pin.Pin}`);
      return { purchased_code: tokens.map((token) => `Token : ${token}`).join('||'), tokens };
    }
    default:
      return {
        purchased_code: pins.map((pin) => `Serial No:${pin.Serial}, pin: ${pin.Pin}`).join('||'),
        cards: pins,
      };
  }
}

const firstNames = [
  'Adaeze',
  'Chinedu',
  'Olumide',
  'Aisha',
  'Emeka',
  'Funmilayo',
  'Ibrahim',
  'Ngozi',
  'Tunde',
];
const lastNames = ['Okafor', 'Adeyemi', 'Bello', 'Eze', 'Ogunleye', 'Musa', 'Nwosu', 'Balogun', 'Okonkwo'];
const streets = [
  'Allen Avenue, Ikeja',
  'Adeola Odeku Street, Victoria Island',
  'Ogui Road, Enugu',
  'Ring Road, Ibadan',
];

function customerName(number: string): string {
  const seed = Number.parseInt(digitsFrom(`name:${number}`, 4), 10);
  return `${lastNames[seed % lastNames.length]} ${firstNames[Math.floor(seed / 10) % firstNames.length]}`.toUpperCase();
}

function customerAddress(number: string): string {
  const seed = Number.parseInt(digitsFrom(`customer:${number}`, 4), 10);
  return `${(seed % 98) + 1} ${streets[seed % streets.length]}`;
}

function verifiedCustomer(service: BillsService, number: string, type: string): Record<string, unknown> {
  const name = customerName(number);
  const seed = Number.parseInt(digitsFrom(`customer:${number}`, 4), 10);
  switch (service.category) {
    case 'tv-subscription': {
      const plans = renewablePlans[service.serviceID] ?? [];
      const code = plans[seed % plans.length];
      const plan = service.variations.find((item) => item.code === code);
      return {
        Customer_Name: name,
        Status: 'Open',
        Due_Date: '2026-12-31T00:00:00',
        Customer_Number: digitsFrom(`customer-number:${number}`, 9),
        Customer_Type: service.serviceID.toUpperCase(),
        Current_Bouquet: plan?.name ?? 'None',
        Current_Bouquet_Code: plan?.code ?? '',
        Renewal_Amount: plan === undefined ? 0 : koboToNaira(plan.amountKobo),
      };
    }
    case 'electricity-bill':
      return {
        Customer_Name: name,
        Address: customerAddress(number),
        Meter_Number: number,
        Customer_Arrears: '0.00',
        Minimum_Amount: koboToNaira(service.minimumKobo),
        Min_Purchase_Amount: koboToNaira(service.minimumKobo),
        Can_Vend: 'yes',
        Business_Unit: 'Central',
        Customer_Account_Type: 'NMD',
        Meter_Type: type.toUpperCase(),
        WrongBillersCode: false,
      };
    default:
      return {
        Customer_Name: name,
        Customer_ID: number,
        Minimum_Amount: koboToNaira(service.minimumKobo),
      };
  }
}

/** True when the id opens with a real Lagos minute within requestIdSkewMinutes of now. */
function requestIdIsCurrent(requestId: string, now: Date): boolean {
  const match = requestIdPattern.exec(requestId);
  if (match === null) return false;
  const [year, month, day, hour, minute] = match.slice(1, 6).map(Number) as [
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59) return false;
  const stated = Date.UTC(year, month - 1, day, hour, minute);
  if (new Date(stated).getUTCDate() !== day) return false;
  // Both sides as Lagos wall-clock minutes, so no offset is assumed anywhere.
  const lagosNow = lagosWallClock(now);
  return Math.abs(stated - lagosNow) <= requestIdSkewMinutes * 60_000;
}

/** Stable digits from a seed, so a request's token and pins read the same on every requery. */
function digitsFrom(seed: string, length: number): string {
  let digits = '';
  for (let round = 0; digits.length < length; round++) {
    const hex = createHash('sha256').update(`${seed}:${round}`).digest('hex');
    digits += BigInt(`0x${hex}`).toString().slice(1);
  }
  return digits.slice(0, length);
}

/** A wire amount (naira, a number or a decimal string) in kobo; null when it is not one. */
function wireKobo(value: unknown): bigint | null {
  if (typeof value === 'number') return isNairaAmount(value) ? nairaToKobo(value) : null;
  if (typeof value !== 'string') return null;
  const match = /^(\d+)(?:\.(\d{1,2}))?$/.exec(value.trim());
  if (match === null) return null;
  return BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
}

function codeOnly(code: string, description: string): Answer {
  return { code, response_description: description };
}

function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;
}
