import { BlockList, isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { isNairaAmount, nairaToKobo } from './money.ts';

// The only place that reads process.env. Everything else receives the parsed Config.

const SANDBOX_SIGNING_SECRET = 'sk_test_sandbox';
const SANDBOX_PEPPER = 'sandbox-pepper-not-for-production';

const booleanFlag = z.enum(['0', '1', 'true', 'false']).transform((v) => v === '1' || v === 'true');
const port = z.coerce.number().int().min(0).max(65535);
const optionalUrl = z.url({ protocol: /^https?$/ }).optional();
const percentPattern = /^\d{1,3}(\.\d{1,2})?$/;

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
  const [whole, fraction = ''] = percent.split('.');
  return BigInt(whole!) * 100n + BigInt(fraction.padEnd(2, '0'));
}

/** A naira amount setting: positive, at most two decimals, at most ₦1,000,000,000. */
const nairaSetting = z.coerce
  .number()
  .positive()
  .max(1_000_000_000)
  .refine(isNairaAmount, { message: 'naira with at most two decimals' });
const fundingAccountPattern = /^\d{3,6}:\d{10}:.{1,100}$/;
const fundingAccountHint = 'bankCode:accountNumber:Account Name, such as 058:0123456789:Vendor Ltd';

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

/** The sandbox simulators' bank accounts (ending in 0: the sandbox bank settles such transfers). */
export const sandboxFundingAccounts: Record<VtuProviderName, string> = {
  data: '058:9900000010:Sandbox Data Vendor',
  bills: '058:9900000020:Sandbox Bills Aggregator',
  social: '058:9900000030:Sandbox Social Panel',
};

export type VtuProviderConfig = {
  /** Unused in the sandbox, which simulates the provider. */
  baseUrl: string | undefined;
  funding: { bankCode: string; accountNumber: string; accountName: string };
};

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  PORT: port.default(3000),
  // A worker-only process (npm run worker) serves /metrics, /healthz and /readyz on this port when set.
  METRICS_PORT: port.optional(),
  HOST: z.string().min(1).default('127.0.0.1'),
  TRUST_PROXY_HOPS: z.coerce.number().int().min(0).max(10).default(0),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().min(1).max(200).default(20),
  // How long a statement, or a wait for a pooled connection, may take (ms; 0: no bound): a database
  // that stops answering fails requests with 503 within it rather than hanging them (decision 0025).
  DATABASE_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(4_000),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  SANDBOX: booleanFlag.optional(),
  PUBLIC_BASE_URL: optionalUrl,
  PAYMENT_SIGNING_SECRET: z.string().min(8).optional(),
  SECRET_PEPPER: z.string().min(16).optional(),
  ADMIN_PHONES: z.string().default(''),
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
    .default(''),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).max(1_000_000).default(120),
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
    .default('fcm.googleapis.com,updates.push.services.mozilla.com,*.push.apple.com,*.notify.windows.com'),
  PUSH_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  OPS_EMAIL: z.email().optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  MAIL_FROM: z.string().min(3).max(200).default('billrail <no-reply@billrail.invalid>'),
  SMS_BASE_URL: optionalUrl,
  SMS_API_KEY: z.string().min(1).optional(),
  SMS_SENDER_ID: z.string().min(1).max(11).default('billrail'),
  PAYSTACK_BASE_URL: z.url({ protocol: /^https?$/ }).default('https://api.paystack.co'),
  PAYSTACK_PREFERRED_BANK: z
    .string()
    .regex(/^[a-z0-9-]{1,64}$/, 'a provider slug such as wema-bank')
    .optional(),
  KYC_BASE_URL: optionalUrl,
  KYC_APP_ID: z.string().min(1).optional(),
  KYC_SECRET_KEY: z.string().min(1).optional(),
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
  DATA_PROVIDER_BASE_URL: optionalUrl,
  DATA_PROVIDER_TOKEN: z.string().min(1).optional(),
  DATA_PROVIDER_NETWORK_IDS: z
    .string()
    .regex(
      /^(mtn|glo|airtel|9mobile)=\d+(,(mtn|glo|airtel|9mobile)=\d+)*$/,
      'a list such as mtn=1,glo=2,9mobile=3,airtel=4',
    )
    .optional(),
  BILLS_BASE_URL: optionalUrl,
  BILLS_API_KEY: z.string().min(1).optional(),
  BILLS_PUBLIC_KEY: z.string().min(1).optional(),
  BILLS_SECRET_KEY: z.string().min(1).optional(),
  // The bills party's airtime-to-cash API (VTpass sells none): a reseller's Airtime2Cash endpoints.
  AIRTIME_CASH_BASE_URL: optionalUrl,
  AIRTIME_CASH_API_KEY: z.string().min(1).optional(),
  SOCIAL_BASE_URL: optionalUrl,
  SOCIAL_API_KEY: z.string().min(1).optional(),
  SOCIAL_KOBO_PER_USD: z.coerce.bigint().positive().optional(),
  VTU_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(20_000),
  // Purchases one process sends at once, at most (src/vtu/dispatch.ts). Default: 64 on PGlite, 512 on
  // PostgreSQL.
  VTU_SENDS_MAX: z.coerce.number().int().min(1).max(100_000).optional(),
  // Sandbox only: the service whose /__sandbox/vtu simulators the VTU adapters use (default: this
  // one's own), so that a simulator can outlive this process (the crash test kills it).
  SANDBOX_VTU_BASE_URL: optionalUrl,
  // Sandbox only: a sandbox running as its own process (npm run sandbox) that this process uses for
  // every outside party, over HTTP, and whose clock it follows; unset: the sandbox is served in process.
  SANDBOX_URL: optionalUrl,
  // With SANDBOX_URL: the secret the standalone sandbox shows this process's clock-jobs route.
  SANDBOX_CLOCK_TOKEN: z.string().min(16, 'at least 16 characters').optional(),
  // The least one float top-up sends (naira), so that a run of small purchases makes one transfer.
  VTU_FLOAT_TOPUP_MIN: z.coerce.number().int().min(1).max(100_000_000).default(50_000),
  // The float (naira) below which operators are warned (the /metrics floor and its alert): just-in-time
  // funding still tops a provider up per purchase; the floor says the pool is being drawn on.
  VTU_FLOAT_FLOOR: z.coerce.number().int().min(0).max(1_000_000_000).default(50_000),
  // The largest markup an admin may set (adminSetMarkup): a typo such as a flat ₦91,967,931 would
  // otherwise price every purchase of a service out of reach until someone noticed.
  VTU_MARKUP_FLAT_MAX: z.coerce.number().int().min(0).max(1_000_000).default(10_000),
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
  DATA_FUNDING_ACCOUNT: z.string().regex(fundingAccountPattern, fundingAccountHint).optional(),
  BILLS_FUNDING_ACCOUNT: z.string().regex(fundingAccountPattern, fundingAccountHint).optional(),
  SOCIAL_FUNDING_ACCOUNT: z.string().regex(fundingAccountPattern, fundingAccountHint).optional(),
  // Savings locks and growth (API.md section 9): naira, days and percent.
  SAVINGS_LOCK_MIN: nairaSetting.default(100),
  SAVINGS_LOCK_MAX: nairaSetting.default(10_000_000),
  SAVINGS_DAYS_MIN: z.coerce.number().int().min(1).max(3650).default(7),
  SAVINGS_DAYS_MAX: z.coerce.number().int().min(1).max(3650).default(365),
  // Read as text and turned into basis points by its digits: 2.55 * 100 is 254.99999999999997.
  SAVINGS_BREAK_PENALTY_PERCENT: z
    .string()
    .regex(percentPattern, 'a percent with at most two decimals')
    // Zod runs this one after a failed pattern too: only text that matched is converted.
    .refine((v) => !percentPattern.test(v) || basisPoints(v) <= 10_000n, 'at most 100')
    .default('5'),
  // Thresholds on the total ever locked, naira, ascending once parsed: 10000,50000,...
  SAVINGS_MILESTONES: z
    .string()
    .regex(/^\d{1,10}(,\d{1,10})*$/, 'a list of naira amounts such as 10000,50000,100000')
    .default('10000,50000,100000,500000,1000000'),
  // Airtime-to-cash (API.md section 14): the payout percent per network (default 80), and how long a
  // sale waits for the provider's confirmation before it fails with nothing moved.
  AIRTIME_TO_CASH_RATES: z
    .string()
    .regex(
      /^(mtn|glo|airtel|9mobile)=\d{1,2}(,(mtn|glo|airtel|9mobile)=\d{1,2})*$/,
      'a list of whole percents such as mtn=80,glo=75',
    )
    .optional(),
  AIRTIME_TO_CASH_WINDOW_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(30),
  // Wallet-to-wallet transfers (API.md section 14), naira: one transfer's most, and a sender's most
  // per Lagos day.
  TRANSFER_MAX: nairaSetting.default(500_000),
  TRANSFER_DAILY_MAX: nairaSetting.default(1_000_000),
  // Scheduled purchases (API.md section 16): runs the wallet could not cover in a row that pause a
  // schedule.
  SCHEDULE_SKIPS_MAX: z.coerce.number().int().min(1).max(100).default(3),
  // Disputes (API.md section 16): how many days after a movement its owner may still report it.
  DISPUTE_WINDOW_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  CHECKIN_REWARD: nairaSetting.default(10),
  CHECKIN_WITHDRAW_MINIMUM: nairaSetting.default(100),
  REFERRAL_BONUS: nairaSetting.default(200),
  WORKER: booleanFlag.default(true),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Env = z.input<typeof envSchema>;

export type Config = {
  env: 'development' | 'test' | 'production';
  http: {
    port: number;
    host: string;
    publicBaseUrl: string | undefined;
    trustProxyHops: number;
    /** Where a worker-only process (npm run worker) serves /metrics, /healthz, /readyz; none when unset. */
    metricsPort: number | undefined;
  };
  dataDir: string;
  /** timeoutMs: the bound on a statement or a wait for a connection (0: none); PostgreSQL only. */
  database: { url: string | undefined; poolMax: number; timeoutMs: number };
  redisUrl: string | undefined;
  sandbox: boolean;
  /**
   * With the sandbox on: what makes it reachable from beyond this machine (`HOST=0.0.0.0`, a public
   * `PUBLIC_BASE_URL`), for the start-up warning; empty while it listens on loopback alone.
   */
  sandboxExposedBy: string[];
  /**
   * With the sandbox on and SANDBOX_URL set: the standalone sandbox every outside party is reached at,
   * and the token its clock-jobs call shows; undefined: the sandbox is served in process.
   */
  sandboxRemote: { url: string; clockToken: string } | undefined;
  secrets: { paymentSigning: string; pepper: string };
  adminPhones: string[];
  rateLimitPerMinute: number;
  /** Origins whose browser pages may call the operations (CORS); empty: no CORS answer at all. */
  corsOrigins: string[];
  vapid: { publicKey: string | undefined; privateKey: string | undefined; subject: string | undefined };
  /** Web Push: the push services' hosts subscriptions may name, and how long one push may take. */
  push: { allowedHosts: string[]; timeoutMs: number };
  opsEmail: string | undefined;
  /** Transactional email: SMTP outside the sandbox; the sandbox keeps messages at /__sandbox/emails. */
  mail: { smtpUrl: string | undefined; from: string };
  sms: { baseUrl: string | undefined; apiKey: string | undefined; senderId: string };
  /**
   * The payment provider (Paystack's API); the sandbox simulates it when SANDBOX is on. preferredBank:
   * the bank dedicated virtual accounts are opened at (test-bank in the sandbox, wema-bank otherwise).
   */
  payments: { baseUrl: string; preferredBank: string };
  /** The KYC provider (liveness, NIN, bank account names); the sandbox simulates it when unset. */
  kyc: {
    baseUrl: string | undefined;
    appId: string | undefined;
    secretKey: string | undefined;
    /** Where the Tier 1 face check starts (the sandbox's page in the sandbox). */
    livenessUrl: string;
  };
  /** Where identity documents are kept: S3 when S3_BUCKET is set, else a private local directory. */
  storage: StorageConfig;
  /** The upstream VTU providers, their routing and the accounts that fund their floats. */
  vtu: {
    timeoutMs: number;
    /** Purchases this process sends at once, at most: the next waits for a place before its debit. */
    sendsMax: number;
    /** In the sandbox: the base URL of the service hosting the VTU simulators; undefined: this one. */
    sandboxBaseUrl: string | undefined;
    floatTopupMinKobo: bigint;
    /** The float below which operators are warned (/metrics billrail_provider_float_floor_kobo). */
    floatFloorKobo: bigint;
    /** The largest markup adminSetMarkup accepts: flat kobo and basis points. */
    markupMax: { flatKobo: bigint; percentBp: number };
    routes: Record<VtuServiceName, VtuProviderName>;
    data: VtuProviderConfig & { token: string | undefined; networkIds: Record<string, number> };
    bills: VtuProviderConfig & {
      apiKey: string | undefined;
      publicKey: string | undefined;
      secretKey: string | undefined;
    };
    social: VtuProviderConfig & {
      apiKey: string | undefined;
      koboPerUsd: bigint | undefined;
      /**
       * Whether an order's link may name a host that does not resolve. Off outside the sandbox (such
       * a link cannot be checked for an internal address); on in the sandbox, which runs offline and
       * whose panel visits no link.
       */
      allowUnresolvedLinks: boolean;
    };
    /** The bills party's airtime-to-cash API. */
    airtimeCash: { baseUrl: string | undefined; apiKey: string | undefined };
  };
  /** Savings locks (API.md section 9): amounts in kobo, the penalty in basis points of the amount. */
  savings: {
    lockMinKobo: bigint;
    lockMaxKobo: bigint;
    daysMin: number;
    daysMax: number;
    breakPenaltyBp: bigint;
    /** Thresholds on the total ever locked, kobo, ascending. */
    milestonesKobo: bigint[];
  };
  /** Airtime-to-cash: the payout per network in basis points of the airtime, and the window. */
  airtimeToCash: { rateBp: Record<'mtn' | 'glo' | 'airtel' | '9mobile', number>; windowMinutes: number };
  /** Wallet-to-wallet transfers, kobo. */
  transfers: { minKobo: bigint; maxKobo: bigint; dailyMaxKobo: bigint };
  /** Scheduled purchases: skips in a row that pause a schedule. */
  schedules: { skipsMax: number };
  /** Disputes (API.md section 16): the days after a movement in which it may be reported. */
  disputes: { windowDays: number };
  /** Growth rewards (API.md section 9), kobo. */
  growth: { checkinRewardKobo: bigint; checkinWithdrawMinKobo: bigint; referralBonusKobo: bigint };
  runWorker: boolean;
  logLevel: string;
};

export type StorageConfig =
  | { kind: 'local' }
  | {
      kind: 's3';
      bucket: string;
      region: string;
      endpoint: string | undefined;
      forcePathStyle: boolean;
      accessKeyId: string;
      secretAccessKey: string;
    };

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
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const name = issue?.path.join('.') ?? 'environment';
    throw new ConfigError(`invalid ${name}: ${issue?.message ?? 'bad value'}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const exposedBy = reachableBeyondLoopback(e.HOST, e.PUBLIC_BASE_URL);
  // The sandbox opens every sign-in code, the webhook signing secret and the clock to whoever
  // reaches it, so it is on by default only where nobody else can: listening on loopback alone.
  const sandbox = e.SANDBOX ?? (!production && exposedBy.length === 0);
  if (production && sandbox)
    throw new ConfigError('invalid SANDBOX: the sandbox is refused when NODE_ENV=production');
  // Said when a setting the sandbox would have supplied is missing because the sandbox is off by
  // that rule, not by choice: the operator most likely meant one of two things.
  const whySandboxOff =
    e.SANDBOX === undefined && !production && exposedBy.length > 0
      ? ` (the sandbox is on by default only while the service listens on loopback alone, and ${exposedBy.join(' and ')} ${exposedBy.length === 1 ? 'reaches' : 'reach'} beyond it: set SANDBOX=1 to run the sandbox there anyway, which opens sign-in codes, the signing secret and the clock to whoever reaches it, or configure the real providers)`
      : '';
  if (!sandbox && e.SANDBOX_URL !== undefined) {
    // Said first: the settings the sandbox would supply are missing for that very reason.
    throw new ConfigError(`invalid SANDBOX_URL: only used when SANDBOX is on${whySandboxOff}`);
  }
  if (!sandbox) {
    // Outside the sandbox there are no defaults for secrets or the outside parties' endpoints.
    const required: Array<keyof typeof e> = [
      'PAYMENT_SIGNING_SECRET',
      'SECRET_PEPPER',
      'SMS_BASE_URL',
      'SMS_API_KEY',
      'KYC_BASE_URL',
      'KYC_APP_ID',
      'KYC_SECRET_KEY',
      'KYC_LIVENESS_URL',
      // Web Push keys are generated into DATA_DIR only in the sandbox.
      'VAPID_PUBLIC_KEY',
      'VAPID_PRIVATE_KEY',
      'VAPID_SUBJECT',
    ];
    if (production) required.push('PUBLIC_BASE_URL');
    required.push(
      'DATA_PROVIDER_BASE_URL',
      'DATA_PROVIDER_TOKEN',
      'DATA_FUNDING_ACCOUNT',
      'BILLS_BASE_URL',
      'BILLS_API_KEY',
      'BILLS_PUBLIC_KEY',
      'BILLS_SECRET_KEY',
      'BILLS_FUNDING_ACCOUNT',
      'SOCIAL_BASE_URL',
      'SOCIAL_API_KEY',
      'SOCIAL_FUNDING_ACCOUNT',
      'AIRTIME_CASH_BASE_URL',
      'AIRTIME_CASH_API_KEY',
    );
    for (const name of required) {
      if (e[name] === undefined)
        throw new ConfigError(`invalid ${name}: required when SANDBOX is off${whySandboxOff}`);
    }
    // An operations address with no way to reach it would lose every alert email, silently.
    if (e.OPS_EMAIL !== undefined && e.SMTP_URL === undefined) {
      throw new ConfigError('invalid SMTP_URL: required when OPS_EMAIL is set and SANDBOX is off');
    }
    if (e.PAYMENT_SIGNING_SECRET === SANDBOX_SIGNING_SECRET) {
      throw new ConfigError(
        'invalid PAYMENT_SIGNING_SECRET: the sandbox secret is refused outside the sandbox',
      );
    }
    if (e.SECRET_PEPPER === SANDBOX_PEPPER) {
      throw new ConfigError('invalid SECRET_PEPPER: the sandbox pepper is refused outside the sandbox');
    }
    // Ignoring it would hide a mistake: someone meant the providers to be simulated somewhere.
    if (e.SANDBOX_VTU_BASE_URL !== undefined) {
      throw new ConfigError('invalid SANDBOX_VTU_BASE_URL: only used when SANDBOX is on');
    }
  }
  const sandboxRemote = sandbox ? remoteSandbox(e) : undefined;
  const storage = storageConfig(e);
  return {
    env: e.NODE_ENV,
    http: {
      port: e.PORT,
      metricsPort: e.METRICS_PORT,
      host: e.HOST,
      publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
      trustProxyHops: e.TRUST_PROXY_HOPS,
    },
    dataDir: path.resolve(e.DATA_DIR),
    database: { url: e.DATABASE_URL, poolMax: e.DATABASE_POOL_MAX, timeoutMs: e.DATABASE_TIMEOUT_MS },
    redisUrl: e.REDIS_URL,
    sandbox,
    sandboxExposedBy: sandbox ? exposedBy : [],
    sandboxRemote,
    secrets: {
      paymentSigning: e.PAYMENT_SIGNING_SECRET ?? SANDBOX_SIGNING_SECRET,
      pepper: e.SECRET_PEPPER ?? SANDBOX_PEPPER,
    },
    adminPhones: e.ADMIN_PHONES.split(',')
      .map((p) => p.trim())
      .filter((p) => p !== ''),
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    corsOrigins: e.CORS_ORIGINS.split(',')
      .map((origin) => origin.trim())
      .filter((origin) => origin !== ''),
    vapid: { publicKey: e.VAPID_PUBLIC_KEY, privateKey: e.VAPID_PRIVATE_KEY, subject: e.VAPID_SUBJECT },
    push: { allowedHosts: e.PUSH_ALLOWED_HOSTS.split(','), timeoutMs: e.PUSH_TIMEOUT_MS },
    opsEmail: e.OPS_EMAIL,
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    sms: { baseUrl: e.SMS_BASE_URL, apiKey: e.SMS_API_KEY, senderId: e.SMS_SENDER_ID },
    payments: {
      baseUrl: e.PAYSTACK_BASE_URL.replace(/\/+$/, ''),
      preferredBank: e.PAYSTACK_PREFERRED_BANK ?? (sandbox ? 'test-bank' : 'wema-bank'),
    },
    kyc: {
      baseUrl: e.KYC_BASE_URL?.replace(/\/+$/, ''),
      appId: e.KYC_APP_ID,
      secretKey: e.KYC_SECRET_KEY,
      // A standalone sandbox serves its page at its own address; behind a proxy that puts /__sandbox/
      // on the service's origin, KYC_LIVENESS_URL=<the proxy>/__sandbox/liveness keeps its hand-back there.
      livenessUrl: e.KYC_LIVENESS_URL ?? `${sandboxRemote?.url ?? ''}/__sandbox/liveness`,
    },
    storage,
    vtu: vtuConfig(e, sandbox),
    savings: savingsConfig(e),
    airtimeToCash: {
      rateBp: {
        mtn: 8000,
        glo: 8000,
        airtel: 8000,
        '9mobile': 8000,
        ...Object.fromEntries(
          (e.AIRTIME_TO_CASH_RATES?.split(',') ?? []).map((pair) => {
            const [network, percent] = pair.split('=');
            return [network!, Number(percent) * 100];
          }),
        ),
      },
      windowMinutes: e.AIRTIME_TO_CASH_WINDOW_MINUTES,
    },
    transfers: {
      minKobo: transferMinKobo,
      maxKobo: nairaToKobo(e.TRANSFER_MAX),
      dailyMaxKobo: nairaToKobo(e.TRANSFER_DAILY_MAX),
    },
    schedules: { skipsMax: e.SCHEDULE_SKIPS_MAX },
    disputes: { windowDays: e.DISPUTE_WINDOW_DAYS },
    growth: {
      checkinRewardKobo: nairaToKobo(e.CHECKIN_REWARD),
      checkinWithdrawMinKobo: nairaToKobo(e.CHECKIN_WITHDRAW_MINIMUM),
      referralBonusKobo: nairaToKobo(e.REFERRAL_BONUS),
    },
    runWorker: e.WORKER,
    logLevel: e.LOG_LEVEL,
  };
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

function vtuConfig(e: z.output<typeof envSchema>, sandbox: boolean): Config['vtu'] {
  const routes = { ...defaultVtuRoutes };
  for (const pair of e.VTU_ROUTES?.split(',') ?? []) {
    const [service, provider] = pair.split('=') as [string, VtuProviderName];
    if (!(vtuServices as readonly string[]).includes(service)) {
      throw new ConfigError(`invalid VTU_ROUTES: unknown service ${service}`);
    }
    routes[service as VtuServiceName] = provider;
  }
  const funding = (value: string | undefined, provider: VtuProviderName) => {
    const [bankCode, accountNumber, ...name] = (value ?? sandboxFundingAccounts[provider]).split(':');
    return { bankCode: bankCode!, accountNumber: accountNumber!, accountName: name.join(':') };
  };
  const trim = (url: string | undefined) => url?.replace(/\/+$/, '');
  return {
    timeoutMs: e.VTU_TIMEOUT_MS,
    sendsMax: e.VTU_SENDS_MAX ?? (e.DATABASE_URL === undefined ? sendsMaxOnPglite : sendsMaxOnPostgres),
    sandboxBaseUrl: trim(e.SANDBOX_VTU_BASE_URL),
    floatTopupMinKobo: BigInt(e.VTU_FLOAT_TOPUP_MIN) * 100n,
    floatFloorKobo: BigInt(e.VTU_FLOAT_FLOOR) * 100n,
    markupMax: { flatKobo: BigInt(e.VTU_MARKUP_FLAT_MAX) * 100n, percentBp: e.VTU_MARKUP_PERCENT_MAX * 100 },
    routes,
    data: {
      baseUrl: trim(e.DATA_PROVIDER_BASE_URL),
      token: e.DATA_PROVIDER_TOKEN,
      networkIds: Object.fromEntries(
        (e.DATA_PROVIDER_NETWORK_IDS?.split(',') ?? []).map((pair) => {
          const [network, id] = pair.split('=');
          return [network!, Number(id)];
        }),
      ),
      funding: funding(e.DATA_FUNDING_ACCOUNT, 'data'),
    },
    bills: {
      baseUrl: trim(e.BILLS_BASE_URL),
      apiKey: e.BILLS_API_KEY,
      publicKey: e.BILLS_PUBLIC_KEY,
      secretKey: e.BILLS_SECRET_KEY,
      funding: funding(e.BILLS_FUNDING_ACCOUNT, 'bills'),
    },
    social: {
      baseUrl: trim(e.SOCIAL_BASE_URL),
      apiKey: e.SOCIAL_API_KEY,
      koboPerUsd: e.SOCIAL_KOBO_PER_USD,
      funding: funding(e.SOCIAL_FUNDING_ACCOUNT, 'social'),
      allowUnresolvedLinks: sandbox,
    },
    airtimeCash: { baseUrl: trim(e.AIRTIME_CASH_BASE_URL), apiKey: e.AIRTIME_CASH_API_KEY },
  };
}

/**
 * The standalone sandbox (SANDBOX_URL), with what its processes must share: the clock-jobs token, and
 * the Web Push keys (each process would otherwise make its own in its DATA_DIR, and a subscription
 * made with one process's key would be refused by the push service when another pushes).
 */
function remoteSandbox(e: z.output<typeof envSchema>): Config['sandboxRemote'] {
  if (e.SANDBOX_URL === undefined) return undefined;
  const required = ['SANDBOX_CLOCK_TOKEN', 'VAPID_PUBLIC_KEY', 'VAPID_PRIVATE_KEY'] as const;
  for (const name of required) {
    if (e[name] === undefined) throw new ConfigError(`invalid ${name}: required when SANDBOX_URL is set`);
  }
  // SANDBOX_URL already names where the VTU simulators are; two answers would be one too many.
  if (e.SANDBOX_VTU_BASE_URL !== undefined) {
    throw new ConfigError(
      'invalid SANDBOX_VTU_BASE_URL: not used with SANDBOX_URL, which names the simulators',
    );
  }
  return { url: e.SANDBOX_URL.replace(/\/+$/, ''), clockToken: e.SANDBOX_CLOCK_TOKEN! };
}

/** API.md section 14: the least one wallet transfer moves (₦100). */
const transferMinKobo = 10_000n;

function savingsConfig(e: z.output<typeof envSchema>): Config['savings'] {
  if (e.SAVINGS_DAYS_MIN > e.SAVINGS_DAYS_MAX) {
    throw new ConfigError('invalid SAVINGS_DAYS_MIN: above SAVINGS_DAYS_MAX');
  }
  if (e.SAVINGS_LOCK_MIN > e.SAVINGS_LOCK_MAX) {
    throw new ConfigError('invalid SAVINGS_LOCK_MIN: above SAVINGS_LOCK_MAX');
  }
  const milestones = [...new Set(e.SAVINGS_MILESTONES.split(',').map((n) => BigInt(n) * 100n))]
    .filter((kobo) => kobo > 0n)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    lockMinKobo: nairaToKobo(e.SAVINGS_LOCK_MIN),
    lockMaxKobo: nairaToKobo(e.SAVINGS_LOCK_MAX),
    daysMin: e.SAVINGS_DAYS_MIN,
    daysMax: e.SAVINGS_DAYS_MAX,
    breakPenaltyBp: basisPoints(e.SAVINGS_BREAK_PENALTY_PERCENT),
    milestonesKobo: milestones,
  };
}

function storageConfig(e: z.output<typeof envSchema>): StorageConfig {
  if (e.S3_BUCKET === undefined) {
    // Credentials or an endpoint without a bucket mean S3 was intended: keeping identity documents
    // on local disk instead, silently, would be the wrong surprise.
    for (const name of ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'] as const) {
      if (e[name] !== undefined) throw new ConfigError(`invalid S3_BUCKET: required when ${name} is set`);
    }
    return { kind: 'local' };
  }
  if (e.S3_ACCESS_KEY_ID === undefined) {
    throw new ConfigError('invalid S3_ACCESS_KEY_ID: required when S3_BUCKET is set');
  }
  if (e.S3_SECRET_ACCESS_KEY === undefined) {
    throw new ConfigError('invalid S3_SECRET_ACCESS_KEY: required when S3_BUCKET is set');
  }
  return {
    kind: 's3',
    bucket: e.S3_BUCKET,
    region: e.S3_REGION,
    endpoint: e.S3_ENDPOINT,
    forcePathStyle: e.S3_FORCE_PATH_STYLE,
    accessKeyId: e.S3_ACCESS_KEY_ID,
    secretAccessKey: e.S3_SECRET_ACCESS_KEY,
  };
}
