import type { Agent } from 'node:https';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Dispatcher } from 'undici';
import {
  type Clock,
  createFollowingClock,
  createSandboxClock,
  type SandboxClock,
  systemClock,
} from './clock.ts';
import {
  type Config,
  publicBaseUrl,
  type RealProviders,
  type SandboxProviders,
  type VtuProviderName,
} from './config.ts';
import { configuredTarget, type Database, type DatabaseTarget, openDatabase } from './db/database.ts';
import { assertMigrated, migrateOpened } from './db/migrate.ts';
import { createEventBus, domainEventDefinition } from './events/domain-events.ts';
import { airtimeCashCallbackPath } from './http/airtime-cash-callback-route.ts';
import { idempotencyPurgeDefinition } from './http/idempotency-store.ts';
import { createServiceMetrics, type ServiceMetrics } from './http/metrics.ts';
import { paymentWebhookPath } from './http/payment-webhook-route.ts';
import { sandboxClockJobsPath } from './http/sandbox-clock-route.ts';
import { ussdCallbackPrefix } from './http/ussd-callback-route.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { documentUrlKey } from './kyc/document-urls.ts';
import { openLedgerShards } from './ledger/accounts.ts';
import { loggedRequest, redactUrlCredentials } from './log-redaction.ts';
import type { DomainModule } from './module.ts';
import { createModules, type Infrastructure, type Modules } from './modules.ts';
import type { AnyOperation } from './operation.ts';
import { type Resolve, resolveAll } from './outbound-addresses.ts';
import { toE164 } from './phone.ts';
import { createHttpMailboxMailer, createSmtpMailer, type Mailer } from './providers/email/mailer.ts';
import { createOutboundAgent } from './providers/http-exchange.ts';
import { createDojahKycProvider } from './providers/kyc/dojah-client.ts';
import type { KycProvider } from './providers/kyc/kyc-provider.ts';
import type { PaymentProvider } from './providers/payments/payment-provider.ts';
import { createPaystackClient } from './providers/payments/paystack-client.ts';
import { createWebPushSender, type PushSender, sandboxVapidKeys } from './providers/push/web-push-sender.ts';
import { linkSandboxClock, type SandboxClockLink } from './providers/sandbox/clock-link.ts';
import { createHttpSmsGateway, type SmsSender } from './providers/sms/sms-gateway.ts';
import type { DocumentStore } from './providers/storage/document-store.ts';
import { createLocalDocumentStore } from './providers/storage/local-store.ts';
import { createS3DocumentStore } from './providers/storage/s3-store.ts';
import { createAirtimeCashClient } from './providers/vtu/airtime-cash-client.ts';
import { combineProviders } from './providers/vtu/combined-provider.ts';
import { createDataVendorClient } from './providers/vtu/data-vendor-client.ts';
import { createSmmPanelClient } from './providers/vtu/smm-panel-client.ts';
import { createVtpassClient } from './providers/vtu/vtpass-client.ts';
import type { VtuProvider } from './providers/vtu/vtu-provider.ts';
import type { SandboxEndpoints } from './push/endpoint-policy.ts';
import { pushAgent } from './push/push-agent.ts';
import { createSandboxMailer } from './sandbox/mailbox.ts';
import { isSandboxPushEndpoint } from './sandbox/push/push-service.ts';
import { createSandbox } from './sandbox/routes.ts';
import {
  createSandboxState,
  SANDBOX_KYC_APP_ID,
  SANDBOX_KYC_SECRET,
  SANDBOX_SMS_API_KEY,
  type Sandbox,
  type SandboxState,
} from './sandbox/state.ts';
import { SANDBOX_AIRTIME_CASH_API_KEY, sandboxAirtimeCashPath } from './sandbox/vtu/airtime-cash.ts';
import {
  SANDBOX_BILLS_API_KEY,
  SANDBOX_BILLS_PUBLIC_KEY,
  SANDBOX_BILLS_SECRET_KEY,
} from './sandbox/vtu/bills.ts';
import { SANDBOX_DATA_TOKEN } from './sandbox/vtu/data-state.ts';
import { SANDBOX_SOCIAL_API_KEY, sandboxSocialPath } from './sandbox/vtu/social.ts';
import type { DebitRule } from './vtu/debit-rules.ts';

// The composition root: the one place that builds the database, the job queue, the clock and every
// adapter. Tests pass overrides (an in-memory database, their own clock) instead of monkey-patching.

export type Context = Omit<Infrastructure, 'debitRules' | 'sandboxPushEndpoints'> & {
  /** Present in the sandbox: POST /__sandbox/clock moves it. */
  sandboxClock: SandboxClock | undefined;
  /** The domain modules, by name: only main.ts, app.ts and tests read the composed whole. */
  modules: Modules;
  /** Every operation of the contract: the modules' lists put together. */
  operations: readonly AnyOperation[];
  /** The in-process simulators of the outside parties (SANDBOX=1 without SANDBOX_URL). */
  sandbox: Sandbox | undefined;
  /**
   * With a standalone sandbox (SANDBOX_URL): the token its clock-jobs call shows, and the link that
   * makes this process follow its clock (the call's new time included).
   */
  sandboxLink: { clockJobsToken: string; clock: SandboxClockLink } | undefined;
  close(): Promise<void>;
};

export type ContextOverrides = {
  database?: DatabaseTarget;
  clock?: Clock;
  logger?: Logger;
  rateLimitNamespace?: string;
  /** Where local documents go (tests use a temporary directory). */
  documentsDir?: string;
  /** The purchase rules decided at debit time (src/vtu/debit-rules.ts); none by default. */
  debitRules?: readonly DebitRule[];
  /** The TLS agent of Web Push (tests trust their local push service with it). */
  pushAgent?: Agent;
  /** The look-up of the outbound-address checks (tests answer with the addresses they judge). */
  resolveHost?: Resolve;
};

/**
 * The clock: the system's (or a test's); in the sandbox, one moved by POST /__sandbox/clock, which is
 * this process's own when the sandbox is served in process, or followed over HTTP when it runs as its
 * own process (read first, waiting for it to answer: start-up fails after a bound).
 */
async function createClocks(config: Config, overrides: ContextOverrides, logger: Logger) {
  const base = overrides.clock ?? systemClock;
  const { providers } = config;
  if (providers.mode === 'sandbox' && providers.remote !== undefined) {
    const clock = createFollowingClock(base);
    const link = await linkSandboxClock({
      sandboxUrl: providers.remote.url,
      clock,
      base,
      pollMs: providers.remote.clockPollMs,
      startTimeoutMs: providers.remote.startTimeoutMs,
      logger,
    });
    return { clock, sandboxClock: undefined, link };
  }
  const sandboxClock = providers.mode === 'sandbox' ? createSandboxClock(base) : undefined;
  return { clock: sandboxClock ?? base, sandboxClock, link: undefined };
}

/** The service's logger; tests pass a destination to read what it writes. */
export function createLogger(config: Pick<Config, 'logLevel'>, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level: config.logLevel,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers["x-payment-signature"]',
        'req.headers["x-paystack-signature"]',
        '*.pin',
        '*.otpCode',
        '*.code',
        '*.accessToken',
        '*.refreshToken',
      ],
      censor: '[redacted]',
    },
    // Credentials in query strings (signed document URLs, liveness tokens) never reach a log line.
    serializers: { req: loggedRequest },
    hooks: { streamWrite: redactUrlCredentials },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<Context> {
  const logger = overrides.logger ?? createLogger(config);
  // Before anything is opened: a standalone sandbox that never answers fails the start cleanly.
  const { clock, sandboxClock, link: clockLink } = await createClocks(config, overrides, logger);
  let database: Database;
  try {
    database = await openMigrated(config, overrides, logger, clock.now());
  } catch (error) {
    clockLink?.stop();
    throw error;
  }
  // The context's own connection pools, closed by close(): the adapters' calls to outside parties go
  // through `outbound`, Web Push through its TLS agent (unless a test passes its own).
  const metrics = createServiceMetrics();
  const outbound = createOutboundAgent(metrics.exchanges);
  const ownPushAgent = overrides.pushAgent === undefined ? pushAgent() : undefined;
  // What is open so far, closed again by close() or by a failed start, whichever comes.
  const opened: Opened = { database, outbound, ownPushAgent, clockLink };
  try {
    const baseUrl = publicBaseUrl(config.http);
    const { providers } = config;
    // The simulators' state lives here only when the sandbox is served in process.
    const sandboxState =
      providers.mode === 'sandbox' && providers.remote === undefined ? createSandboxState() : undefined;
    const reach: AdapterReach = {
      baseUrl,
      clock,
      sandboxState,
      outbound,
      pushAgent: overrides.pushAgent ?? ownPushAgent,
    };
    const adapters =
      providers.mode === 'real'
        ? realAdapters(config, providers, reach)
        : sandboxAdapters(config, providers, reach);
    return await composeContext(config, overrides, opened, {
      logger,
      clock,
      sandboxClock,
      clockLink,
      baseUrl,
      sandboxState,
      adapters,
      documents: await documentStore(config, overrides),
      adminPhones: new Set(config.adminPhones.map((p) => toE164(p)).filter((p): p is string => p !== null)),
      metrics,
    });
  } catch (error) {
    await closeOpened(opened);
    throw error;
  }
}

/**
 * The database, opened and migrated. Outside production every start migrates (a newcomer's npm start,
 * the test worlds); in production npm run migrate runs once per deploy, and a process on a database
 * behind its code stops here. MIGRATION_DATABASE_URL applies to the configured database only, not to
 * one a test hands over.
 */
async function openMigrated(
  config: Config,
  overrides: ContextOverrides,
  logger: Logger,
  now: Date,
): Promise<Database> {
  const target: DatabaseTarget = overrides.database ?? configuredTarget(config);
  const database = await openDatabase(target, {
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection failed'),
  });
  try {
    if (config.database.migrateOnStart)
      await migrateOpened(
        database,
        target,
        overrides.database === undefined ? config.database.migrationUrl : undefined,
      );
    else await assertMigrated(database.db as Kysely<unknown>);
    // Before any posting can name one: the shards LEDGER_SHARDS asks for, past the migration's 8.
    await openLedgerShards(database.db, config.database.ledgerShards, now);
    return database;
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** What every adapter set is built with: where this service is, and the pools its calls go through. */
type AdapterReach = {
  /** This service's public base URL, known before anything is built (config.ts publicBaseUrl). */
  baseUrl: string;
  clock: Clock;
  /** The simulators' state, when the sandbox is served in process. */
  sandboxState: SandboxState | undefined;
  outbound: Dispatcher;
  pushAgent: Agent | undefined;
};

/** The adapters to the outside parties, one set per provider mode. */
type Adapters = {
  sms: SmsSender;
  payments: PaymentProvider;
  mailer: Mailer;
  push: PushSender;
  kycProvider: KycProvider;
  vtuProviders: Record<VtuProviderName, VtuProvider>;
  /** In the sandbox: its push service's endpoints, accepted and pushed to over the outbound pool. */
  sandboxPushEndpoints: SandboxEndpoints | undefined;
};

/** Where identity documents are kept: S3 when a bucket is configured, else a local directory. */
async function documentStore(config: Config, overrides: ContextOverrides): Promise<DocumentStore> {
  const { storage } = config;
  if (storage.kind === 'local')
    return createLocalDocumentStore(overrides.documentsDir ?? path.join(config.dataDir, 'kyc-documents'));
  // The S3 SDK is loaded only here, by a process with a bucket configured.
  return await createS3DocumentStore({
    bucket: storage.bucket,
    region: storage.region,
    ...(storage.endpoint !== undefined ? { endpoint: storage.endpoint } : {}),
    forcePathStyle: storage.forcePathStyle,
    accessKeyId: storage.accessKeyId,
    secretAccessKey: storage.secretAccessKey,
  });
}

/** SMTP when SMTP_URL is set, in the sandbox too, so that a real mail server can be tried against it. */
function smtpMailer(config: Config): Mailer | undefined {
  const { mail } = config;
  if (mail.smtpUrl === undefined) return undefined;
  return createSmtpMailer({ url: mail.smtpUrl, from: mail.from, timeoutMs: mail.timeoutMs });
}

/**
 * Where each party reached over HTTP answers, and with which credentials: the real providers'
 * settings, or the sandbox's simulators with the sandbox's own keys. One set of adapters serves both.
 */
type PartyEndpoints = VtuEndpoints & {
  sms: { baseUrl: string; apiKey: string };
  kyc: { baseUrl: string; appId: string; secretKey: string };
  payments: RealProviders['payments'];
};

/** The adapters of the parties reached over HTTP, at the endpoints given. */
function partyAdapters(
  config: Config,
  endpoints: PartyEndpoints,
  reach: AdapterReach,
): Pick<Adapters, 'sms' | 'kycProvider' | 'payments' | 'vtuProviders'> {
  const { outbound: dispatcher } = reach;
  return {
    sms: createHttpSmsGateway({
      baseUrl: endpoints.sms.baseUrl,
      apiKey: endpoints.sms.apiKey,
      senderId: config.sms.senderId,
      timeoutMs: config.sms.timeoutMs,
      dispatcher,
    }),
    kycProvider: createDojahKycProvider({
      baseUrl: endpoints.kyc.baseUrl,
      appId: endpoints.kyc.appId,
      secretKey: endpoints.kyc.secretKey,
      timeoutMs: config.kyc.timeoutMs,
      dispatcher,
    }),
    payments: createPaystackClient({
      baseUrl: endpoints.payments.baseUrl,
      // Paystack has one secret key for its API and for signing its webhooks.
      secretKey: config.secrets.paymentSigning,
      timeoutMs: config.payments.timeoutMs,
      dispatcher,
    }),
    vtuProviders: createVtuProviders(config, reach, endpoints),
  };
}

/** The real providers, each at its configured address with its credentials. */
function realAdapters(config: Config, providers: RealProviders, reach: AdapterReach): Adapters {
  return {
    ...partyAdapters(config, providers, reach),
    // Without SMTP_URL (allowed only while OPS_EMAIL is unset), sending fails loudly.
    mailer: smtpMailer(config) ?? {
      send: () => Promise.reject(new Error('no SMTP_URL configured: email cannot be sent')),
    },
    push: createWebPushSender({
      keys: providers.vapid.keys,
      subject: providers.vapid.subject,
      timeoutMs: config.push.timeoutMs,
      agent: reach.pushAgent,
    }),
    sandboxPushEndpoints: undefined,
  };
}

/**
 * The sandbox's simulators of every outside party, reached over HTTP like the real ones: at this
 * service's own address, or at the standalone sandbox's (SANDBOX_URL).
 */
function sandboxAdapters(config: Config, providers: SandboxProviders, reach: AdapterReach): Adapters {
  const { outbound: dispatcher, sandboxState } = reach;
  const simulators = providers.remote?.url ?? reach.baseUrl;
  // SANDBOX_VTU_BASE_URL names another service's simulators (config refuses it with SANDBOX_URL).
  const vtuSimulators = providers.vtuBaseUrl ?? simulators;
  // Its push service's endpoints, at the simulators' address, are accepted and pushed to through the
  // outbound pool; a known push service whose name does not resolve (offline) is accepted too
  // (API.md section 8).
  const sandboxPushEndpoints: SandboxEndpoints = {
    ownPushService: (endpoint) => isSandboxPushEndpoint(endpoint, simulators),
    allowUnresolved: true,
  };
  // The mailbox in process, or the standalone sandbox's over HTTP.
  const sandboxMailer =
    sandboxState !== undefined
      ? createSandboxMailer(sandboxState, reach.clock, config.mail.from)
      : createHttpMailboxMailer({
          sandboxUrl: simulators,
          from: config.mail.from,
          timeoutMs: config.mail.timeoutMs,
        });
  const simulated: PartyEndpoints = {
    sms: { baseUrl: `${simulators}/__sandbox/sms-gateway`, apiKey: SANDBOX_SMS_API_KEY },
    kyc: { baseUrl: `${simulators}/__sandbox/kyc`, appId: SANDBOX_KYC_APP_ID, secretKey: SANDBOX_KYC_SECRET },
    payments: { baseUrl: `${simulators}/__sandbox/payments` },
    data: { baseUrl: `${vtuSimulators}/__sandbox/vtu/data`, token: SANDBOX_DATA_TOKEN },
    bills: {
      baseUrl: `${vtuSimulators}/__sandbox/vtu/bills/api`,
      apiKey: SANDBOX_BILLS_API_KEY,
      publicKey: SANDBOX_BILLS_PUBLIC_KEY,
      secretKey: SANDBOX_BILLS_SECRET_KEY,
    },
    airtimeCash: {
      baseUrl: `${vtuSimulators}${sandboxAirtimeCashPath}`,
      apiKey: SANDBOX_AIRTIME_CASH_API_KEY,
    },
    social: { baseUrl: `${vtuSimulators}${sandboxSocialPath}`, apiKey: SANDBOX_SOCIAL_API_KEY },
  };
  return {
    ...partyAdapters(config, simulated, reach),
    mailer: smtpMailer(config) ?? sandboxMailer,
    // With a standalone sandbox the keys come from the environment (config requires them there: every
    // process must push with the key the subscriptions were made with); otherwise made in DATA_DIR.
    push: createWebPushSender({
      keys: providers.vapid.keys ?? sandboxVapidKeys(config.dataDir),
      subject: providers.vapid.subject,
      timeoutMs: config.push.timeoutMs,
      agent: reach.pushAgent,
      localRoute: { endpoints: sandboxPushEndpoints.ownPushService, dispatcher },
    }),
    sandboxPushEndpoints,
  };
}

/** What a context holds open, in the order close() ends it: jobs, cache, pools, database. */
type Opened = {
  jobs?: JobQueue;
  catalogue?: { close(): Promise<void> };
  /** The purchases' module: what counts the providers' send rates. */
  vtu?: { close(): Promise<void> };
  outbound: Dispatcher;
  ownPushAgent: Agent | undefined;
  /** The poll of a standalone sandbox's clock. */
  clockLink: SandboxClockLink | undefined;
  database: Database;
};

async function closeOpened(opened: Opened): Promise<void> {
  await opened.jobs?.stop();
  await opened.catalogue?.close();
  await opened.vtu?.close();
  // Every call to an outside party has ended (purchases drained, jobs stopped) or ends now.
  await opened.outbound.close();
  opened.ownPushAgent?.destroy();
  opened.clockLink?.stop();
  await opened.database.close();
}

/**
 * The second half of createContext, once the database and the adapters exist: the job queue, the
 * modules, their jobs and subscribers, and the sandbox. Whatever it opens goes into `opened`.
 */
async function composeContext(
  config: Config,
  overrides: ContextOverrides,
  opened: Opened,
  parts: {
    logger: Logger;
    clock: Clock;
    sandboxClock: SandboxClock | undefined;
    clockLink: SandboxClockLink | undefined;
    baseUrl: string;
    sandboxState: SandboxState | undefined;
    adapters: Adapters;
    documents: DocumentStore;
    adminPhones: ReadonlySet<string>;
    metrics: ServiceMetrics;
  },
): Promise<Context> {
  const { logger, clock, sandboxClock, clockLink, baseUrl, sandboxState, adminPhones } = parts;
  const { sms, payments, mailer, push, kycProvider, vtuProviders } = parts.adapters;
  const { database } = opened;
  // The job queue exists before the modules, which enqueue through it; their jobs are registered
  // with it once they are built (jobs.define below).
  const jobs = await createJobQueue(database, {
    logger,
    runWorkers: config.runWorker,
    finishedJobsKeptDays: config.retention.jobsDays,
    ...(clockLink !== undefined ? { beforeBatch: clockLink.refreshIfStale } : {}),
  });
  opened.jobs = jobs;
  const events = createEventBus();

  const infrastructure: Infrastructure = {
    config,
    clock,
    logger,
    database,
    db: database.db,
    jobs,
    events,
    sms,
    payments,
    mailer,
    push,
    resolveHost: overrides.resolveHost ?? resolveAll,
    kyc: { provider: kycProvider, documents: parts.documents, urlKey: documentUrlKey(config.secrets.pepper) },
    vtuProviders,
    adminPhones,
    baseUrl,
    rateLimitNamespace: overrides.rateLimitNamespace ?? 'billrail-rl:',
    debitRules: overrides.debitRules ?? [],
    sandboxPushEndpoints: parts.adapters.sandboxPushEndpoints,
    metrics: parts.metrics,
  };
  const modules = createModules(infrastructure);
  opened.catalogue = modules.catalogue;
  opened.vtu = modules.vtu;
  const moduleList: DomainModule[] = Object.values(modules);
  await jobs.define([
    domainEventDefinition(events),
    idempotencyPurgeDefinition(database.db, clock),
    ...moduleList.flatMap((m) => m.jobs),
  ]);
  for (const subscription of moduleList.flatMap((m) => m.subscribers)) {
    if ('handleBatch' in subscription) events.subscribeBatch(subscription.event, subscription.handleBatch);
    else events.subscribe(subscription.event, subscription.handle);
  }
  // The sandbox gets what its simulators need, never the context: it reaches the service over HTTP.
  const sandbox =
    sandboxState !== undefined && sandboxClock !== undefined
      ? createSandbox(sandboxState, {
          clock: sandboxClock,
          paymentSigningSecret: config.secrets.paymentSigning,
          publicBaseUrl: baseUrl,
          paymentWebhookUrl: `${baseUrl}${paymentWebhookPath}`,
          clockJobsUrl: `${baseUrl}${sandboxClockJobsPath}`,
          vtuFundingAccounts: {
            data: config.vtu.data.funding.accountNumber,
            bills: config.vtu.bills.funding.accountNumber,
            social: config.vtu.social.funding.accountNumber,
          },
          pushApplicationServerKey: push.publicKey,
          // In the sandbox the service always has a callback token (a random one when unset).
          ussdCallbackUrl:
            config.ussd.callbackToken === undefined
              ? undefined
              : `${baseUrl}${ussdCallbackPrefix}${config.ussd.callbackToken}`,
          ussdServiceCode: config.ussd.serviceCode,
        })
      : undefined;
  return {
    ...infrastructure,
    sandboxClock,
    modules,
    operations: moduleList.flatMap((m) => m.operations),
    sandbox,
    sandboxLink:
      clockLink !== undefined && config.providers.mode === 'sandbox' && config.providers.remote !== undefined
        ? { clockJobsToken: config.providers.remote.clockToken, clock: clockLink }
        : undefined,
    close: async () => {
      // A purchase being sent finishes (or times out) and is settled before the database goes.
      await modules.vtu.api.drained();
      await modules.funding.api.paymentEvents.drained();
      await closeOpened(opened);
    },
  };
}

/** Where each VTU adapter calls and with what credentials: the real provider's, or its simulator's. */
type VtuEndpoints = {
  data: { baseUrl: string; token: string };
  bills: { baseUrl: string; apiKey: string; publicKey: string; secretKey: string };
  airtimeCash: { baseUrl: string; apiKey: string };
  social: { baseUrl: string; apiKey: string };
};

/** The three VTU adapters, each pointed at its provider or at its sandbox simulator over HTTP. */
function createVtuProviders(
  config: Config,
  reach: AdapterReach,
  endpoints: VtuEndpoints,
): Record<VtuProviderName, VtuProvider> {
  const { vtu } = config;
  const { timeoutMs } = vtu;
  const dispatcher = reach.outbound;
  const { data, bills, airtimeCash, social } = endpoints;
  return {
    data: createDataVendorClient({
      name: 'data',
      baseUrl: data.baseUrl,
      token: data.token,
      timeoutMs,
      networkIds: vtu.data.networkIds,
      dispatcher,
    }),
    // SPEC.md item 3 routes airtime-to-cash to the bills party; VTpass sells none, so the party's
    // airtime-to-cash goes through a reseller's Airtime2Cash API beside it.
    bills: combineProviders(
      'bills',
      createVtpassClient({ name: 'bills', ...bills, baseUrl: bills.baseUrl, timeoutMs, dispatcher }),
      createAirtimeCashClient({
        name: 'bills',
        baseUrl: airtimeCash.baseUrl,
        apiKey: airtimeCash.apiKey,
        timeoutMs,
        // The provider calls this service back, wherever the simulators run.
        callbackUrl: `${reach.baseUrl}${airtimeCashCallbackPath}`,
        dispatcher,
      }),
    ),
    social: createSmmPanelClient({
      name: 'social',
      baseUrl: social.baseUrl,
      apiKey: social.apiKey,
      timeoutMs,
      ...(vtu.social.koboPerUsd === undefined ? {} : { koboPerCurrencyUnit: { USD: vtu.social.koboPerUsd } }),
      dispatcher,
    }),
  };
}
