import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import {
  balanceNaira,
  type Check,
  eventually,
  fromAutocannon,
  fundWallet,
  getOperation,
  loadSeconds,
  mapConcurrent,
  measured,
  nextPhone,
  postOperation,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  signIn,
} from './common.ts';

// createBulkOrder under load (issue 28): BUYERS users at KYC Tier 1 with a PIN and a funded wallet
// each place orders of LINES lines of ₦AIRTIME_NAIRA MTN airtime for numbers the sandbox delivers at
// once, at CONNECTIONS connections (one buyer per connection), each order with its own
// Idempotency-Key. An order is accepted whole in one transaction and its lines are then sent one
// by one, so the measures are orders per second, lines per second (orders × LINES) and the latency
// of an order's acceptance; the sends go on behind it, bounded by the service's sends.
//
// Afterwards, once every line has its outcome: each buyer's orders (listBulkOrders) are completed
// with every line delivered, the wallets hold exactly what was funded less LINES × ₦AIRTIME_NAIRA per
// order recorded, and adminLedgerCheck is ok. Any answer but 200 fails the run.

const BUYERS = 20;
const CONNECTIONS = 10;
const LINES = 100;
const PIN = '2580';
const FUND_NAIRA = 1_000_000;
const AIRTIME_NAIRA = 100;
const DURATION_SECONDS = loadSeconds(10);
/** Funding events of these buyers carry event ids from here (transfers' 3,000,000). */
const FUNDING_SEQUENCE_FROM = 4_000_000;
/** The sandbox bills float, in naira: more than any run buys. */
const BILLS_FLOAT_NAIRA = 100_000_000;
const SETTLE_TIMEOUT_MS = 120_000;

export const bulkOrderSettings = { buyers: BUYERS, connections: CONNECTIONS, lines: LINES };

/** An MTN number (0803…) whose last digit the sandbox delivers at once (not 1–4). */
const deliveredAtOnce = (i: number): string => `0803${String(i % 1_000_000).padStart(6, '0')}${5 + (i % 5)}`;

async function buyer(server: Server, sequence: number): Promise<string> {
  const token = await signIn(server.baseUrl, nextPhone());
  await postOperation(server.baseUrl, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, token);
  await postOperation(server.baseUrl, 'setTransactionPin', { pin: PIN }, token);
  await fundWallet(server.baseUrl, token, FUND_NAIRA, sequence);
  return token;
}

type Order = { status: string; counts: { processing: number; success: number; failed: number } };

/** A buyer's orders (at most 100 of them: more than a run places per buyer). */
async function ordersOf(server: Server, token: string): Promise<{ items: Order[]; total: number }> {
  return (await getOperation(server.baseUrl, 'listBulkOrders?limit=100', token)).data as {
    items: Order[];
    total: number;
  };
}

const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

export async function bulkOrderScenario(
  server: Server,
  database: string,
  adminToken: string,
): Promise<{ result: ScenarioResult; linesPerSecond: number; checks: Check[] }> {
  const tokens = await mapConcurrent(
    Array.from({ length: BUYERS }, (_, i) => i),
    SETUP_CONCURRENCY,
    (i) => buyer(server, FUNDING_SEQUENCE_FROM + i),
  );
  await eventually('the bulk buyers’ wallets funded', async () =>
    (await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(server.baseUrl, t))).every(
      (b) => b >= FUND_NAIRA,
    ),
  );
  const float = await fetch(`${server.baseUrl}/__sandbox/providers/bills/balance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: BILLS_FLOAT_NAIRA }),
  });
  if (float.status !== 200) throw new Error(`setting the bills float answered ${float.status}`);

  let sequence = 0;
  let nextToken = 0;
  const refusals: string[] = [];
  const orderBody = () =>
    JSON.stringify({
      data: {
        service: 'airtime',
        lines: Array.from({ length: LINES }, () => ({
          network: 'mtn',
          phone: deliveredAtOnce(sequence++),
          amount: AIRTIME_NAIRA,
        })),
        total: LINES * AIRTIME_NAIRA,
        pin: PIN,
      },
    });
  const { value, usage } = await measured(server, () =>
    autocannon({
      url: server.baseUrl,
      connections: CONNECTIONS,
      duration: DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      setupClient: (client) => {
        client.setHeaders({
          authorization: `Bearer ${tokens[nextToken++ % tokens.length]}`,
          'content-type': 'application/json',
        });
      },
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/createBulkOrder',
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, 'idempotency-key': randomUUID() },
            body: orderBody(),
          }),
          onResponse: (status, body) => {
            if (status !== 200 && refusals.length < 5) refusals.push(`${status} ${body.slice(0, 300)}`);
          },
        },
      ],
    }),
  );
  const result = fromAutocannon(
    database,
    'createBulkOrder',
    `POST, ${LINES} lines of ₦${AIRTIME_NAIRA} airtime per order, ${BUYERS} buyers, ${CONNECTIONS} conns, ${DURATION_SECONDS}s`,
    value,
    usage,
  );
  const linesPerSecond = result.requestsPerSecond * LINES;

  const checks: Check[] = [];
  const statuses = Object.entries(value.statusCodeStats)
    .map(([status, { count }]) => `${count} × ${status}`)
    .join(', ');
  checks.push({
    name: 'every bulk order answered 200',
    ok: value.non2xx === 0 && value.errors === 0 && value.timeouts === 0,
    detail: `${statuses}; ${value.errors} errors, ${value.timeouts} timeouts${refusals.length > 0 ? `; first: ${refusals.join(' | ')}` : ''}`,
  });

  // Orders answered late (in flight when the load stopped) still commit; then every line is sent.
  let orders: Order[] = [];
  let recorded = 0;
  const settled = await eventually(
    'every bulk order completed',
    async () => {
      const pages = await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => ordersOf(server, t));
      orders = pages.flatMap((page) => page.items);
      recorded = sum(pages.map((page) => page.total));
      return orders.every((order) => order.status === 'completed');
    },
    () => `(${orders.filter((o) => o.status !== 'completed').length} of ${orders.length} still processing)`,
    SETTLE_TIMEOUT_MS,
  ).catch((error: unknown) => (error as Error).message);
  const delivered = sum(orders.map((order) => order.counts.success));
  checks.push({
    name: 'every line of every bulk order delivered',
    ok: settled === true && delivered === recorded * LINES && recorded >= value['2xx'],
    detail: `${recorded} orders recorded (${value['2xx']} answered 200), ${delivered} of ${recorded * LINES} lines delivered${settled === true ? '' : `; ${settled}`}`,
  });
  const held = sum(await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(server.baseUrl, t)));
  const expected = BUYERS * FUND_NAIRA - recorded * LINES * AIRTIME_NAIRA;
  checks.push({
    name: 'each bulk order charged its lines exactly once',
    ok: held === expected,
    detail: `the buyers hold ₦${held} (expected ₦${expected})`,
  });
  const ledger = (await getOperation(server.baseUrl, 'adminLedgerCheck', adminToken)).data as {
    ok: boolean;
    entries: number;
    imbalances: unknown[];
  };
  checks.push({
    name: 'adminLedgerCheck after bulk orders',
    ok: ledger.ok,
    detail: `ok ${ledger.ok}, ${ledger.entries} entries, ${ledger.imbalances.length} imbalances`,
  });
  return { result, linesPerSecond, checks };
}
