import { createHmac, randomInt, randomUUID } from 'node:crypto';
import type autocannon from 'autocannon';
import type { Kysely } from 'kysely';
import { newReferralCode } from '../src/auth/secrets.ts';
import { type Config, loadConfig } from '../src/config.ts';
import { type Context, type ContextOverrides, createContext } from '../src/context.ts';
import type { DB } from '../src/db/schema.ts';
import { newId } from '../src/ids.ts';
import { openUserAccounts } from '../src/ledger/accounts.ts';
import { toE164 } from '../src/phone.ts';
import { type ScenarioUsage, startUsage } from './usage.ts';

// push-worker.ts reads its own peak with these.
export { peakRssMb, resetPeakRss } from './usage.ts';

// What the bench's scenarios share: a client of the service's API over HTTP (sign-in through the
// sandbox SMS, operations, signed webhooks), the result shape, the measuring of a scenario, and the
// writing of users in bulk straight into the service's database.

export const REQUEST_TIMEOUT_SECONDS = 10;
export const SETUP_CONCURRENCY = 10;
export const CONNECTIONS = 50;

/**
 * The CBN tier limits (API.md 17.2, decision 0044) every service and context of the bench runs with:
 * Tier 1's daily limit and maximum balance raised to ₦100,000,000. With the CBN defaults a Tier-1
 * buyer funded with ₦1,000,000 (buyAirtime, createBulkOrder, purchase-cpu) would have ₦700,000 of it
 * held over the ₦300,000 maximum, and be refused LIMIT_EXCEEDED after ₦50,000 of purchases in a day,
 * so the checks that the wallets hold what was funded less what was bought would fail or measure
 * refusals.
 * Figures, not `none`: every debit still reads, judges and counts the day's sum under the wallet's
 * lock, and every credit is judged against the maximum, so the limits' cost stays in what is measured.
 * The other tiers keep the CBN figures, which no scenario's amounts reach.
 */
export const BENCH_LIMITS: Readonly<Record<string, string>> = {
  LIMIT_TIER1_DAILY: '100000000',
  LIMIT_TIER1_BALANCE: '100000000',
};

/**
 * BENCH_DURATION, when set: the seconds every load lasts instead of its own, so that a quick check
 * of the bench itself (with BENCH_SCENARIOS) need not take the full bench's minutes.
 */
export function durationOverrideSeconds(): number | null {
  const override = process.env.BENCH_DURATION;
  if (override === undefined || override === '') return null;
  const seconds = Number(override);
  if (!Number.isInteger(seconds) || seconds < 1)
    throw new Error(`BENCH_DURATION must be a whole number of seconds ≥ 1, not ${override}`);
  return seconds;
}

/** A scenario's load duration in seconds: its own, unless BENCH_DURATION says otherwise. */
export function loadSeconds(ownSeconds: number): number {
  return durationOverrideSeconds() ?? ownSeconds;
}

export const WEBHOOK_PATH = '/api/public/payments/webhook/payment';
// The service is started with the caller's environment, so it signs with the same secret.
const PAYMENT_SIGNING_SECRET = process.env.PAYMENT_SIGNING_SECRET ?? 'sk_test_sandbox';

export type ScenarioResult = {
  database: string;
  scenario: string;
  measures: string;
  requestsPerSecond: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** Peak resident set of the server process during the scenario (VmHWM), in MiB. */
  serverPeakRssMb: number | null;
  /**
   * CPU and memory of the service (and PostgreSQL) over the scenario, for the report's per-request
   * costs; absent on results written before it was measured.
   */
  usage?: ScenarioUsage;
};

/** What the bench verified after a scenario; `ok: false` fails the run. */
export type Check = { name: string; ok: boolean; detail: string };

export type Server = {
  baseUrl: string;
  pid: number;
  /** The service's PostgreSQL database, whose backends' CPU the scenarios measure; null on PGlite. */
  postgresDatabase: string | null;
  output(): string;
  stop(): Promise<void>;
};

let phoneSequence = randomInt(0, 50_000_000);

/** A new valid Nigerian number (080 + 8 digits) on every call. */
export function nextPhone(): string {
  phoneSequence = (phoneSequence + 1) % 100_000_000;
  return `080${String(phoneSequence).padStart(8, '0')}`;
}

const USERS_PER_STATEMENT = 1_000;

/**
 * A context of the bench's own on the service's database (`env` names it: DATA_DIR, DATABASE_URL),
 * sandbox on, with no job workers unless `worker`. On PGlite the service must not be running.
 */
export async function benchContext(
  env: Record<string, string>,
  { worker = false, overrides = {} }: { worker?: boolean; overrides?: ContextOverrides } = {},
): Promise<Context> {
  return createContext(benchConfig(env, worker), overrides);
}

/** The configuration of a bench context: the sandbox on, the bench's limits, the job workers only if `worker`. */
export function benchConfig(env: Record<string, string>, worker = false): Config {
  return loadConfig({
    NODE_ENV: 'development',
    SANDBOX: '1',
    WORKER: worker ? '1' : '0',
    LOG_LEVEL: 'warn',
    ...BENCH_LIMITS,
    ...env,
  });
}

/**
 * `count` new users written in bulk straight into the database, each with its ledger accounts opened
 * as a first sign-in opens them; any of them can sign in over the API with its phone (local form).
 */
export async function insertUsers(
  db: Kysely<DB>,
  count: number,
  now: Date,
): Promise<{ id: string; phone: string }[]> {
  const users = Array.from({ length: count }, () => ({ id: newId(), phone: nextPhone() }));
  for (let from = 0; from < count; from += USERS_PER_STATEMENT) {
    await db
      .insertInto('users')
      .values(
        users.slice(from, from + USERS_PER_STATEMENT).map(({ id, phone }) => ({
          id,
          phone: toE164(phone)!,
          email: null,
          first_name: null,
          last_name: null,
          referral_code: newReferralCode(),
          referred_by_code: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();
  }
  await mapConcurrent(users, SETUP_CONCURRENCY, (user) => openUserAccounts(db, user.id, now));
  return users;
}

export type Envelope = { success: boolean; data?: unknown; error?: { code: string; message: string } };

export async function postOperation(
  baseUrl: string,
  operation: string,
  data: object,
  token?: string,
): Promise<Envelope> {
  const response = await fetch(`${baseUrl}/_serverFn/${operation}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    },
    body: JSON.stringify({ data }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  const body = (await response.json()) as Envelope;
  if (response.status !== 200 || !body.success)
    throw new Error(`${operation} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

export async function getOperation(baseUrl: string, operation: string, token: string): Promise<Envelope> {
  const response = await fetch(`${baseUrl}/_serverFn/${operation}`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  const body = (await response.json()) as Envelope;
  if (response.status !== 200 || !body.success)
    throw new Error(`${operation} answered ${response.status}: ${JSON.stringify(body)}`);
  return body;
}

export async function readOtp(baseUrl: string, phone: string): Promise<string | null> {
  const response = await fetch(`${baseUrl}/__sandbox/sms?phone=${encodeURIComponent(phone)}`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  if (response.status === 404) return null;
  const body = (await response.json()) as { success: boolean; data?: { code: string | null } };
  return body.data?.code ?? null;
}

/**
 * requestOtp, the code from the sandbox SMS (at sandboxUrl when the sandbox is a process of its own),
 * verifyOtp: the access token.
 */
export async function signIn(baseUrl: string, phone: string, sandboxUrl = baseUrl): Promise<string> {
  await postOperation(baseUrl, 'requestOtp', { phone });
  const code = await readOtp(sandboxUrl, phone);
  if (code === null) throw new Error(`no SMS for ${phone}`);
  const session = await postOperation(baseUrl, 'verifyOtp', { phone, code });
  return (session.data as { accessToken: string }).accessToken;
}

/** The wallet balance in naira, as the client sees it. */
export async function balanceNaira(baseUrl: string, token: string): Promise<number> {
  return ((await getOperation(baseUrl, 'getWallet', token)).data as { balance: number }).balance;
}

/**
 * Funds the user's wallet as a client does: a top-up intent, then the provider's signed
 * charge.success for it (`sequence`, the event id, distinct per body). The credit lands once the
 * service has processed the stored event: wait for it with eventually().
 */
export async function fundWallet(
  baseUrl: string,
  token: string,
  naira: number,
  sequence: number,
): Promise<void> {
  const intent = await postOperation(baseUrl, 'createTopupIntent', { amount: naira }, token);
  const { reference } = intent.data as { reference: string };
  const status = await deliver(baseUrl, signedChargeSuccess(sequence, reference, naira * 100));
  if (status !== 200) throw new Error(`the funding webhook answered ${status}`);
}

/** Waits (polling, with a deadline) until the condition holds; the bench's own setup only. */
export async function eventually(
  what: string,
  condition: () => Promise<boolean>,
  state: () => string = () => '',
  timeoutMs = 60_000,
): Promise<true> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s ${state()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return true;
}

/** Runs fn over items with at most `concurrency` at a time; results in input order. */
export async function mapConcurrent<T, R>(
  items: T[],
  concurrency: number,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await fn(items[index] as T);
      }
    }),
  );
  return results;
}

export function fromAutocannon(
  database: string,
  scenario: string,
  measures: string,
  result: autocannon.Result,
  usage: ScenarioUsage,
): ScenarioResult {
  return {
    database,
    scenario,
    measures,
    requestsPerSecond: Math.round(result.requests.average),
    latencyP50Ms: result.latency.p50,
    latencyP99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    serverPeakRssMb: usage.serverPeakRssMb,
    usage,
  };
}

/**
 * Runs a scenario's load and answers what it cost the service (and PostgreSQL). Where the reset is
 * not allowed, VmHWM is the peak since the process started: still an upper bound.
 */
export async function measured<T>(
  server: Pick<Server, 'pid' | 'postgresDatabase'>,
  run: () => Promise<T>,
): Promise<{ value: T; usage: ScenarioUsage }> {
  const usage = startUsage(server.pid, server.postgresDatabase);
  try {
    const value = await run();
    return { value, usage: usage.stop() };
  } catch (error) {
    usage.stop();
    throw error;
  }
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return Math.round((sorted[Math.max(0, index)] ?? 0) * 10) / 10;
}

export type SignedBody = { body: string; signature: string; reference: string };

/** A Paystack-shaped charge.success event, signed as the provider signs it. */
export function signedChargeSuccess(sequence: number, reference: string, amountKobo: number): SignedBody {
  const body = JSON.stringify({
    event: 'charge.success',
    data: {
      id: sequence,
      domain: 'test',
      status: 'success',
      reference,
      amount: amountKobo,
      currency: 'NGN',
      channel: 'card',
      gateway_response: 'Successful',
      paid_at: new Date().toISOString(),
      customer: { email: `bench-${sequence}@example.invalid` },
    },
  });
  return {
    body,
    signature: createHmac('sha512', PAYMENT_SIGNING_SECRET).update(body).digest('hex'),
    reference,
  };
}

export async function deliver(baseUrl: string, signed: SignedBody): Promise<number> {
  const response = await fetch(`${baseUrl}${WEBHOOK_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-payment-signature': signed.signature },
    body: signed.body,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
  });
  await response.arrayBuffer();
  return response.status;
}
