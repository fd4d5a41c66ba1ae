import { randomUUID } from 'node:crypto';
import autocannon from 'autocannon';
import {
  balanceNaira,
  CONNECTIONS,
  eventually,
  fromAutocannon,
  fundWallet,
  getOperation,
  loadSeconds,
  mapConcurrent,
  measured,
  nextPhone,
  percentile,
  postOperation,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
  SETUP_CONCURRENCY,
  type Server,
  signIn,
} from './common.ts';
import type { ScenarioUsage } from './usage.ts';

// buyAirtime under load (issue 5): BUYERS users, each at KYC Tier 1 with a PIN and a wallet funded
// by a signed charge.success, buy ₦100 of MTN airtime for numbers that the sandbox delivers at once,
// at 50 connections (one buyer per connection), each request with its own Idempotency-Key. The
// sandbox bills provider's float is set high first, so no just-in-time top-up runs during it.
//
// Afterwards every purchase is read back through listMyVtuTransactions: the time from acceptance
// (createdAt) to success (updatedAt, when it was settled) is the latency a user polling the
// transaction sees, and the bench checks that every accepted purchase succeeded, that the wallets
// hold exactly what was funded less what was bought, and that adminLedgerCheck is ok.

const BUYERS = 50;
const PIN = '2580';
const FUND_NAIRA = 1_000_000;
const AIRTIME_NAIRA = 100;
const DURATION_SECONDS = loadSeconds(10);
/** The sandbox bills float, in naira: more than any run buys. */
const BILLS_FLOAT_NAIRA = 100_000_000;
const SETTLE_TIMEOUT_MS = 60_000;
/** How long the purchases get to settle by themselves before adminReconcile is asked to requery. */
const SETTLE_WAIT_MS = 15_000;
const PAGE = 100;

/**
 * Where buyAirtime runs: one service process with the sandbox inside (the default), or several API
 * processes and a standalone sandbox (bench/purchases-cluster.ts). Setup goes to server.baseUrl.
 */
export type PurchaseTopology = {
  /** The label of the result row. */
  scenario: string;
  /** Where the load goes: the connections are split evenly between them. */
  loadUrls: string[];
  /** Where /__sandbox/ answers: the sign-in codes, the providers' float. */
  sandboxUrl: string;
  /** Runs the load and answers what it cost the service's processes (and PostgreSQL). */
  measure: <T>(run: () => Promise<T>) => Promise<{ value: T; usage: ScenarioUsage }>;
  /** Said after the row's measures (the processes, K). */
  describe: string;
};

const oneProcess = (server: Server): PurchaseTopology => ({
  scenario: 'buyAirtime',
  loadUrls: [server.baseUrl],
  sandboxUrl: server.baseUrl,
  measure: (run) => measured(server, run),
  describe: '',
});

export type PurchaseRun = {
  result: ScenarioResult;
  /** Acceptance to success, server clock, over every purchase of the run. */
  acceptedToSuccess: { purchases: number; p50Ms: number; p99Ms: number; maxMs: number };
  checks: { name: string; ok: boolean; detail: string }[];
};

type Purchase = { status: string; amount: number; createdAt: string; updatedAt: string };

/** An MTN number (0803…) whose last digit the sandbox delivers at once (not 1–4). */
const deliveredAtOnce = (i: number): string => `0803${String(i % 1_000_000).padStart(6, '0')}${5 + (i % 5)}`;

async function buyer(server: Server, sandboxUrl: string, sequence: number): Promise<string> {
  const token = await signIn(server.baseUrl, nextPhone(), sandboxUrl);
  await postOperation(server.baseUrl, 'submitKycTier1', { livenessToken: 'sandbox-pass' }, token);
  await postOperation(server.baseUrl, 'setTransactionPin', { pin: PIN }, token);
  await fundWallet(server.baseUrl, token, FUND_NAIRA, sequence);
  return token;
}

/** Runs fn; a failure carries the service's last log lines, which say why. */
async function withServiceOutput<T>(server: Server, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw new Error(`${(error as Error).message}\nservice output:\n${server.output()}`);
  }
}

async function purchasesOf(server: Server, token: string): Promise<Purchase[]> {
  const all: Purchase[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const response = await fetch(
      `${server.baseUrl}/_serverFn/listMyVtuTransactions?limit=${PAGE}&offset=${offset}`,
      {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
      },
    );
    const body = (await response.json()) as { data: { items: Purchase[]; total: number } };
    all.push(...body.data.items);
    if (offset + PAGE >= body.data.total) return all;
  }
}

export async function buyAirtimeScenario(
  server: Server,
  database: string,
  adminToken: string,
  topology: PurchaseTopology = oneProcess(server),
): Promise<PurchaseRun> {
  const tokens = await mapConcurrent(
    Array.from({ length: BUYERS }, (_, i) => i),
    SETUP_CONCURRENCY,
    (i) => buyer(server, topology.sandboxUrl, 1_000_000 + i),
  );
  await eventually('the buyers’ wallets funded', async () =>
    (await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(server.baseUrl, t))).every(
      (b) => b >= FUND_NAIRA,
    ),
  );
  const float = await fetch(`${topology.sandboxUrl}/__sandbox/providers/bills/balance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: BILLS_FLOAT_NAIRA }),
  });
  if (float.status !== 200) throw new Error(`setting the bills float answered ${float.status}`);

  let sequence = 0;
  let nextToken = 0;
  const { value, usage } = await topology.measure(() =>
    autocannon({
      // autocannon opens connection i to loadUrls[i % n].
      url: topology.loadUrls,
      connections: CONNECTIONS,
      duration: DURATION_SECONDS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      // One buyer per connection, handed out round-robin.
      setupClient: (client) => {
        client.setHeaders({
          authorization: `Bearer ${tokens[nextToken++ % tokens.length]}`,
          'content-type': 'application/json',
        });
      },
      requests: [
        {
          method: 'POST',
          path: '/_serverFn/buyAirtime',
          setupRequest: (request) => ({
            ...request,
            headers: { ...request.headers, 'idempotency-key': randomUUID() },
            body: JSON.stringify({
              data: { network: 'mtn', phone: deliveredAtOnce(sequence++), amount: AIRTIME_NAIRA, pin: PIN },
            }),
          }),
        },
      ],
    }),
  );
  const result = fromAutocannon(
    database,
    topology.scenario,
    `POST, ₦${AIRTIME_NAIRA} MTN, ${BUYERS} Tier-1 buyers, ${CONNECTIONS} conns, ${DURATION_SECONDS}s${topology.describe}`,
    value,
    usage,
  );

  // Every accepted purchase leaves processing (the instant provider answers at once).
  const accepted = value['2xx'];
  let purchases: Purchase[] = [];
  const settled = async () => {
    purchases = (await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => purchasesOf(server, t))).flat();
    return purchases.length >= accepted && purchases.every((p) => p.status !== 'processing');
  };
  const state = () => {
    const byStatus = Object.entries(Object.groupBy(purchases, (p) => p.status)).map(
      ([k, v]) => `${k} ${v?.length}`,
    );
    return `(${accepted} accepted; recorded: ${byStatus.join(', ')})`;
  };
  // A purchase whose answer was lost (a dropped connection, say) is unknown: it stays processing
  // until its requery, a minute later. After a short wait, operations' adminReconcile requeries it now.
  let reconciled = 0;
  await withServiceOutput(server, async () => {
    if (await eventually('every purchase settled', settled, state, SETTLE_WAIT_MS).catch(() => false)) return;
    reconciled = purchases.filter((p) => p.status === 'processing').length;
    process.stdout.write(
      `${database}: ${reconciled} purchases still processing; the service said:\n${server.output()}\n`,
    );
    await postOperation(server.baseUrl, 'adminReconcile', {}, adminToken);
    await eventually('every purchase settled after adminReconcile', settled, state, SETTLE_TIMEOUT_MS);
  });
  const latencies = purchases
    .filter((p) => p.status === 'success')
    .map((p) => Date.parse(p.updatedAt) - Date.parse(p.createdAt))
    .sort((a, b) => a - b);

  const checks: PurchaseRun['checks'] = [];
  const succeeded = purchases.filter((p) => p.status === 'success').length;
  // Requests in flight when the load generator stopped may be recorded without an answer it counted.
  checks.push({
    name: 'every accepted purchase succeeded',
    ok:
      purchases.length >= accepted &&
      purchases.length <= accepted + CONNECTIONS &&
      succeeded === purchases.length,
    detail: `${accepted} accepted (2xx), ${purchases.length} recorded, ${succeeded} success, ${reconciled} settled by adminReconcile after their answer was lost`,
  });
  const balances = await mapConcurrent(tokens, SETUP_CONCURRENCY, (t) => balanceNaira(server.baseUrl, t));
  const held = balances.reduce((a, b) => a + b, 0);
  const expected = BUYERS * FUND_NAIRA - purchases.reduce((sum, p) => sum + p.amount, 0);
  checks.push({
    name: 'wallets hold what was funded less what was bought',
    ok: held === expected,
    detail: `₦${held}, expected ₦${expected}`,
  });
  const ledger = (await getOperation(server.baseUrl, 'adminLedgerCheck', adminToken)).data as {
    ok: boolean;
    imbalances: unknown[];
  };
  checks.push({
    name: 'adminLedgerCheck after purchases',
    ok: ledger.ok,
    detail: `ok ${ledger.ok}, ${ledger.imbalances.length} imbalances`,
  });
  return {
    result,
    acceptedToSuccess: {
      purchases: latencies.length,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      maxMs: latencies.at(-1) ?? 0,
    },
    checks,
  };
}
