import type { Agent } from 'node:https';
import path from 'node:path';
import type { Kysely } from 'kysely';
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import type { Dispatcher } from 'undici';
import { createAdminModule } from './admin/module.ts';
import { createAlertsModule } from './alerts/module.ts';
import { createAuthModule } from './auth/module.ts';
import { createBeneficiariesModule } from './beneficiaries/module.ts';
import { createBulkOrdersModule } from './bulk-orders/module.ts';
import { createCatalogueModule } from './catalogue/module.ts';
import {
  type Clock,
  createFollowingClock,
  createSandboxClock,
  type SandboxClock,
  systemClock,
} from './clock.ts';
import type { Config, VtuProviderName } from './config.ts';
import { configuredTarget, type Database, type DatabaseTarget, openDatabase } from './db/database.ts';
import { migrateOpened } from './db/migrate.ts';
import type { DB } from './db/schema.ts';
import { createDisputesModule } from './disputes/module.ts';
import { createEventBus, domainEventJob, type EventBus } from './events/domain-events.ts';
import { createFundingModule } from './funding/module.ts';
import { createGrowthModule } from './growth/module.ts';
import { airtimeCashCallbackPath } from './http/airtime-cash-callback-route.ts';
import { idempotencyPurgeJob } from './http/idempotency-store.ts';
import { createServiceMetrics, type ServiceMetrics } from './http/metrics.ts';
import { paymentWebhookPath } from './http/payment-webhook-route.ts';
import { sandboxClockJobsPath } from './http/sandbox-clock-route.ts';
import { createJobQueue, type JobQueue } from './jobs/queue.ts';
import { documentUrlKey } from './kyc/document-urls.ts';
import { createKycModule } from './kyc/module.ts';
import { loggedRequest, redactUrlCredentials } from './log-redaction.ts';
import type { DomainModule } from './module.ts';
import { createNotificationsModule } from './notifications/module.ts';
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
import { createPushModule } from './push/module.ts';
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
import { createSavingsModule } from './savings/module.ts';
import { createSchedulesModule } from './schedules/module.ts';
import { createTransfersModule } from './transfers/module.ts';
import type { DebitRule } from './vtu/debit-rules.ts';
import { createVtuModule } from './vtu/module.ts';
import { createWalletModule } from './wallet/module.ts';

// The composition root: the one place that builds the database, the job queue, the clock and every
// adapter. Tests pass overrides (an in-memory database, their own clock) instead of monkey-patching.

export type Context = {
  config: Config;
  clock: Clock;
  /** Present in the sandbox: POST /__sandbox/clock moves it. */
  sandboxClock: SandboxClock | undefined;
  logger: Logger;
  database: Database;
  db: Kysely<DB>;
  jobs: JobQueue;
  sms: SmsSender;
  /** The payment provider (Paystack's API; the sandbox's simulator when SANDBOX=1). */
  payments: PaymentProvider;
  /** Transactional email (SMTP; the sandbox's mailbox when SANDBOX=1). */
  mailer: Mailer;
  /** Web Push to users' own subscriptions (VAPID). */
  push: PushSender;
  /** Looks up a host's addresses for the outbound-address checks (social links, push endpoints). */
  resolveHost: Resolve;
  kyc: {
    provider: KycProvider;
    documents: DocumentStore;
    /** Signs the service's own short-lived document URLs (local storage). */
    urlKey: Buffer;
  };
  /** The upstream VTU providers by configuration name (data, bills, social); routing is config.vtu.routes. */
  vtuProviders: Record<VtuProviderName, VtuProvider>;
  /** Domain events (kyc.tier_approved, ...): subscribers run in the job worker. */
  events: EventBus;
  /** The domain modules, by name: only main.ts, app.ts and tests read the composed whole. */
  modules: Modules;
  /** Every operation of the contract: the modules' lists put together. */
  operations: readonly AnyOperation[];
  adminPhones: ReadonlySet<string>;
  /** The service's own public base URL; known only after listen when PORT is 0. */
  baseUrl: { current: string };
  /** The in-process simulators of the outside parties (SANDBOX=1 without SANDBOX_URL). */
  sandbox: Sandbox | undefined;
  /**
   * With a standalone sandbox (SANDBOX_URL): the token its clock-jobs call shows, and the link that
   * makes this process follow its clock (the call's new time included).
   */
  sandboxLink: { clockJobsToken: string; clock: SandboxClockLink } | undefined;
  /** Prefix of rate-limit keys in Redis, so that separate deployments (or tests) do not share counts. */
  rateLimitNamespace: string;
  /** This context's Prometheus registry and the ports reporting to it (/metrics). */
  metrics: ServiceMetrics;
  close(): Promise<void>;
};

/** What the composition root builds before any module: the modules' deps are picked from it. */
export type Infrastructure = Pick<
  Context,
  | 'config'
  | 'clock'
  | 'logger'
  | 'database'
  | 'db'
  | 'jobs'
  | 'events'
  | 'sms'
  | 'payments'
  | 'mailer'
  | 'push'
  | 'resolveHost'
  | 'kyc'
  | 'vtuProviders'
  | 'rateLimitNamespace'
  | 'adminPhones'
  | 'baseUrl'
  | 'metrics'
> & {
  /** The purchase rules decided at debit time (vtu/debit-rules.ts), from the overrides; none by default. */
  debitRules: readonly DebitRule[];
  /** In the sandbox: the push endpoints savePushSubscription lets through there; undefined outside it. */
  sandboxPushEndpoints: SandboxEndpoints | undefined;
};

/**
 * The domain modules, in dependency order: each is built from the deps it declares (its module.ts),
 * picked here from the infrastructure and from the `api` of the modules built before it.
 */
function createModules(infra: Infrastructure) {
  const { config, clock, logger, db, jobs } = infra;
  const pepper = config.secrets.pepper;
  // The modules others take an api from are built first.
  const auth = createAuthModule({
    db,
    clock,
    jobs,
    logger,
    batching: infra.database.batching,
    sms: infra.sms,
    mailer: infra.mailer,
    pepper,
    adminPhones: infra.adminPhones,
  });
  // The VTU catalogues and the banks, cached (in Redis when REDIS_URL is set): vtu prices from them
  // and kyc checks a bank against them.
  const catalogue = createCatalogueModule({
    db,
    config,
    clock,
    logger,
    providers: infra.vtuProviders,
    payments: infra.payments,
    markupMax: config.vtu.markupMax,
    priceLevelOf: auth.api.priceLevelOf,
    // The rate limits' namespace is already distinct per deployment and per test world.
    redisPrefix: `${infra.rateLimitNamespace}catalogue:`,
  });
  // Funding needs no other module; the administrator's reconciliation is its api's.
  const funding = createFundingModule({
    db,
    clock,
    jobs,
    logger,
    payments: infra.payments,
    batching: infra.database.batching,
    baseUrl: infra.baseUrl,
    config: { preferredBank: config.payments.preferredBank, webhookSecret: config.secrets.paymentSigning },
  });
  const push = createPushModule({
    db,
    clock,
    push: infra.push,
    resolveHost: infra.resolveHost,
    config: config.push,
    sandboxEndpoints: infra.sandboxPushEndpoints,
  });
  const notifications = createNotificationsModule({
    db,
    clock,
    jobs,
    mailer: infra.mailer,
    adminPhones: infra.adminPhones,
    verifiedEmailsOf: auth.api.verifiedEmailsOf,
    push: push.api,
  });
  // The purchases take the buyers' PIN reads from auth and their prices from the catalogue.
  const vtu = createVtuModule({
    db,
    batching: infra.database.batching,
    clock,
    jobs,
    logger,
    pepper,
    config,
    providers: infra.vtuProviders,
    payments: infra.payments,
    catalogue: catalogue.api,
    sharedPinReads: auth.api.sharedPinReads,
    resolveHost: infra.resolveHost,
    debitRules: infra.debitRules,
    metrics: infra.metrics.purchases,
  });
  const growth = createGrowthModule({ db, clock, jobs, config: config.growth });
  // A lock records the milestones it reaches in its own transaction, through growth's api.
  const savings = createSavingsModule({
    db,
    clock,
    jobs,
    logger,
    config: config.savings,
    reachMilestones: growth.api.reachMilestones,
  });
  // In the order of the contract's operations (API.md, /openapi.json), not the order of building.
  return {
    auth,
    wallet: createWalletModule({ db }),
    kyc: createKycModule({
      db,
      clock,
      jobs,
      provider: infra.kyc.provider,
      store: infra.kyc.documents,
      urlKey: infra.kyc.urlKey,
      pepper,
      banks: () => catalogue.api.banks(),
      baseUrl: infra.baseUrl,
      config: { livenessUrl: config.kyc.livenessUrl, sandboxTokens: config.sandbox },
    }),
    funding,
    alerts: createAlertsModule({
      db,
      mailer: infra.mailer,
      opsEmail: config.opsEmail,
      deliverToAdmins: async (alert) => {
        await notifications.api.deliverAlertToAdmins(alert);
      },
    }),
    catalogue,
    vtu,
    savings,
    transfers: createTransfersModule({
      db,
      clock,
      jobs,
      pepper: config.secrets.pepper,
      sharedPinReads: auth.api.sharedPinReads,
      config: config.transfers,
    }),
    beneficiaries: createBeneficiariesModule({ db, clock }),
    growth,
    notifications,
    push,
    // After the modules whose work an administrator runs now (funding, vtu, catalogue).
    admin: createAdminModule({
      db,
      clock,
      logger,
      reconcileFunding: funding.api.reconcile,
      requeryPurchases: () => vtu.api.requeryDue({ includeNotDue: true }),
      setMarkup: catalogue.api.setMarkup,
      storedMarkups: catalogue.api.storedMarkups,
      priceLevelExists: catalogue.api.priceLevelExists,
      setUserPriceLevel: auth.api.setPriceLevel,
      usersByPriceLevel: auth.api.usersByPriceLevel,
    }),
    // A disputed purchase is asked of the purchases' api; the outcome reaches the person through
    // the notifications module's subscription to its event.
    disputes: createDisputesModule({
      db,
      clock,
      jobs,
      windowDays: config.disputes.windowDays,
      purchaseRecord: vtu.api.purchaseRecord,
      phonesOf: auth.api.phonesOf,
    }),
    // A schedule's runs are purchases through vtu's api: the PIN's approval, the order's checks, buyTogether.
    schedules: createSchedulesModule({
      db,
      clock,
      jobs,
      logger,
      vtu: vtu.api,
      config: config.schedules,
    }),
    // Section 16's bulk orders: lines checked, priced and accepted together through vtu's api.
    bulkOrders: createBulkOrdersModule({ db, clock, vtu: vtu.api }),
  } satisfies Record<string, DomainModule>;
}

export type Modules = ReturnType<typeof createModules>;

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

/** How often a process following a standalone sandbox reads its clock (and the oldest reading a batch takes). */
const sandboxClockPollMs = 1_000;
/** How long a process waits at start-up for a standalone sandbox to answer. */
const sandboxStartTimeoutMs = 30_000;

/**
 * The clock: the system's (or a test's); in the sandbox, one moved by POST /__sandbox/clock, which is
 * this process's own when the sandbox is served in process, or followed over HTTP when it runs as its
 * own process (read first, waiting for it to answer: start-up fails after a bound).
 */
async function createClocks(config: Config, overrides: ContextOverrides, logger: Logger) {
  const base = overrides.clock ?? systemClock;
  if (config.sandboxRemote !== undefined) {
    const clock = createFollowingClock(base);
    const link = await linkSandboxClock({
      sandboxUrl: config.sandboxRemote.url,
      clock,
      base,
      pollMs: sandboxClockPollMs,
      startTimeoutMs: sandboxStartTimeoutMs,
      logger,
    });
    return { clock, sandboxClock: undefined, link };
  }
  const sandboxClock = config.sandbox ? createSandboxClock(base) : undefined;
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
  const target: DatabaseTarget = overrides.database ?? configuredTarget(config);
  let database: Database;
  try {
    database = await openDatabase(target, {
      onConnectionError: (error) => logger.warn({ err: error }, 'database connection failed'),
    });
  } catch (error) {
    clockLink?.stop();
    throw error;
  }
  try {
    await migrateOpened(database, target);
  } catch (error) {
    clockLink?.stop();
    await database.close();
    throw error;
  }

  const baseUrl = { current: config.http.publicBaseUrl ?? `http://${config.http.host}:${config.http.port}` };
  const remote = config.sandboxRemote;
  // The simulators' state lives here only when the sandbox is served in process.
  const sandboxState = config.sandbox && remote === undefined ? createSandboxState() : undefined;
  // Where the simulators are, in the sandbox: this service's own address, or the standalone sandbox's.
  const simulators =
    remote !== undefined ? () => remote.url : config.sandbox ? () => baseUrl.current : undefined;

  // The context's own connection pools, closed by close(): the adapters' calls to outside parties go
  // through `outbound`, Web Push through its TLS agent (unless a test passes its own).
  const metrics = createServiceMetrics();
  const outbound = createOutboundAgent(metrics.exchanges);
  const ownPushAgent = overrides.pushAgent === undefined ? pushAgent() : undefined;

  const sms = createHttpSmsGateway({
    baseUrl: () => (simulators !== undefined ? `${simulators()}/__sandbox/sms-gateway` : config.sms.baseUrl!),
    apiKey: simulators !== undefined ? SANDBOX_SMS_API_KEY : config.sms.apiKey!,
    senderId: config.sms.senderId,
    timeoutMs: 5_000,
    dispatcher: outbound,
  });

  const kycProvider = createDojahKycProvider({
    baseUrl: () => (simulators !== undefined ? `${simulators()}/__sandbox/kyc` : config.kyc.baseUrl!),
    appId: simulators !== undefined ? SANDBOX_KYC_APP_ID : config.kyc.appId!,
    secretKey: simulators !== undefined ? SANDBOX_KYC_SECRET : config.kyc.secretKey!,
    // Under the 30 s request limit with room to answer: a slow provider becomes a 502, not a hang.
    timeoutMs: 8_000,
    dispatcher: outbound,
  });
  // Without SMTP_URL outside the sandbox (allowed only while OPS_EMAIL is unset), sending fails loudly.
  // SMTP_URL wins in the sandbox too, so that a real mail server can be tried against the sandbox.
  const mailer =
    config.mail.smtpUrl !== undefined
      ? createSmtpMailer({ url: config.mail.smtpUrl, from: config.mail.from, timeoutMs: 10_000 })
      : sandboxState !== undefined
        ? createSandboxMailer(sandboxState, clock, config.mail.from)
        : remote !== undefined
          ? createHttpMailboxMailer({ sandboxUrl: remote.url, from: config.mail.from, timeoutMs: 10_000 })
          : {
              send: () => Promise.reject(new Error('no SMTP_URL configured: email cannot be sent')),
            };
  // Outside the sandbox, and with a standalone sandbox, the keys come from the environment (config
  // requires them there: every process must push with the key the subscriptions were made with).
  const vapidKeys =
    config.vapid.publicKey !== undefined && config.vapid.privateKey !== undefined
      ? { publicKey: config.vapid.publicKey, privateKey: config.vapid.privateKey }
      : sandboxVapidKeys(config.dataDir);
  // In the sandbox its push service's endpoints, at this service's own address, are accepted and
  // pushed to through the outbound pool; a known push service whose name does not resolve (offline) is
  // accepted too (API.md section 8).
  const sandboxPushEndpoints: SandboxEndpoints | undefined =
    simulators !== undefined
      ? {
          ownPushService: (endpoint) => isSandboxPushEndpoint(endpoint, simulators()),
          allowUnresolved: true,
        }
      : undefined;
  const push = createWebPushSender({
    keys: vapidKeys,
    subject: config.vapid.subject ?? 'mailto:sandbox@billrail.invalid',
    timeoutMs: config.push.timeoutMs,
    agent: overrides.pushAgent ?? ownPushAgent,
    localRoute:
      sandboxPushEndpoints !== undefined
        ? { endpoints: sandboxPushEndpoints.ownPushService, dispatcher: outbound }
        : undefined,
  });
  const payments = createPaystackClient({
    baseUrl: () =>
      simulators !== undefined ? `${simulators()}/__sandbox/payments` : config.payments.baseUrl,
    // Paystack has one secret key for its API and for signing its webhooks.
    secretKey: config.secrets.paymentSigning,
    timeoutMs: 8_000,
    dispatcher: outbound,
  });
  const vtuProviders = createVtuProviders(config, simulators, () => baseUrl.current, outbound);
  const storage = config.storage;
  const documents =
    storage.kind === 's3'
      ? createS3DocumentStore({
          bucket: storage.bucket,
          region: storage.region,
          ...(storage.endpoint !== undefined ? { endpoint: storage.endpoint } : {}),
          forcePathStyle: storage.forcePathStyle,
          accessKeyId: storage.accessKeyId,
          secretAccessKey: storage.secretAccessKey,
        })
      : createLocalDocumentStore(overrides.documentsDir ?? path.join(config.dataDir, 'kyc-documents'));

  const adminPhones = new Set(
    config.adminPhones.map((p) => toE164(p)).filter((p): p is string => p !== null),
  );

  // What is open so far, closed again by close() or by a failed start, whichever comes.
  const opened: Opened = { database, outbound, ownPushAgent, clockLink };
  try {
    return await composeContext(config, overrides, opened, {
      logger,
      clock,
      sandboxClock,
      clockLink,
      baseUrl,
      sandboxState,
      adapters: { sms, payments, mailer, push, kycProvider, documents, vtuProviders },
      adminPhones,
      sandboxPushEndpoints,
      metrics,
    });
  } catch (error) {
    await closeOpened(opened);
    throw error;
  }
}

/** What a context holds open, in the order close() ends it: jobs, cache, pools, database. */
type Opened = {
  jobs?: JobQueue;
  catalogue?: { close(): Promise<void> };
  outbound: Dispatcher;
  ownPushAgent: Agent | undefined;
  /** The poll of a standalone sandbox's clock. */
  clockLink: SandboxClockLink | undefined;
  database: Database;
};

async function closeOpened(opened: Opened): Promise<void> {
  await opened.jobs?.stop();
  await opened.catalogue?.close();
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
    baseUrl: { current: string };
    sandboxState: SandboxState | undefined;
    adapters: {
      sms: SmsSender;
      payments: PaymentProvider;
      mailer: Mailer;
      push: PushSender;
      kycProvider: KycProvider;
      documents: DocumentStore;
      vtuProviders: Record<VtuProviderName, VtuProvider>;
    };
    adminPhones: ReadonlySet<string>;
    sandboxPushEndpoints: SandboxEndpoints | undefined;
    metrics: ServiceMetrics;
  },
): Promise<Context> {
  const { logger, clock, sandboxClock, clockLink, baseUrl, sandboxState, adminPhones } = parts;
  const { sms, payments, mailer, push, kycProvider, documents, vtuProviders } = parts.adapters;
  const { database } = opened;
  // The job queue exists before the modules, which enqueue through it; their jobs are registered
  // with it once they are built (jobs.define below).
  const jobs = await createJobQueue(database, {
    logger,
    runWorkers: config.runWorker,
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
    kyc: { provider: kycProvider, documents, urlKey: documentUrlKey(config.secrets.pepper) },
    vtuProviders,
    adminPhones,
    baseUrl,
    rateLimitNamespace: overrides.rateLimitNamespace ?? 'billrail-rl:',
    debitRules: overrides.debitRules ?? [],
    sandboxPushEndpoints: parts.sandboxPushEndpoints,
    metrics: parts.metrics,
  };
  const modules = createModules(infrastructure);
  opened.catalogue = modules.catalogue;
  const moduleList: DomainModule[] = Object.values(modules);
  await jobs.define([
    domainEventJob(events),
    idempotencyPurgeJob(database.db, clock),
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
          publicBaseUrl: () => baseUrl.current,
          paymentWebhookUrl: () => `${baseUrl.current}${paymentWebhookPath}`,
          clockJobsUrl: () => `${baseUrl.current}${sandboxClockJobsPath}`,
          vtuFundingAccounts: {
            data: config.vtu.data.funding.accountNumber,
            bills: config.vtu.bills.funding.accountNumber,
            social: config.vtu.social.funding.accountNumber,
          },
          pushApplicationServerKey: push.publicKey,
        })
      : undefined;
  return {
    ...infrastructure,
    sandboxClock,
    modules,
    operations: moduleList.flatMap((m) => m.operations),
    sandbox,
    sandboxLink:
      clockLink !== undefined && config.sandboxRemote !== undefined
        ? { clockJobsToken: config.sandboxRemote.clockToken, clock: clockLink }
        : undefined,
    close: async () => {
      // A purchase being sent finishes (or times out) and is settled before the database goes.
      await modules.vtu.api.drained();
      await modules.funding.api.paymentEvents.drained();
      await closeOpened(opened);
    },
  };
}

/**
 * The three VTU adapters, each pointed at its provider, or at its sandbox simulator over HTTP
 * (`simulators`: where the sandbox's are; undefined outside the sandbox).
 */
function createVtuProviders(
  config: Config,
  simulators: (() => string) | undefined,
  baseUrl: () => string,
  dispatcher: Dispatcher,
): Record<VtuProviderName, VtuProvider> {
  const { vtu } = config;
  const sandbox = simulators !== undefined;
  // SANDBOX_VTU_BASE_URL names another service's simulators (config refuses it with SANDBOX_URL).
  const vtuSimulators = () => vtu.sandboxBaseUrl ?? simulators!();
  const at = (simulatorPath: string, configured: string | undefined) => () =>
    sandbox ? `${vtuSimulators()}${simulatorPath}` : configured!;
  return {
    data: createDataVendorClient({
      name: 'data',
      baseUrl: at('/__sandbox/vtu/data', vtu.data.baseUrl),
      token: sandbox ? SANDBOX_DATA_TOKEN : vtu.data.token!,
      timeoutMs: vtu.timeoutMs,
      networkIds: vtu.data.networkIds,
      dispatcher,
    }),
    // SPEC.md item 3 routes airtime-to-cash to the bills party; VTpass sells none, so the party's
    // airtime-to-cash goes through a reseller's Airtime2Cash API beside it.
    bills: combineProviders(
      'bills',
      createVtpassClient({
        name: 'bills',
        baseUrl: at('/__sandbox/vtu/bills/api', vtu.bills.baseUrl),
        apiKey: sandbox ? SANDBOX_BILLS_API_KEY : vtu.bills.apiKey!,
        publicKey: sandbox ? SANDBOX_BILLS_PUBLIC_KEY : vtu.bills.publicKey!,
        secretKey: sandbox ? SANDBOX_BILLS_SECRET_KEY : vtu.bills.secretKey!,
        timeoutMs: vtu.timeoutMs,
        dispatcher,
      }),
      createAirtimeCashClient({
        name: 'bills',
        baseUrl: at(sandboxAirtimeCashPath, vtu.airtimeCash.baseUrl),
        apiKey: sandbox ? SANDBOX_AIRTIME_CASH_API_KEY : vtu.airtimeCash.apiKey!,
        timeoutMs: vtu.timeoutMs,
        // The provider calls this service back, wherever the simulators run.
        callbackUrl: () => `${baseUrl()}${airtimeCashCallbackPath}`,
        dispatcher,
      }),
    ),
    social: createSmmPanelClient({
      name: 'social',
      baseUrl: at(sandboxSocialPath, vtu.social.baseUrl),
      apiKey: sandbox ? SANDBOX_SOCIAL_API_KEY : vtu.social.apiKey!,
      timeoutMs: vtu.timeoutMs,
      ...(vtu.social.koboPerUsd === undefined ? {} : { koboPerCurrencyUnit: { USD: vtu.social.koboPerUsd } }),
      dispatcher,
    }),
  };
}
