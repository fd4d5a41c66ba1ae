import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { isNairaAmount, nairaToKobo } from './money.ts';
import { productionSecretNames, secretProblem, secretSource } from './secret-rules.ts';

// The only place that reads process.env. Everything else receives the parsed Config. Config is
// written once: `configSchema` reads each variable (its bounds, its default, its own parsing) and its
// transform gives the nested Config, whose type is the schema's output.

const SANDBOX_SIGNING_SECRET = 'sk_test_sandbox';
const SANDBOX_PEPPER = 'sandbox-pepper-not-for-production';

const booleanFlag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();
/** A base URL that paths are appended to: its trailing slashes dropped. */
const trimmedUrl = z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, ''));
const percentPattern = /^\d{1,3}(\.\d{1,2})?$/;

/** The 30 s bound Fastify puts on a request (app.ts): a call made while a client waits stays under it. */
const requestBoundMs = 25_000;

/** A timeout in milliseconds: at least 100, at most `maxMs`, `defaultMs` when unset. */
function timeoutMs(defaultMs: number, maxMs = 60_000) {
  return z.coerce.number().int().min(100).max(maxMs).default(defaultMs);
}

/** A comma-separated list, each entry trimmed, empty entries dropped. */
function list(text: string): string[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
}

/**
 * An origin as a browser sends it in the Origin header: compared as text, so `https://app.example.com/`
 * or an upper-case host would never match and would leave a front end refused with no clue why.
 */
function isOrigin(text: string): boolean {
  if (!/^https?:\/\//.test(text)) return false;
  try {
    return new URL(text).origin === text;
  } catch {
    return false;
  }
}

/** Basis points of a percent written with at most two decimals ('2.55' → 255n), without a float. */
function basisPoints(percent: string): bigint {
  const [whole = '0', fraction = ''] = percent.split('.');
  return BigInt(whole) * 100n + BigInt(fraction.padEnd(2, '0'));
}

/** A naira amount setting: positive, at most two decimals, at most ₦1,000,000,000. */
const nairaSetting = z.coerce
  .number()
  .positive()
  .max(1_000_000_000)
  .refine(isNairaAmount, { message: 'naira with at most two decimals' });
/** A naira amount setting read into kobo, `defaultNaira` when unset. */
function kobo(defaultNaira: number) {
  return nairaSetting.default(defaultNaira).transform(nairaToKobo);
}
/**
 * A CBN tier limit (API.md 17.2): naira read into kobo, or `none` for no limit (null), the CBN figure
 * when unset.
 */
function tierLimit(defaultNaira: number | 'none') {
  return z
    .union([z.literal('none'), nairaSetting])
    .default(defaultNaira)
    .transform((value) => (value === 'none' ? null : nairaToKobo(value)));
}
/** A whole-naira setting (already bounded by its schema) in kobo. */
function wholeNairaToKobo(naira: number): bigint {
  return BigInt(naira) * 100n;
}

/** Thresholds on the total ever locked, kobo: each once, none zero, ascending. */
function milestonesKobo(text: string): bigint[] {
  return [...new Set(text.split(',').map((naira) => BigInt(naira) * 100n))]
    .filter((amount) => amount > 0n)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** `network=number` pairs (already matched by their pattern) as a record. */
function networkNumbers(text: string): Record<string, number> {
  return Object.fromEntries(
    list(text).map((pair) => {
      const [network = '', value = ''] = pair.split('=');
      return [network, Number(value)];
    }),
  );
}

type Network = 'mtn' | 'glo' | 'airtel' | '9mobile';
/** The airtime-to-cash payout per network in basis points: 80% unless AIRTIME_TO_CASH_RATES says. */
function payoutRates(text: string): Record<Network, number> {
  const percents = networkNumbers(text);
  const rateBp = { mtn: 8000, glo: 8000, airtel: 8000, '9mobile': 8000 };
  for (const [network, percent] of Object.entries(percents)) rateBp[network as Network] = percent * 100;
  return rateBp;
}

const fundingAccountPattern = /^(\d{3,6}):(\d{10}):(.{1,100})$/;
const fundingAccountHint = 'bankCode:accountNumber:Account Name, such as 058:0123456789:Vendor Ltd';
export type FundingAccount = { bankCode: string; accountNumber: string; accountName: string };
/** A provider's bank account, bankCode:accountNumber:Account Name (the name may hold colons). */
function fundingAccountOf(text: string): FundingAccount {
  const [, bankCode = '', accountNumber = '', accountName = ''] = fundingAccountPattern.exec(text) ?? [];
  return { bankCode, accountNumber, accountName };
}
const fundingAccount = z
  .string()
  .regex(fundingAccountPattern, fundingAccountHint)
  .transform(fundingAccountOf);

export const vtuProviderNames = ['data', 'bills', 'social'] as const;
export type VtuProviderName = (typeof vtuProviderNames)[number];
export const vtuServices = [
  'airtime',
  'data',
  'cable',
  'electricity',
  'betting',
  'education',
  'airtime_to_cash',
  'social',
] as const;
export type VtuServiceName = (typeof vtuServices)[number];

/** SPEC.md item 3: data to one provider; airtime, electricity, cable, betting, airtime-to-cash (and exam pins) to a second; social to a third. */
const defaultVtuRoutes: Record<VtuServiceName, VtuProviderName> = {
  data: 'data',
  airtime: 'bills',
  cable: 'bills',
  electricity: 'bills',
  betting: 'bills',
  education: 'bills',
  airtime_to_cash: 'bills',
  social: 'social',
};

/** The sandbox simulators' bank accounts (ending in 0: the sandbox bank settles the float top-ups paid into them). */
export const sandboxFundingAccounts: Record<VtuProviderName, string> = {
  data: '058:9900000010:Sandbox Data Vendor',
  bills: '058:9900000020:Sandbox Bills Aggregator',
  social: '058:9900000030:Sandbox Social Panel',
};

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: port.default(3000),
  // When set, /metrics (and /healthz, /readyz) is served on this port by a listener of its own, in API
  // and worker processes alike, and not on PORT. Unset: on PORT outside production, nowhere in it
  // (API.md section 17.1). Each worker on one host needs its own (systemd: billrail-worker@<port>).
  METRICS_PORT: port.optional(),
  // When set, GET /metrics needs `Authorization: Bearer <METRICS_TOKEN>` (401 without it).
  METRICS_TOKEN: z.string().min(32).optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  // Proxies in front whose X-Forwarded-For is trusted. Default 0 outside production; in production it
  // must be said (0 included): a guessed 0 behind a load balancer gives everyone its one address.
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
  // How long a statement, or a wait for a pooled connection, may take (ms; 0: no bound): a database
  // that stops answering fails requests with 503 within it rather than hanging them (decision 0025).
  DATABASE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(4_000),
  // Whether a starting process applies pending migrations (default: yes outside production, no in it,
  // where `npm run migrate` runs once per deploy before the processes start).
  MIGRATE_ON_START: booleanFlag.optional(),
  // Where migrations run (npm run migrate, and a start that migrates): a direct connection, because
  // Kysely's migrator holds a session advisory lock that leaks through PgBouncer in transaction mode.
  MIGRATION_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  // A read replica of DATABASE_URL, where `npm run ledger:check -- --full` reads every entry (the
  // heaviest read there is) instead of the primary (decision 0053). Unset: the primary.
  REPLICA_DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  // Whether the hot paths' statements are prepared by name on each connection (decision 0010). 0
  // behind a pooler in transaction mode that cannot keep them, PgBouncer before 1.21 (decision 0027).
  DATABASE_PREPARED_STATEMENTS: booleanFlag.default(true),
  // Whether job workers hold a LISTEN connection and are woken by NOTIFY (decision 0036). 0 behind a
  // pooler in transaction mode, where a LISTEN does not stay on the connection that asked for it.
  DATABASE_LISTEN_NOTIFY: booleanFlag.default(true),
  // Rows each hot system account (vtu_in_flight, revenue_markup, collections_pool, every
  // provider_float:<provider>) is kept in, so that concurrent transactions lock different rows
  // (decision 0050). 1: one row each, as before.
  LEDGER_SHARDS: z.coerce.number().int().min(1).max(64).default(8),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  SANDBOX: booleanFlag.optional(),
  PUBLIC_BASE_URL: trimmedUrl.optional(),
  PAYMENT_SIGNING_SECRET: z.string().min(8).optional(),
  SECRET_PEPPER: z.string().min(16).optional(),
  ADMIN_PHONES: z.string().default('').transform(list),
  // Browser origins (scheme://host[:port], nothing after) allowed to call the operations; none by default.
  CORS_ORIGINS: z
    .string()
    .refine(
      (list) =>
        list
          .split(',')
          .map((origin) => origin.trim())
          .every((origin) => origin === '' || isOrigin(origin)),
      'comma-separated origins such as https://app.example.com,http://localhost:5173 (no path, no trailing slash)',
    )
    .default('')
    .transform(list),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
  // Anonymous callers are counted per address, which a carrier (CGNAT) shares among many people: 300
  // sign-ins a minute behind one address, with their retries and refreshes, fit (decision 0029).
  RATE_LIMIT_ANONYMOUS_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(1_500),
  // Sign-in code requests, and code checks, per phone (each apart) whatever address they come from.
  RATE_LIMIT_PHONE_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(5),
  VAPID_PUBLIC_KEY: z.string().min(1).optional(),
  VAPID_PRIVATE_KEY: z.string().min(1).optional(),
  VAPID_SUBJECT: z
    .string()
    .regex(/^(mailto:[^\s@]+@[^\s@]+|https:\/\/\S+)$/, 'a mailto: address or an https: URL')
    .optional(),
  // The push services subscriptions may point at (host names; `*.` allows any subdomain): FCM,
  // Mozilla autopush, Apple and Windows by default.
  PUSH_ALLOWED_HOSTS: z
    .string()
    .regex(
      /^(\*\.)?[a-z0-9.-]+(,(\*\.)?[a-z0-9.-]+)*$/,
      'host names such as fcm.googleapis.com,*.push.apple.com',
    )
    .default('fcm.googleapis.com,updates.push.services.mozilla.com,*.push.apple.com,*.notify.windows.com')
    .transform(list),
  PUSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  OPS_EMAIL: z.email().optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).default('billrail <no-reply@billrail.invalid>'),
  // How long one email may take to hand over (SMTP, or a standalone sandbox's mailbox).
  MAIL_TIMEOUT_MS: timeoutMs(10_000),
  SMS_BASE_URL: optionalUrl,
  SMS_API_KEY: z.string().min(1).optional(),
  SMS_SENDER_ID: z.string().min(1).max(11).default('billrail'),
  // How long one SMS may take: requestOtp waits for it.
  SMS_TIMEOUT_MS: timeoutMs(5_000),
  PAYSTACK_BASE_URL: trimmedUrl.default('https://api.paystack.co'),
  // A call to the payment provider, under the 30 s request limit with room to answer: a slow provider
  // becomes a 502, not a hang.
  PAYSTACK_TIMEOUT_MS: timeoutMs(8_000, requestBoundMs),
  PAYSTACK_PREFERRED_BANK: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, 'a provider slug such as wema-bank')
    .optional(),
  KYC_BASE_URL: trimmedUrl.optional(),
  KYC_APP_ID: z.string().min(1).optional(),
  KYC_SECRET_KEY: z.string().min(1).optional(),
  // A call to the KYC provider, under the 30 s request limit as the payment provider's.
  KYC_TIMEOUT_MS: timeoutMs(8_000, requestBoundMs),
  // The KYC provider's hosted face-check page (Tier 1), which hands its liveness token back to the
  // client's `return` path. The sandbox's own page in the sandbox.
  KYC_LIVENESS_URL: optionalUrl,
  S3_BUCKET: z.string().min(1).optional(),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ENDPOINT: optionalUrl,
  S3_FORCE_PATH_STYLE: booleanFlag.default(false),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  // The three upstream VTU providers (DESIGN.md "Outside parties"); the sandbox simulates them all.
  DATA_PROVIDER_BASE_URL: trimmedUrl.optional(),
  DATA_PROVIDER_TOKEN: z.string().min(1).optional(),
  DATA_PROVIDER_NETWORK_IDS: z
    .string()
    .regex(
      /^(mtn|glo|airtel|9mobile)=\d+(,(mtn|glo|airtel|9mobile)=\d+)*$/,
      'a list such as mtn=1,glo=2,9mobile=3,airtel=4',
    )
    .default('')
    .transform(networkNumbers),
  BILLS_BASE_URL: trimmedUrl.optional(),
  BILLS_API_KEY: z.string().min(1).optional(),
  BILLS_PUBLIC_KEY: z.string().min(1).optional(),
  BILLS_SECRET_KEY: z.string().min(1).optional(),
  // The bills party's airtime-to-cash API (VTpass sells none): a reseller's Airtime2Cash endpoints.
  AIRTIME_CASH_BASE_URL: trimmedUrl.optional(),
  AIRTIME_CASH_API_KEY: z.string().min(1).optional(),
  SOCIAL_BASE_URL: trimmedUrl.optional(),
  SOCIAL_API_KEY: z.string().min(1).optional(),
  SOCIAL_KOBO_PER_USD: z.coerce.bigint().positive().optional(),
  VTU_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
  // Purchases one process sends at once, at most (src/vtu/dispatch.ts). Default: 64 on PGlite, 512 on
  // PostgreSQL.
  VTU_SENDS_MAX: z.coerce.number().int().min(1).max(100_000).optional(),
  // Sends per second to a provider across every process (src/vtu/provider-rate.ts); unset: no limit.
  VTU_PROVIDER_RATE_DATA: z.coerce.number().int().min(1).max(100_000).optional(),
  VTU_PROVIDER_RATE_BILLS: z.coerce.number().int().min(1).max(100_000).optional(),
  VTU_PROVIDER_RATE_SOCIAL: z.coerce.number().int().min(1).max(100_000).optional(),
  // Sandbox only: the service whose /__sandbox/vtu simulators the VTU adapters use (default: this
  // one's own), so that a simulator can outlive this process (the crash test kills it).
  SANDBOX_VTU_BASE_URL: trimmedUrl.optional(),
  // Sandbox only: a sandbox running as its own process (npm run sandbox) that this process uses for
  // every outside party, over HTTP, and whose clock it follows; unset: the sandbox is served in process.
  SANDBOX_URL: trimmedUrl.optional(),
  // With SANDBOX_URL: the secret the standalone sandbox shows this process's clock-jobs route.
  SANDBOX_CLOCK_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  // With SANDBOX_URL: how often this process reads the standalone sandbox's clock (and the oldest
  // reading a job batch takes), and how long it waits at start-up for the sandbox to answer.
  SANDBOX_CLOCK_POLL_MS: timeoutMs(1_000),
  SANDBOX_START_TIMEOUT_MS: z.coerce.number().int().min(1_000).max(600_000).default(30_000),
  // The least one float top-up sends (naira), so that a run of small purchases makes one top-up.
  VTU_FLOAT_TOPUP_MIN: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000_000)
    .default(50_000)
    .transform(wholeNairaToKobo),
  // The float (naira) below which operators are warned (the /metrics floor and its alert): just-in-time
  // funding still tops a provider up per purchase; the floor says the pool is being drawn on.
  VTU_FLOAT_FLOOR: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000_000)
    .default(50_000)
    .transform(wholeNairaToKobo),
  // The largest markup an admin may set (adminSetMarkup): a typo such as a flat ₦91,967,931 would
  // otherwise price every purchase of a service out of reach until someone noticed.
  VTU_MARKUP_FLAT_MAX: z.coerce
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(10_000)
    .transform(wholeNairaToKobo),
  VTU_MARKUP_PERCENT_MAX: z.coerce.number().int().min(0).max(100).default(50),
  // Which provider serves which service: SPEC.md item 3 by default; a list such as data=bills overrides.
  VTU_ROUTES: z
    .string()
    .regex(
      /^[a-z_]+=(data|bills|social)(,[a-z_]+=(data|bills|social))*$/,
      'a list such as data=data,airtime=bills',
    )
    .optional(),
  // Each provider's bank account, which just-in-time funding pays: bankCode:accountNumber:Account Name.
  DATA_FUNDING_ACCOUNT: fundingAccount.optional(),
  BILLS_FUNDING_ACCOUNT: fundingAccount.optional(),
  SOCIAL_FUNDING_ACCOUNT: fundingAccount.optional(),
  // Savings locks and growth (API.md section 9): naira, days and percent.
  SAVINGS_LOCK_MIN: kobo(100),
  SAVINGS_LOCK_MAX: kobo(10_000_000),
  SAVINGS_DAYS_MIN: z.coerce.number().int().min(1).max(3650).default(7),
  SAVINGS_DAYS_MAX: z.coerce.number().int().min(1).max(3650).default(365),
  // Read as text and turned into basis points by its digits: 2.55 * 100 is 254.99999999999997.
  SAVINGS_BREAK_PENALTY_PERCENT: z
    .string()
    .regex(percentPattern, 'a percent with at most two decimals')
    // Zod runs this one after a failed pattern too: only text that matched is converted.
    .refine((v) => !percentPattern.test(v) || basisPoints(v) <= 10_000n, 'at most 100')
    .default('5')
    .transform(basisPoints),
  // Thresholds on the total ever locked, naira, ascending once parsed: 10000,50000,...
  SAVINGS_MILESTONES: z
    .string()
    .regex(/^\d{1,10}(,\d{1,10})*$/, 'a list of naira amounts such as 10000,50000,100000')
    .default('10000,50000,100000,500000,1000000')
    .transform(milestonesKobo),
  // Airtime-to-cash (API.md section 14): the payout percent per network (default 80), and how long a
  // sale waits for the provider's confirmation before it fails with nothing moved.
  AIRTIME_TO_CASH_RATES: z
    .string()
    .regex(
      /^(mtn|glo|airtel|9mobile)=\d{1,2}(,(mtn|glo|airtel|9mobile)=\d{1,2})*$/,
      'a list of whole percents such as mtn=80,glo=75',
    )
    .default('')
    .transform(payoutRates),
  AIRTIME_TO_CASH_WINDOW_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(30),
  // Wallet-to-wallet transfers (API.md section 14), naira: one transfer's most, and a sender's most
  // per Lagos day.
  TRANSFER_MAX: kobo(500_000),
  TRANSFER_DAILY_MAX: kobo(1_000_000),
  // CBN tiered KYC limits (API.md 17.2, circular BPS/DIR/GEN/CIR/04/007): per tier, what may leave a
  // person per Lagos day and the most their wallet holds, naira or `none`.
  LIMIT_TIER0_DAILY: tierLimit(50_000),
  LIMIT_TIER0_BALANCE: tierLimit(300_000),
  LIMIT_TIER1_DAILY: tierLimit(50_000),
  LIMIT_TIER1_BALANCE: tierLimit(300_000),
  LIMIT_TIER2_DAILY: tierLimit(200_000),
  LIMIT_TIER2_BALANCE: tierLimit(500_000),
  LIMIT_TIER3_DAILY: tierLimit(5_000_000),
  LIMIT_TIER3_BALANCE: tierLimit('none'),
  // Scheduled purchases (API.md section 16): runs the wallet could not cover in a row that pause a
  // schedule.
  SCHEDULE_SKIPS_MAX: z.coerce.number().int().min(1).max(100).default(3),
  // Operators' pauses (API.md section 17.4, decision 0042): how old a process's copy of the pauses may
  // be before a purchase reads them again. At most 4 s, so that every process sees a pause within 5 s.
  PAUSES_REFRESH_MS: z.coerce.number().int().min(100).max(4000).default(2000),
  // Disputes (API.md section 16): how many days after a movement its owner may still report it.
  DISPUTE_WINDOW_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  // Closing an account (API.md 17.3, decision 0047): the days a request waits before it takes effect
  // (cancellable meanwhile), and the years a closed account's records are kept (the AML record rule:
  // five at the least) before its KYC documents and submissions are erased.
  ACCOUNT_DELETION_GRACE_DAYS: z.coerce.number().int().min(1).max(90).default(7),
  RETENTION_YEARS: z.coerce.number().int().min(5).max(30).default(5),
  // The retention of the tables that grow without being money or KYC records (decision 0054,
  // docs/privacy.md "How long each table is kept"): days past which retention.purge deletes their rows.
  // Money and KYC records are not among them: they are kept RETENTION_YEARS (five at the least).
  RETENTION_PAYMENT_EVENTS_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RETENTION_NOTIFICATIONS_READ_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RETENTION_NOTIFICATIONS_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  RETENTION_DATA_EXPORTS_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  RETENTION_LEDGER_CHECKS_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RETENTION_RECONCILIATION_MATCHED_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  // The USSD channel's sessions and the claims of their steps (no PIN, no inputs: keyed hashes), kept
  // for a dispute about a session; the day's USSD payments are a money record and stay.
  RETENTION_USSD_SESSIONS_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  RETENTION_JOBS_DAYS: z.coerce.number().int().min(1).max(90).default(7),
  RETENTION_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(1000),
  RETENTION_TIME_BUDGET_SECONDS: z.coerce.number().int().min(1).max(3600).default(120),
  CHECKIN_REWARD: kobo(10),
  CHECKIN_WITHDRAW_MINIMUM: kobo(100),
  REFERRAL_BONUS: kobo(200),
  WORKER: booleanFlag.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // The pepper SECRET_PEPPER replaced, accepted while its rotation lasts (decision 0035): PINs and codes
  // hashed with it still verify, and a PIN is hashed again with SECRET_PEPPER at its next right check.
  SECRET_PEPPER_PREVIOUS: z.string().min(16).optional(),
  // The USSD channel (API.md 17.6, issue 44). The callback's path carries USSD_CALLBACK_TOKEN, the one
  // secret a gateway's unsigned callback has: unset outside the sandbox, the channel is off (every
  // callback path is 404); in the sandbox a random one is made at start-up. USSD_ALLOWED_IPS: the
  // gateway's addresses or ranges (empty: any). The CBN USSD framework's limits, naira: one payment's
  // most, and the most a person pays by USSD per Lagos day.
  USSD_CALLBACK_TOKEN: z
    .string()
    .regex(/^[A-Za-z0-9_-]{16,200}$/, '16 to 200 letters, digits, _ or - (it is a path segment)')
    .optional(),
  USSD_ALLOWED_IPS: z
    .string()
    .default('')
    .transform((text, ctx) => {
      try {
        return ipAllowList(list(text));
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message, input: text });
        return z.NEVER;
      }
    }),
  USSD_SERVICE_CODE: z
    .string()
    .regex(/^\*[0-9*]{1,30}#$/, 'a USSD code such as *384*2255#')
    .default('*384*2255#'),
  USSD_SINGLE_MAX: kobo(20_000),
  USSD_DAILY_MAX: kobo(100_000),
  // Administrators' second factor (API.md section 17.4, decision 0039): `totp` or `none` (default
  // `none` in the sandbox, `totp` otherwise), and the key their TOTP secrets are sealed under
  // (required in production with totp; elsewhere derived from SECRET_PEPPER when unset).
  ADMIN_SECOND_FACTOR: z.enum(['totp', 'none']).optional(),
  ADMIN_TOTP_KEY: z.string().min(32, 'at least 32 characters').optional(),
});

type EnvValues = z.output<typeof envSchema>;

/**
 * A setting the transform refuses, where the fields alone cannot judge (a combination, or what the
 * sandbox being off requires): the variable at fault and why, which become the schema's one issue.
 */
class Refusal extends Error {
  readonly variable: string;
  readonly reason: string;
  constructor(variable: string, reason: string) {
    super(`invalid ${variable}: ${reason}`);
    this.variable = variable;
    this.reason = reason;
  }
}

/** The environment read into the nested Config: every variable, its bounds and the rules between them. */
export const configSchema = envSchema.transform((e, ctx) => {
  try {
    return toConfig(e);
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    ctx.addIssue({ code: 'custom', path: [error.variable], message: error.reason, input: undefined });
    return z.NEVER;
  }
});

export type Config = z.output<typeof configSchema>;
/** The outside parties: simulated by the sandbox, or the real providers with every setting they need. */
export type Providers = Config['providers'];
export type RealProviders = Extract<Providers, { mode: 'real' }>;
export type SandboxProviders = Extract<Providers, { mode: 'sandbox' }>;

function toConfig(e: EnvValues) {
  const production = e.NODE_ENV === 'production';
  const { providers, secrets } = providersConfig(e, production);
  if (production) refuseFailingOpen(e);
  const sandbox = providers.mode === 'sandbox';
  return {
    env: e.NODE_ENV,
    http: httpConfig(e, production),
    dataDir: path.resolve(e.DATA_DIR),
    database: databaseConfig(e, production),
    redisUrl: e.REDIS_URL,
    /** Whether the sandbox simulates the outside parties: `providers.mode === 'sandbox'`. */
    sandbox,
    providers,
    /** SECRET_PEPPER_PREVIOUS beside the secrets: the pepper replaced, accepted while a rotation lasts (decision 0035). */
    secrets: { ...secrets, pepperPrevious: e.SECRET_PEPPER_PREVIOUS },
    adminPhones: e.ADMIN_PHONES,
    /** ADMIN_SECOND_FACTOR and ADMIN_TOTP_KEY: whether admin operations need a TOTP, and its sealing key. */
    adminSecondFactor: adminSecondFactorConfig(e, production, sandbox, secrets.pepper),
    /** RATE_LIMIT_PER_MINUTE: a signed-in caller's requests a minute, counted per user. */
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    /** RATE_LIMIT_ANONYMOUS_PER_MINUTE: anonymous requests a minute, counted per address. */
    rateLimitAnonymousPerMinute: e.RATE_LIMIT_ANONYMOUS_PER_MINUTE,
    /** RATE_LIMIT_PHONE_PER_MINUTE: requestOtp's, and verifyOtp's, requests a minute per phone. */
    rateLimitPhonePerMinute: e.RATE_LIMIT_PHONE_PER_MINUTE,
    /** Origins whose browser pages may call the operations (CORS); empty: no CORS answer at all. */
    corsOrigins: e.CORS_ORIGINS,
    /** Web Push: the push services' hosts subscriptions may name, and how long one push may take. */
    push: { allowedHosts: e.PUSH_ALLOWED_HOSTS, timeoutMs: e.PUSH_TIMEOUT_MS },
    opsEmail: e.OPS_EMAIL,
    /** Transactional email: SMTP outside the sandbox; the sandbox keeps messages at /__sandbox/emails. */
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM, timeoutMs: e.MAIL_TIMEOUT_MS },
    sms: { senderId: e.SMS_SENDER_ID, timeoutMs: e.SMS_TIMEOUT_MS },
    /**
     * The payment provider (Paystack's API). preferredBank: the bank dedicated virtual accounts are
     * opened at (test-bank in the sandbox, wema-bank otherwise).
     */
    payments: {
      preferredBank: e.PAYSTACK_PREFERRED_BANK ?? (sandbox ? 'test-bank' : 'wema-bank'),
      timeoutMs: e.PAYSTACK_TIMEOUT_MS,
    },
    /** The KYC provider: where the Tier 1 face check starts (the sandbox's page in the sandbox). */
    kyc: { livenessUrl: livenessUrl(e, providers), timeoutMs: e.KYC_TIMEOUT_MS },
    /** Where identity documents are kept: S3 when S3_BUCKET is set, else a private local directory. */
    storage: storageConfig(e),
    vtu: vtuConfig(e, providers),
    savings: savingsConfig(e),
    /** Airtime-to-cash: the payout per network in basis points of the airtime, and the window. */
    airtimeToCash: { rateBp: e.AIRTIME_TO_CASH_RATES, windowMinutes: e.AIRTIME_TO_CASH_WINDOW_MINUTES },
    /** Wallet-to-wallet transfers, kobo. */
    transfers: { minKobo: transferMinKobo, maxKobo: e.TRANSFER_MAX, dailyMaxKobo: e.TRANSFER_DAILY_MAX },
    /** CBN tier limits, kobo, by tier 0..3: null is no limit. */
    limits: {
      tiers: [
        { dailyKobo: e.LIMIT_TIER0_DAILY, balanceKobo: e.LIMIT_TIER0_BALANCE },
        { dailyKobo: e.LIMIT_TIER1_DAILY, balanceKobo: e.LIMIT_TIER1_BALANCE },
        { dailyKobo: e.LIMIT_TIER2_DAILY, balanceKobo: e.LIMIT_TIER2_BALANCE },
        { dailyKobo: e.LIMIT_TIER3_DAILY, balanceKobo: e.LIMIT_TIER3_BALANCE },
      ],
    },
    /** Scheduled purchases: skips in a row that pause a schedule. */
    schedules: { skipsMax: e.SCHEDULE_SKIPS_MAX },
    /** Operators' pauses: the most a process's copy of them may age before it reads them again, ms. */
    pauses: { refreshMs: e.PAUSES_REFRESH_MS },
    /** Disputes (API.md section 16): the days after a movement in which it may be reported. */
    disputes: { windowDays: e.DISPUTE_WINDOW_DAYS },
    /** Closing an account: the grace period in days, and the years its records are kept after. */
    accountClosure: { graceDays: e.ACCOUNT_DELETION_GRACE_DAYS, retentionYears: e.RETENTION_YEARS },
    /** How long the growing tables that are not money or KYC records are kept (decision 0054). */
    retention: retentionConfig(e),
    /** Growth rewards (API.md section 9), kobo. */
    growth: {
      checkinRewardKobo: e.CHECKIN_REWARD,
      checkinWithdrawMinKobo: e.CHECKIN_WITHDRAW_MINIMUM,
      referralBonusKobo: e.REFERRAL_BONUS,
    },
    runWorker: e.WORKER,
    logLevel: e.LOG_LEVEL,
    ussd: ussdConfig(e, sandbox),
  };
}

/**
 * The USSD channel (API.md 17.6). callbackToken undefined: the channel is off. In the sandbox an
 * unset token is made at random at start-up, so that `npm start` serves the sandbox's feature phone
 * with nothing set; the sandbox reads it (and serviceCode) from here to call the callback.
 */
function ussdConfig(e: EnvValues, sandbox: boolean) {
  return {
    /** USSD_CALLBACK_TOKEN: the secret path segment of POST /api/public/ussd/<token>; undefined: off. */
    callbackToken: e.USSD_CALLBACK_TOKEN ?? (sandbox ? randomBytes(24).toString('base64url') : undefined),
    /** USSD_ALLOWED_IPS: the addresses allowed to call the callback; undefined: any. */
    allowedIps: e.USSD_ALLOWED_IPS,
    /** USSD_SERVICE_CODE: the code people dial (*384*2255#), as the gateway sends it. */
    serviceCode: e.USSD_SERVICE_CODE,
    /** USSD_SINGLE_MAX, kobo: the most one USSD payment may charge. */
    singleMaxKobo: e.USSD_SINGLE_MAX,
    /** USSD_DAILY_MAX, kobo: the most a person's USSD payments may charge per Lagos day. */
    dailyMaxKobo: e.USSD_DAILY_MAX,
  };
}

/** Addresses and ranges (a.b.c.d, a.b.c.d/n, IPv6 likewise) as one matcher; an empty list: undefined, any. */
export type IpAllowList = { readonly entries: readonly string[]; allows(address: string): boolean };

function ipAllowList(entries: string[]): IpAllowList | undefined {
  if (entries.length === 0) return undefined;
  const allowed = new BlockList();
  for (const entry of entries) {
    const [address = '', prefixText, extra] = entry.split('/');
    const family = isIP(address);
    const prefix = prefixText === undefined ? undefined : Number(prefixText);
    const prefixMax = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (prefix !== undefined && (!/^\d{1,3}$/.test(prefixText!) || prefix > prefixMax))
    ) {
      throw new Error(`not an IP address or CIDR range: ${entry} (such as 52.48.80.0/24,2001:db8::1)`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) allowed.addAddress(address, type);
    else allowed.addSubnet(address, prefix, type);
  }
  return {
    entries,
    allows(address) {
      const family = isIP(address);
      // Node's BlockList judges an IPv4-mapped IPv6 address (::ffff:a.b.c.d) by the IPv4 rules.
      return family !== 0 && allowed.check(address, family === 4 ? 'ipv4' : 'ipv6');
    },
  };
}

/**
 * The retention periods of retention.purge, in days. The webhook inbox is refused below the disputes'
 * window and the 35 days of a month's reconciliation, the evidence an operator may still go back to;
 * the money and KYC records are kept RETENTION_YEARS (at least five, 1826 days) and never purged here.
 */
function retentionConfig(e: EnvValues) {
  const paymentEventsFloorDays = Math.max(e.DISPUTE_WINDOW_DAYS, 35);
  if (e.RETENTION_PAYMENT_EVENTS_DAYS < paymentEventsFloorDays)
    throw new Refusal(
      'RETENTION_PAYMENT_EVENTS_DAYS',
      `at least ${paymentEventsFloorDays}: a month's reconciliation and the disputes' window (DISPUTE_WINDOW_DAYS) may still need the payment provider's messages`,
    );
  if (e.RETENTION_NOTIFICATIONS_DAYS < e.RETENTION_NOTIFICATIONS_READ_DAYS)
    throw new Refusal(
      'RETENTION_NOTIFICATIONS_DAYS',
      'at least RETENTION_NOTIFICATIONS_READ_DAYS: an unread notification is kept no shorter than a read one',
    );
  return {
    /** The money and KYC records' period (RETENTION_YEARS), in days: the floor the law sets, for the docs and logs. */
    moneyRecordsDays: Math.ceil(e.RETENTION_YEARS * 365.25),
    paymentEventsDays: e.RETENTION_PAYMENT_EVENTS_DAYS,
    notificationsReadDays: e.RETENTION_NOTIFICATIONS_READ_DAYS,
    notificationsDays: e.RETENTION_NOTIFICATIONS_DAYS,
    dataExportsDays: e.RETENTION_DATA_EXPORTS_DAYS,
    ledgerChecksDays: e.RETENTION_LEDGER_CHECKS_DAYS,
    reconciliationMatchedDays: e.RETENTION_RECONCILIATION_MATCHED_DAYS,
    ussdSessionsDays: e.RETENTION_USSD_SESSIONS_DAYS,
    /** pg-boss's own retention of finished jobs (its queues' deleteAfterSeconds), in days. */
    jobsDays: e.RETENTION_JOBS_DAYS,
    batchSize: e.RETENTION_BATCH_SIZE,
    timeBudgetSeconds: e.RETENTION_TIME_BUDGET_SECONDS,
  };
}

/**
 * The administrators' second factor: TOTP outside the sandbox unless said otherwise. The secrets are
 * sealed under ADMIN_TOTP_KEY, which production must set (a key of its own, rotated apart from the
 * pepper); elsewhere the pepper stands in, told apart by the derivation's label (auth/second-factor.ts).
 */
function adminSecondFactorConfig(e: EnvValues, production: boolean, sandbox: boolean, pepper: string) {
  const mode = e.ADMIN_SECOND_FACTOR ?? (sandbox ? 'none' : 'totp');
  if (production && mode === 'totp' && e.ADMIN_TOTP_KEY === undefined)
    throw new Refusal(
      'ADMIN_TOTP_KEY',
      "required when NODE_ENV=production and ADMIN_SECOND_FACTOR=totp: the key the administrators' TOTP secrets are sealed under (npm run secrets prints one)",
    );
  return { mode, sealingKey: e.ADMIN_TOTP_KEY ?? pepper };
}

function httpConfig(e: EnvValues, production: boolean) {
  return {
    port: e.PORT,
    host: e.HOST,
    /** PUBLIC_BASE_URL with no trailing slash; undefined: the listener's own address (publicBaseUrl()). */
    publicBaseUrl: e.PUBLIC_BASE_URL,
    trustProxyHops: e.TRUST_PROXY_HOPS ?? 0,
    /**
     * METRICS_PORT: where a listener of its own serves /metrics, /healthz and /readyz (API processes
     * and workers); undefined when unset.
     */
    metricsPort: e.METRICS_PORT,
    /** Whether the API app serves /metrics on PORT: METRICS_PORT unset, outside production. */
    metricsOnApiPort: e.METRICS_PORT === undefined && !production,
    /** METRICS_TOKEN: the bearer token GET /metrics needs; undefined: none needed. */
    metricsToken: e.METRICS_TOKEN,
  };
}

function databaseConfig(e: EnvValues, production: boolean) {
  return {
    url: e.DATABASE_URL,
    poolMax: e.DATABASE_POOL_MAX,
    /** The bound on a statement or a wait for a connection (0: none); PostgreSQL only. */
    timeoutMs: e.DATABASE_TIMEOUT_MS,
    /**
     * Whether this process applies pending migrations at start-up (otherwise it refuses to start on
     * a database behind the code).
     */
    migrateOnStart: e.MIGRATE_ON_START ?? !production,
    /** Where migrations run on PostgreSQL (MIGRATION_DATABASE_URL, else DATABASE_URL); undefined on PGlite. */
    migrationUrl: e.MIGRATION_DATABASE_URL ?? e.DATABASE_URL,
    /** Where the full ledger check reads (REPLICA_DATABASE_URL); undefined: the primary. */
    replicaUrl: e.REPLICA_DATABASE_URL,
    /** Whether the statements prepared.ts marks are prepared by name; off behind PgBouncer < 1.21. */
    preparedStatements: e.DATABASE_PREPARED_STATEMENTS,
    /** Whether job workers are woken by LISTEN/NOTIFY; off behind a pooler in transaction mode. */
    listenNotify: e.DATABASE_LISTEN_NOTIFY,
    /** How many rows (shards) each hot system account of the ledger is kept in (decision 0050). */
    ledgerShards: e.LEDGER_SHARDS,
  };
}

/**
 * The address the service is reached at: PUBLIC_BASE_URL, else its listener's (a wildcard listener
 * is reached on loopback from this machine). Known before the modules are built: with PORT=0 the
 * caller chooses the port first (src/listen-port.ts).
 */
export function publicBaseUrl(http: Pick<Config['http'], 'publicBaseUrl' | 'host' | 'port'>): string {
  if (http.publicBaseUrl !== undefined) return http.publicBaseUrl;
  const host = http.host === '0.0.0.0' ? '127.0.0.1' : http.host === '::' ? '::1' : http.host;
  return `http://${isIP(host) === 6 ? `[${host}]` : host}:${http.port}`;
}

/**
 * The sandbox decision and the outside parties' settings. The sandbox opens every sign-in code, the
 * webhook signing secret and the clock to whoever reaches it, so it is on by default only where
 * nobody else can: listening on loopback alone. Outside it every provider's setting is required.
 */
function providersConfig(e: EnvValues, production: boolean) {
  const exposedBy = reachableBeyondLoopback(e.HOST, e.PUBLIC_BASE_URL);
  const sandbox = e.SANDBOX ?? (!production && exposedBy.length === 0);
  if (production && sandbox) throw new Refusal('SANDBOX', 'the sandbox is refused when NODE_ENV=production');
  if (sandbox) return sandboxProviders(e, exposedBy);
  // Said when a setting the sandbox would have supplied is missing because the sandbox is off by
  // that rule, not by choice: the operator most likely meant one of two things.
  const whySandboxOff =
    e.SANDBOX === undefined && !production && exposedBy.length > 0
      ? ` (the sandbox is on by default only while the service listens on loopback alone, and ${exposedBy.join(' and ')} ${exposedBy.length === 1 ? 'reaches' : 'reach'} beyond it: set SANDBOX=1 to run the sandbox there anyway, which opens sign-in codes, the signing secret and the clock to whoever reaches it, or configure the real providers)`
      : '';
  if (e.SANDBOX_URL !== undefined) {
    // Said first: the settings the sandbox would supply are missing for that very reason.
    throw new Refusal('SANDBOX_URL', `only used when SANDBOX is on${whySandboxOff}`);
  }
  return realProviders(e, production, whySandboxOff);
}

function sandboxProviders(e: EnvValues, exposedBy: string[]) {
  const remote = remoteSandbox(e);
  const providers = {
    mode: 'sandbox' as const,
    /**
     * What makes the sandbox reachable from beyond this machine (`HOST=0.0.0.0`, a public
     * `PUBLIC_BASE_URL`), for the start-up warning; empty while it listens on loopback alone.
     */
    exposedBy,
    /**
     * SANDBOX_URL: the standalone sandbox every outside party is reached at, the token its clock-jobs
     * call shows, and how this process follows its clock; undefined: the sandbox is served in process.
     */
    remote,
    /** SANDBOX_VTU_BASE_URL: the service hosting the VTU simulators; undefined: the sandbox's own. */
    vtuBaseUrl: e.SANDBOX_VTU_BASE_URL,
    /** Web Push: the keys when both are set (required with SANDBOX_URL), else made in DATA_DIR. */
    vapid: {
      keys:
        e.VAPID_PUBLIC_KEY !== undefined && e.VAPID_PRIVATE_KEY !== undefined
          ? { publicKey: e.VAPID_PUBLIC_KEY, privateKey: e.VAPID_PRIVATE_KEY }
          : undefined,
      subject: e.VAPID_SUBJECT ?? 'mailto:sandbox@billrail.invalid',
    },
    fundingAccounts: {
      data: e.DATA_FUNDING_ACCOUNT ?? fundingAccountOf(sandboxFundingAccounts.data),
      bills: e.BILLS_FUNDING_ACCOUNT ?? fundingAccountOf(sandboxFundingAccounts.bills),
      social: e.SOCIAL_FUNDING_ACCOUNT ?? fundingAccountOf(sandboxFundingAccounts.social),
    },
  };
  const secrets = {
    paymentSigning: e.PAYMENT_SIGNING_SECRET ?? SANDBOX_SIGNING_SECRET,
    pepper: e.SECRET_PEPPER ?? SANDBOX_PEPPER,
  };
  return { providers, secrets };
}

/**
 * The real providers. Every setting is required (there are no defaults for secrets or the outside
 * parties' endpoints), asked for in this order so that the first one missing is the one named.
 */
function realProviders(e: EnvValues, production: boolean, whySandboxOff: string) {
  const need = <K extends keyof EnvValues>(name: K): NonNullable<EnvValues[K]> => {
    const value = e[name];
    if (value === undefined || value === null)
      throw new Refusal(name, `required when SANDBOX is off${whySandboxOff}`);
    return value;
  };
  const secrets = { paymentSigning: need('PAYMENT_SIGNING_SECRET'), pepper: need('SECRET_PEPPER') };
  const sms = { baseUrl: need('SMS_BASE_URL'), apiKey: need('SMS_API_KEY') };
  const kyc = {
    baseUrl: need('KYC_BASE_URL'),
    appId: need('KYC_APP_ID'),
    secretKey: need('KYC_SECRET_KEY'),
    livenessUrl: need('KYC_LIVENESS_URL'),
  };
  // Web Push keys are generated into DATA_DIR only in the sandbox.
  const vapid = {
    keys: { publicKey: need('VAPID_PUBLIC_KEY'), privateKey: need('VAPID_PRIVATE_KEY') },
    subject: need('VAPID_SUBJECT'),
  };
  if (production) need('PUBLIC_BASE_URL');
  const providers = {
    mode: 'real' as const,
    sms,
    kyc,
    vapid,
    payments: { baseUrl: e.PAYSTACK_BASE_URL },
    data: { baseUrl: need('DATA_PROVIDER_BASE_URL'), token: need('DATA_PROVIDER_TOKEN') },
    bills: {
      baseUrl: need('BILLS_BASE_URL'),
      apiKey: need('BILLS_API_KEY'),
      publicKey: need('BILLS_PUBLIC_KEY'),
      secretKey: need('BILLS_SECRET_KEY'),
    },
    social: { baseUrl: need('SOCIAL_BASE_URL'), apiKey: need('SOCIAL_API_KEY') },
    /** The bills party's airtime-to-cash API. */
    airtimeCash: { baseUrl: need('AIRTIME_CASH_BASE_URL'), apiKey: need('AIRTIME_CASH_API_KEY') },
    /** Each provider's bank account, which just-in-time funding pays. */
    fundingAccounts: {
      data: need('DATA_FUNDING_ACCOUNT'),
      bills: need('BILLS_FUNDING_ACCOUNT'),
      social: need('SOCIAL_FUNDING_ACCOUNT'),
    },
  };
  refuseSandboxLeftovers(e);
  return { providers, secrets };
}

/** What outside the sandbox would be a mistake to ignore: a sandbox value, or a sandbox address. */
function refuseSandboxLeftovers(e: EnvValues): void {
  // An operations address with no way to reach it would lose every alert email, silently.
  if (e.OPS_EMAIL !== undefined && e.SMTP_URL === undefined)
    throw new Refusal('SMTP_URL', 'required when OPS_EMAIL is set and SANDBOX is off');
  if (e.PAYMENT_SIGNING_SECRET === SANDBOX_SIGNING_SECRET)
    throw new Refusal('PAYMENT_SIGNING_SECRET', 'the sandbox secret is refused outside the sandbox');
  if (e.SECRET_PEPPER === SANDBOX_PEPPER)
    throw new Refusal('SECRET_PEPPER', 'the sandbox pepper is refused outside the sandbox');
  // Ignoring it would hide a mistake: someone meant the providers to be simulated somewhere.
  if (e.SANDBOX_VTU_BASE_URL !== undefined)
    throw new Refusal('SANDBOX_VTU_BASE_URL', 'only used when SANDBOX is on');
}

/**
 * Where the Tier 1 face check starts: KYC_LIVENESS_URL, else the sandbox's page. A standalone sandbox
 * serves its page at its own address; behind a proxy that puts /__sandbox/ on the service's origin,
 * KYC_LIVENESS_URL=<the proxy>/__sandbox/liveness keeps its hand-back there.
 */
function livenessUrl(e: EnvValues, providers: ProviderSet): string {
  if (providers.mode === 'real') return providers.kyc.livenessUrl;
  return e.KYC_LIVENESS_URL ?? `${providers.remote?.url ?? ''}/__sandbox/liveness`;
}
type ProviderSet = ReturnType<typeof providersConfig>['providers'];

/** Thrown by loadConfig: a one-line message naming the variable at fault. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 (::ffff:127.0.0.1). */
const loopbackAddresses = new BlockList();
loopbackAddresses.addSubnet('127.0.0.0', 8, 'ipv4');
loopbackAddresses.addAddress('::1', 'ipv6');
loopbackAddresses.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');

/** Whether a host (a name or an address, IPv6 possibly in brackets) is this machine's loopback alone. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (bare === 'localhost') return true;
  const family = isIP(bare);
  if (family === 0) return false;
  return loopbackAddresses.check(bare, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * The settings that make the service reachable from beyond this machine: a listening address other
 * than loopback, or a public base URL (a proxy in front of a loopback listener reaches it too).
 */
function reachableBeyondLoopback(host: string, publicBaseUrl: string | undefined): string[] {
  const reasons: string[] = [];
  if (!isLoopbackHost(host)) reasons.push(`HOST=${host}`);
  if (publicBaseUrl !== undefined && !isLoopbackHost(new URL(publicBaseUrl).hostname))
    reasons.push(`PUBLIC_BASE_URL=${publicBaseUrl}`);
  return reasons;
}

/** Parses the environment once. Throws ConfigError with a one-line message naming the variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // Empty strings mean "unset": shells and .env files produce them for blank assignments.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const name = issue?.path.join('.') ?? 'environment';
  throw new ConfigError(`invalid ${name}: ${issue?.message ?? 'bad value'}`);
}

/**
 * What production refuses to guess or to run on (decision 0026, API.md section 17.1): an embedded
 * database, an unsaid proxy count, and a secret that is an example value or too weak to be random.
 */
function refuseFailingOpen(e: EnvValues): void {
  if (e.DATABASE_URL === undefined)
    throw new Refusal(
      'DATABASE_URL',
      "required when NODE_ENV=production: without it the service runs on PGlite, one process's embedded database with no backups that no second process may open; set DATABASE_URL to a PostgreSQL server",
    );
  if (e.TRUST_PROXY_HOPS === undefined)
    throw new Refusal(
      'TRUST_PROXY_HOPS',
      "required when NODE_ENV=production: the number of proxies in front whose X-Forwarded-For to trust (0 when clients connect directly); guessed wrong, every client shares the load balancer's address, or any client can claim any address",
    );
  for (const name of productionSecretNames) {
    const value = (e as Record<string, unknown>)[name];
    if (typeof value !== 'string') continue;
    const problem = secretProblem(value);
    if (problem !== undefined)
      throw new Refusal(name, `refused when NODE_ENV=production: ${problem} (${secretSource(name)})`);
  }
}

/**
 * The default bound on purchases sent at once. It caps purchases per second per process at the bound
 * over the provider's answer time (512 over a 2 s answer is 256/s). On PGlite every send's claim and
 * settlement queue on the one connection behind the accepts, so a smaller bound keeps the time from
 * acceptance to success short; measured with npm run bench (buyAirtime), 16 → 64 took PGlite from
 * 439/s to 755/s, and PostgreSQL stops gaining past about 100 under the bench's 50 connections.
 */
export const sendsMaxOnPglite = 64;
export const sendsMaxOnPostgres = 512;

/** The upstream VTU providers, their routing and the accounts that fund their floats. */
function vtuConfig(e: EnvValues, providers: ProviderSet) {
  const routes = { ...defaultVtuRoutes };
  for (const pair of e.VTU_ROUTES?.split(',') ?? []) {
    const [service = '', provider] = pair.split('=') as [string, VtuProviderName];
    if (!(vtuServices as readonly string[]).includes(service))
      throw new Refusal('VTU_ROUTES', `unknown service ${service}`);
    routes[service as VtuServiceName] = provider;
  }
  const { fundingAccounts } = providers;
  return {
    timeoutMs: e.VTU_TIMEOUT_MS,
    /** Purchases this process sends at once, at most: the next waits for a place before its debit. */
    sendsMax: e.VTU_SENDS_MAX ?? (e.DATABASE_URL === undefined ? sendsMaxOnPglite : sendsMaxOnPostgres),
    /** Sends per second to each provider across every process (VTU_PROVIDER_RATE_<NAME>); undefined: no limit. */
    providerRates: {
      data: e.VTU_PROVIDER_RATE_DATA,
      bills: e.VTU_PROVIDER_RATE_BILLS,
      social: e.VTU_PROVIDER_RATE_SOCIAL,
    } satisfies Record<VtuProviderName, number | undefined>,
    floatTopupMinKobo: e.VTU_FLOAT_TOPUP_MIN,
    /** The float below which operators are warned (/metrics billrail_provider_float_floor_kobo). */
    floatFloorKobo: e.VTU_FLOAT_FLOOR,
    /** The largest markup adminSetMarkup accepts: flat kobo and basis points. */
    markupMax: { flatKobo: e.VTU_MARKUP_FLAT_MAX, percentBp: e.VTU_MARKUP_PERCENT_MAX * 100 },
    routes,
    data: { networkIds: e.DATA_PROVIDER_NETWORK_IDS, funding: fundingAccounts.data },
    bills: { funding: fundingAccounts.bills },
    social: {
      funding: fundingAccounts.social,
      koboPerUsd: e.SOCIAL_KOBO_PER_USD,
      /**
       * Whether an order's link may name a host that does not resolve. Off outside the sandbox (such
       * a link cannot be checked for an internal address); on in the sandbox, which runs offline and
       * whose panel visits no link.
       */
      allowUnresolvedLinks: providers.mode === 'sandbox',
    },
  };
}

/**
 * The standalone sandbox (SANDBOX_URL), with what its processes must share: the clock-jobs token, and
 * the Web Push keys (each process would otherwise make its own in its DATA_DIR, and a subscription
 * made with one process's key would be refused by the push service when another pushes).
 */
function remoteSandbox(e: EnvValues) {
  if (e.SANDBOX_URL === undefined) return undefined;
  const clockToken = e.SANDBOX_CLOCK_TOKEN;
  if (clockToken === undefined) throw new Refusal('SANDBOX_CLOCK_TOKEN', 'required when SANDBOX_URL is set');
  for (const name of ['VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY'] as const) {
    if (e[name] === undefined) throw new Refusal(name, 'required when SANDBOX_URL is set');
  }
  // SANDBOX_URL already names where the VTU simulators are; two answers would be one too many.
  if (e.SANDBOX_VTU_BASE_URL !== undefined) {
    throw new Refusal('SANDBOX_VTU_BASE_URL', 'not used with SANDBOX_URL, which names the simulators');
  }
  return {
    url: e.SANDBOX_URL,
    clockToken,
    clockPollMs: e.SANDBOX_CLOCK_POLL_MS,
    startTimeoutMs: e.SANDBOX_START_TIMEOUT_MS,
  };
}

/** API.md section 14: the least one wallet transfer moves (₦100). */
const transferMinKobo = 10_000n;

/** Savings locks (API.md section 9): amounts in kobo, the penalty in basis points of the amount. */
function savingsConfig(e: EnvValues) {
  if (e.SAVINGS_DAYS_MIN > e.SAVINGS_DAYS_MAX)
    throw new Refusal('SAVINGS_DAYS_MIN', 'above SAVINGS_DAYS_MAX');
  if (e.SAVINGS_LOCK_MIN > e.SAVINGS_LOCK_MAX)
    throw new Refusal('SAVINGS_LOCK_MIN', 'above SAVINGS_LOCK_MAX');
  return {
    lockMinKobo: e.SAVINGS_LOCK_MIN,
    lockMaxKobo: e.SAVINGS_LOCK_MAX,
    daysMin: e.SAVINGS_DAYS_MIN,
    daysMax: e.SAVINGS_DAYS_MAX,
    breakPenaltyBp: e.SAVINGS_BREAK_PENALTY_PERCENT,
    /** Thresholds on the total ever locked, kobo, ascending. */
    milestonesKobo: e.SAVINGS_MILESTONES,
  };
}

function storageConfig(e: EnvValues) {
  if (e.S3_BUCKET === undefined) {
    // Credentials or an endpoint without a bucket mean S3 was intended: keeping identity documents
    // on local disk instead, silently, would be the wrong surprise.
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const) {
      if (e[name] !== undefined) throw new Refusal('S3_BUCKET', `required when ${name} is set`);
    }
    return { kind: 'local' as const };
  }
  if (e.S3_ACCESS_KEY_ID === undefined)
    throw new Refusal('S3_ACCESS_KEY_ID', 'required when S3_BUCKET is set');
  if (e.S3_SECRET_ACCESS_KEY === undefined)
    throw new Refusal('S3_SECRET_ACCESS_KEY', 'required when S3_BUCKET is set');
  return {
    kind: 's3' as const,
    bucket: e.S3_BUCKET,
    region: e.S3_REGION,
    endpoint: e.S3_ENDPOINT,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
    accessKeyId: e.S3_ACCESS_KEY_ID,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY,
  };
}
