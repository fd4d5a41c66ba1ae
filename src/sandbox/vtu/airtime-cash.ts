import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.ts';
import { sameSecret } from '../secrets.ts';

// The sandbox airtime-to-cash provider: VTU Africa's Airtime2Cash API (shared/reference/providers.md
// section 3.3) under /__sandbox/vtu/airtime-cash/portal/api, so a client's base URL is
// `${publicBaseUrl}/__sandbox/vtu/airtime-cash/portal/api` (the real one is
// https://vtuafrica.com.ng/portal/api). Every call is a GET with `apikey` (SANDBOX_AIRTIME_CASH_API_KEY)
// in the query, and every answer is HTTP 200 with `{code, description}`: code 101 is success, any other
// code an error `{code, description: {message}}`. It reaches nothing but its own state.
//
// Calls (paths with or without the trailing slash):
// - merchant-verify/?serviceName=Airtime2Cash&network=<mtn|airtel|glo|9mobile>
//     → {Status: "Completed", Phone_Number, Network: "MTN", message}: the network's receiving line
//       (state.lines: a real-looking number of the network's own prefix).
// - airtime-cash/?network&sender&sendernumber&amount&sitephone&ref&webhookURL
//     → {Status: "Completed" | "Pending", ref, network, amount, credit, message}: the report that the
//       airtime was shared. amount is the face value in whole naira, ₦100 to ₦50,000; sitephone must be
//       the line the verify gives for that network; ref (1 to 64 letters, digits, _ or -) is the
//       client's and may be used once; webhookURL (optional) is where the callback goes.
// - merchant-verify/?serviceName=Webhook&ref[&webhookURL]
//     → the transaction as it stands, {Status, ref, network, amount, credit, message}; when it is
//       Completed the callback is sent again (to this webhookURL, else the report's), as VTU Africa's
//       webhook re-send does. It is the only way to ask about a transaction, so clients use it as their
//       status query.
// - merchant-verify/?serviceName=Balance → {Status: "Completed", Balance: "1000000.00", message}: our
//   wallet at the provider in naira, credited with each arrived airtime's `credit` (the face value
//   that arrived times state.creditPercent for the network, rounded down to the kobo).
//
// In an answer, `amount` is the airtime reported while the transaction is Pending and the airtime
// that arrived once it is Completed (in naira, two decimals when it is not whole), as is the
// callback's: what a client pays on.
//
// Error codes (the message is what a client reads; the codes are this simulator's own):
//   102 Invalid API Key                      103 Invalid Network. Use mtn, airtel, glo or 9mobile
//   104 <NET> Airtime To Cash Service Is Not Available At The Moment (state.unavailable)
//   105 Invalid Amount. Amount Must Be Between 100 And 50000 Naira (whole naira)
//   106 Invalid Sender Phone Number          107 Wrong Site Phone Number. Kindly Transfer To <line>
//   108 Duplicate Transaction Reference      109 Transaction Not Found
//   110 Missing Or Invalid Parameter: <name> 111 Invalid Service Name
//
// Sandbox rules (API.md section 14), by the last digit of the SENDING phone (sendernumber):
//   1     → the airtime never arrives: Pending on the report and on every status query, no callback;
//   2     → it arrives on the first status query: Pending on the report, Completed from the first
//           status query on; no callback until that query, which sends it;
//   3     → half of the declared amount arrives (rounded down to the kobo), at once: Completed on the
//           report with that amount, and the callback is sent;
//   other → all of it arrives at once: Completed on the report, and the callback is sent.
// A test may set an order's receivedKobo before it completes (a provider confirming another amount).
//
// The callback: POST `{"ref", "service": "Airtime2Cash", "network", "amount", "status": "Completed"}`
// (JSON) to the webhookURL. It carries no signature, as VTU Africa's carries none: the receiving
// service must not trust it, only requery on it. It is fire and forget: an attempt that fails (a
// network error, no answer within state.callbackTimeoutMs, a status other than 2xx) is tried again
// after each of state.callbackRetryDelaysMs, then given up. Its timers never keep the process alive,
// and closing the app stops every delivery (in flight ones are aborted).

export const SANDBOX_AIRTIME_CASH_API_KEY = 'sandbox-airtime-cash-key';
export const sandboxAirtimeCashPath = '/__sandbox/vtu/airtime-cash/portal/api';

export type SandboxAirtimeCashNetwork = 'mtn' | 'airtel' | 'glo' | '9mobile';

export type SandboxAirtimeCashOrder = {
  ref: string;
  network: SandboxAirtimeCashNetwork;
  sender: string;
  senderNumber: string;
  amountKobo: bigint;
  /** The airtime that arrives (all of amountKobo, or half of it for digit 3). */
  receivedKobo: bigint;
  /** What the provider credits our wallet when the airtime arrives (set then). */
  creditKobo: bigint;
  sitePhone: string;
  webhookUrl: string | null;
  status: 'Pending' | 'Completed';
  /** Digit 2: the first status query completes it. */
  arrivesOnQuery: boolean;
  createdAt: Date;
  completedAt: Date | null;
  /** Callbacks the webhookURL took (a 2xx answer). */
  callbacksDelivered: number;
};

export type SandboxAirtimeCashState = {
  /** The receiving line the verify gives for each network; a report must name it. */
  lines: Record<SandboxAirtimeCashNetwork, string>;
  /** Networks whose service is off: the verify and the report answer error 104. */
  unavailable: Set<SandboxAirtimeCashNetwork>;
  /** The percent of the face value credited to our wallet when the airtime arrives. */
  creditPercent: Record<SandboxAirtimeCashNetwork, number>;
  balanceKobo: bigint;
  orders: Map<string, SandboxAirtimeCashOrder>;
  /** The waits before the second, third, ... attempt of a callback; its length is the retries. */
  callbackRetryDelaysMs: number[];
  /** How long one callback attempt may take. */
  callbackTimeoutMs: number;
};

export type SandboxAirtimeCashOptions = { clock: Clock };

const networks: readonly SandboxAirtimeCashNetwork[] = ['mtn', 'airtel', 'glo', '9mobile'];
const networkNames: Readonly<Record<SandboxAirtimeCashNetwork, string>> = {
  mtn: 'MTN',
  airtel: 'AIRTEL',
  glo: 'GLO',
  '9mobile': '9MOBILE',
};
const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;
const amountNairaMin = 100;
const amountNairaMax = 50_000;
const refPattern = /^[A-Za-z0-9_-]{1,64}$/;
const localPhonePattern = /^0[789][01]\d{8}$/;
const senderLengthMax = 100;
const webhookUrlLengthMax = 2_000;
const startingBalanceKobo = 100_000_000n;

export function createSandboxAirtimeCashState(): SandboxAirtimeCashState {
  return {
    // Each of its network's own prefix (src/shared/prefixes.ts): MTN 0803, Airtel 0802, Glo 0805,
    // 9mobile 0809.
    lines: { mtn: '08034417262', airtel: '08021958834', glo: '08057731940', '9mobile': '08093360518' },
    unavailable: new Set(),
    creditPercent: { mtn: 85, airtel: 80, glo: 75, '9mobile': 75 },
    balanceKobo: startingBalanceKobo,
    orders: new Map(),
    callbackRetryDelaysMs: [1_000, 5_000],
    callbackTimeoutMs: 5_000,
  };
}

type Query = Record<string, string>;
type Reply = { code: number; description: Record<string, string> };

/** The provider as its routes see it: its state, its clock, and its callbacks under way. */
type AirtimeCashSimulator = {
  state: SandboxAirtimeCashState;
  clock: Clock;
  callbacks: Callbacks;
};

/** Callback deliveries: their timers and requests in flight, all stopped when the app closes. */
type Callbacks = { closed: boolean; timers: Set<NodeJS.Timeout>; inFlight: Set<AbortController> };

/** A report's fields, checked. */
type Report = {
  network: SandboxAirtimeCashNetwork;
  ref: string;
  sender: string;
  senderNumber: string;
  amountKobo: bigint;
  sitePhone: string;
  webhookUrl: string | null;
};

export function registerSandboxAirtimeCash(
  app: FastifyInstance,
  state: SandboxAirtimeCashState,
  options: SandboxAirtimeCashOptions,
): void {
  const callbacks: Callbacks = { closed: false, timers: new Set(), inFlight: new Set() };
  const sim: AirtimeCashSimulator = { state, clock: options.clock, callbacks };
  const stop = async () => {
    callbacks.closed = true;
    for (const timer of callbacks.timers) clearTimeout(timer);
    callbacks.timers.clear();
    for (const controller of callbacks.inFlight) controller.abort();
    callbacks.inFlight.clear();
  };
  // preClose: a callback in flight to this very app (the sandbox's own service) must not hold the
  // close up; onClose covers an app that never listened.
  app.addHook('preClose', stop);
  app.addHook('onClose', stop);

  for (const path of ['merchant-verify/', 'merchant-verify']) {
    app.get(`${sandboxAirtimeCashPath}/${path}`, routeOptions, async (request) =>
      merchantVerify(sim, asQuery(request.query)),
    );
  }
  for (const path of ['airtime-cash/', 'airtime-cash']) {
    app.get(`${sandboxAirtimeCashPath}/${path}`, routeOptions, async (request) => {
      const query = asQuery(request.query);
      if (!keyMatches(query.apikey)) return error(102, 'Invalid API Key');
      return report(sim, query);
    });
  }
}

/** merchant-verify/: the receiving line, the status query (Webhook) or the balance, by serviceName. */
function merchantVerify(sim: AirtimeCashSimulator, query: Query): Reply {
  if (!keyMatches(query.apikey)) return error(102, 'Invalid API Key');
  switch (query.serviceName) {
    case 'Airtime2Cash':
      return verify(sim.state, query);
    case 'Webhook':
      return resend(sim, query);
    case 'Balance':
      return ok({
        Status: 'Completed',
        Balance: nairaText(sim.state.balanceKobo),
        message: `Your Wallet Balance Is N${nairaText(sim.state.balanceKobo)}`,
      });
    default:
      return error(111, 'Invalid Service Name');
  }
}

function verify(state: SandboxAirtimeCashState, query: Query): Reply {
  const network = networkOf(query.network);
  if (network === null) return error(103, 'Invalid Network. Use mtn, airtel, glo or 9mobile');
  if (state.unavailable.has(network)) return unavailable(network);
  const line = state.lines[network];
  return ok({
    Status: 'Completed',
    Phone_Number: line,
    Network: networkNames[network],
    message: `${networkNames[network]} Airtime To Cash Service Is Available. Kindly Transfer The Exact Amount To Convert into Our Phone Number: ${line}`,
  });
}

/** airtime-cash/: the report that airtime was shared; the sender's last digit decides what arrives. */
function report(sim: AirtimeCashSimulator, query: Query): Reply {
  const checked = readReport(sim.state, query);
  if ('code' in checked) return checked;
  const { amountKobo, senderNumber } = checked;
  const digit = senderNumber.at(-1);
  const order: SandboxAirtimeCashOrder = {
    ...checked,
    receivedKobo: digit === '3' ? amountKobo / 2n : amountKobo,
    creditKobo: 0n,
    status: 'Pending',
    arrivesOnQuery: digit === '2',
    createdAt: sim.clock.now(),
    completedAt: null,
    callbacksDelivered: 0,
  };
  sim.state.orders.set(order.ref, order);
  if (digit !== '1' && digit !== '2') {
    complete(sim, order);
    callBack(sim, order, order.webhookUrl);
  }
  return ok(transactionJson(order));
}

/** A report's fields, or the error that refuses it (in the provider's order of checks). */
function readReport(state: SandboxAirtimeCashState, query: Query): Report | Reply {
  const network = networkOf(query.network);
  if (network === null) return error(103, 'Invalid Network. Use mtn, airtel, glo or 9mobile');
  if (state.unavailable.has(network)) return unavailable(network);
  const ref = query.ref ?? '';
  if (!refPattern.test(ref)) return missing('ref');
  const sender = query.sender?.trim() ?? '';
  if (sender === '' || sender.length > senderLengthMax) return missing('sender');
  const senderNumber = query.sendernumber ?? '';
  if (!localPhonePattern.test(senderNumber)) return error(106, 'Invalid Sender Phone Number');
  const amountText = query.amount ?? '';
  const amount = /^\d{1,6}$/.test(amountText) ? Number(amountText) : Number.NaN;
  if (!(amount >= amountNairaMin && amount <= amountNairaMax)) {
    return error(105, `Invalid Amount. Amount Must Be Between ${amountNairaMin} And ${amountNairaMax} Naira`);
  }
  const sitePhone = query.sitephone ?? '';
  if (sitePhone === '') return missing('sitephone');
  if (sitePhone !== state.lines[network]) {
    return error(
      107,
      `Wrong Site Phone Number. Kindly Transfer To ${state.lines[network]} As Given By The Verification`,
    );
  }
  const webhookUrl = query.webhookURL ?? null;
  if (webhookUrl !== null && !isWebhookUrl(webhookUrl)) return missing('webhookURL');
  if (state.orders.has(ref)) return error(108, 'Duplicate Transaction Reference');
  return { network, ref, sender, senderNumber, amountKobo: BigInt(amount) * 100n, sitePhone, webhookUrl };
}

/** The status query: the transaction as it stands, and its callback again once it is Completed. */
function resend(sim: AirtimeCashSimulator, query: Query): Reply {
  const ref = query.ref ?? '';
  if (!refPattern.test(ref)) return missing('ref');
  const webhookUrl = query.webhookURL ?? null;
  if (webhookUrl !== null && !isWebhookUrl(webhookUrl)) return missing('webhookURL');
  const order = sim.state.orders.get(ref);
  if (order === undefined) return error(109, 'Transaction Not Found');
  if (order.status === 'Pending' && order.arrivesOnQuery) complete(sim, order);
  if (order.status === 'Completed') callBack(sim, order, webhookUrl ?? order.webhookUrl);
  return ok(transactionJson(order));
}

function complete(sim: AirtimeCashSimulator, order: SandboxAirtimeCashOrder): void {
  order.status = 'Completed';
  order.completedAt = sim.clock.now();
  order.creditKobo = (order.receivedKobo * BigInt(sim.state.creditPercent[order.network])) / 100n;
  sim.state.balanceKobo += order.creditKobo;
}

/** Sends the order's callback, fire and forget, with state.callbackRetryDelaysMs between attempts. */
function callBack(sim: AirtimeCashSimulator, order: SandboxAirtimeCashOrder, url: string | null): void {
  if (url === null || sim.callbacks.closed) return;
  const body = JSON.stringify({
    ref: order.ref,
    service: 'Airtime2Cash',
    network: order.network,
    amount: nairaAmount(order.receivedKobo),
    status: 'Completed',
  });
  // After the answer that caused it, as a provider's queue would send it.
  deliverLater(sim, { order, url, body }, 0, 0);
}

type Callback = { order: SandboxAirtimeCashOrder; url: string; body: string };

function deliverLater(sim: AirtimeCashSimulator, callback: Callback, attempt: number, delayMs: number): void {
  const { timers } = sim.callbacks;
  const timer = setTimeout(() => {
    timers.delete(timer);
    void deliver(sim, callback, attempt);
  }, delayMs);
  // A pending callback never keeps the process alive.
  timer.unref();
  timers.add(timer);
}

/** One attempt; a failed one is tried again after the next delay, while there is one. */
async function deliver(sim: AirtimeCashSimulator, callback: Callback, attempt: number): Promise<void> {
  const { callbacks, state } = sim;
  if (callbacks.closed) return;
  const controller = new AbortController();
  callbacks.inFlight.add(controller);
  let delivered = false;
  try {
    const response = await fetch(callback.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: callback.body,
      redirect: 'manual',
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(state.callbackTimeoutMs)]),
    });
    await response.arrayBuffer().catch(() => undefined);
    delivered = response.status >= 200 && response.status < 300;
  } catch {
    delivered = false;
  } finally {
    callbacks.inFlight.delete(controller);
  }
  if (delivered) {
    callback.order.callbacksDelivered += 1;
    return;
  }
  const delayMs = state.callbackRetryDelaysMs[attempt];
  if (delayMs !== undefined && !callbacks.closed) deliverLater(sim, callback, attempt + 1, delayMs);
}

function unavailable(network: SandboxAirtimeCashNetwork): Reply {
  return error(104, `${networkNames[network]} Airtime To Cash Service Is Not Available At The Moment`);
}

function transactionJson(order: SandboxAirtimeCashOrder): Record<string, string> {
  return {
    Status: order.status,
    ref: order.ref,
    service: 'Airtime2Cash',
    network: order.network,
    amount: nairaAmount(order.status === 'Completed' ? order.receivedKobo : order.amountKobo),
    credit: nairaText(order.creditKobo),
    message:
      order.status === 'Completed'
        ? `Airtime Received. N${nairaText(order.creditKobo)} Has Been Credited To Your Wallet`
        : 'Transaction Is Being Processed. Your Wallet Will Be Credited Once The Airtime Is Received',
  };
}

function ok(description: Record<string, string>): Reply {
  return { code: 101, description };
}

function error(code: number, message: string): Reply {
  return { code, description: { message } };
}

function missing(name: string): Reply {
  return error(110, `Missing Or Invalid Parameter: ${name}`);
}

function networkOf(value: string | undefined): SandboxAirtimeCashNetwork | null {
  const lower = value?.trim().toLowerCase();
  return networks.find((network) => network === lower) ?? null;
}

function isWebhookUrl(text: string): boolean {
  if (text.length > webhookUrlLengthMax) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Naira as the provider writes an amount: whole naira, or with two decimals when it is not whole. */
function nairaAmount(kobo: bigint): string {
  return kobo % 100n === 0n ? String(kobo / 100n) : nairaText(kobo);
}

/** Naira with two decimals, as the provider writes balances and credits. */
function nairaText(kobo: bigint): string {
  const negative = kobo < 0n;
  const abs = negative ? -kobo : kobo;
  return `${negative ? '-' : ''}${abs / 100n}.${(abs % 100n).toString().padStart(2, '0')}`;
}

/** Only single-valued parameters count; a repeated one is as good as absent. */
function asQuery(query: unknown): Query {
  if (typeof query !== 'object' || query === null) return {};
  const fields: Query = {};
  for (const [name, value] of Object.entries(query as Record<string, unknown>)) {
    if (typeof value === 'string') fields[name] = value;
  }
  return fields;
}

function keyMatches(given: string | undefined): boolean {
  return sameSecret(given, SANDBOX_AIRTIME_CASH_API_KEY);
}
