import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { createAccountClosureModule } from './account-closure/module.ts';
import { createAdjustmentsModule } from './adjustments/module.ts';
import { createAdminModule } from './admin/module.ts';
import { createAlertsModule } from './alerts/module.ts';
import { createAuditModule } from './audit/module.ts';
import { createAuthModule } from './auth/module.ts';
import { createBeneficiariesModule } from './beneficiaries/module.ts';
import { createBulkOrdersModule } from './bulk-orders/module.ts';
import { createCatalogueModule } from './catalogue/module.ts';
import type { Clock } from './clock.ts';
import type { Config, VtuProviderName } from './config.ts';
import { createDataExportModule } from './data-export/module.ts';
import type { Database } from './db/database.ts';
import type { DB } from './db/schema.ts';
import { createDisputesModule } from './disputes/module.ts';
import type { EventBus } from './events/domain-events.ts';
import { createFiguresModule } from './figures/module.ts';
import { createFundingModule } from './funding/module.ts';
import { createGrowthModule } from './growth/module.ts';
import { purgeIdempotencyKeysBatch } from './http/idempotency-store.ts';
import type { ServiceMetrics } from './http/metrics.ts';
import type { JobQueue } from './jobs/queue.ts';
import { createKycModule } from './kyc/module.ts';
import { purgeLedgerChecks } from './ledger/check-runs.ts';
import { createLimitsModule } from './limits/module.ts';
import type { DomainModule } from './module.ts';
import { createNotificationsModule } from './notifications/module.ts';
import type { Resolve } from './outbound-addresses.ts';
import { createPausesModule } from './pauses/module.ts';
import type { Mailer } from './providers/email/mailer.ts';
import type { KycProvider } from './providers/kyc/kyc-provider.ts';
import type { PaymentProvider } from './providers/payments/payment-provider.ts';
import type { PushSender } from './providers/push/web-push-sender.ts';
import type { SmsSender } from './providers/sms/sms-gateway.ts';
import type { DocumentStore } from './providers/storage/document-store.ts';
import type { VtuProvider } from './providers/vtu/vtu-provider.ts';
import type { SandboxEndpoints } from './push/endpoint-policy.ts';
import { createPushModule } from './push/module.ts';
import { createReconciliationModule } from './reconciliation/module.ts';
import { createRetentionModule } from './retention/module.ts';
import { createSavingsModule } from './savings/module.ts';
import { createSchedulesModule } from './schedules/module.ts';
import { hashKeys } from './shared/keyed-hash.ts';
import { signedUrlKey } from './shared/signed-urls.ts';
import { createTransfersModule } from './transfers/module.ts';
import { createUssdModule } from './ussd/module.ts';
import type { DebitRule } from './vtu/debit-rules.ts';
import { createVtuModule } from './vtu/module.ts';
import { createWalletModule } from './wallet/module.ts';

// The composition root's second half: the domain modules, built in dependency order from the
// infrastructure context.ts builds (the database, the job queue, the clock, the adapters). Each
// module's deps are picked here, from the infrastructure and from the api of the modules before it.

/** What the composition root builds before any module: the modules' deps are picked from it. */
export type Infrastructure = {
  config: Config;
  clock: Clock;
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
  adminPhones: ReadonlySet<string>;
  /** The service's own public base URL, known before anything is built (config.ts publicBaseUrl). */
  baseUrl: string;
  /** Prefix of rate-limit keys in Redis, so that separate deployments (or tests) do not share counts. */
  rateLimitNamespace: string;
  /** This context's Prometheus registry and the ports reporting to it (/metrics). */
  metrics: ServiceMetrics;
  /** The purchase rules decided at debit time (vtu/debit-rules.ts), from the overrides; none by default. */
  debitRules: readonly DebitRule[];
  /** In the sandbox: the push endpoints savePushSubscription lets through there; undefined outside it. */
  sandboxPushEndpoints: SandboxEndpoints | undefined;
};

/**
 * The domain modules, in dependency order: each is built from the deps it declares (its module.ts),
 * picked here from the infrastructure and from the `api` of the modules built before it.
 */
export function createModules(infra: Infrastructure) {
  const shared = createSharedModules(infra);
  const money = createMoneyModules(infra, shared);
  const overMoney = createModulesOverMoney(infra, shared, money);
  const { beneficiaries, figures, schedules, bulkOrders } = createModulesBuiltLast(infra, money, overMoney);
  const ussd = createUssdChannel(infra, shared, money, overMoney);
  // The append-only trail of the admin operations: the router writes it, its module lists it.
  const audit = createAuditModule({ db: infra.db });
  const { auth, kyc, alerts, catalogue, notifications, push, pauses, limits } = shared;
  const { funding, vtu, savings, growth } = money;
  const { admin, transfers, disputes, adjustments, wallet, reconciliation } = overMoney;
  // A person's copy of their data (API.md 17.3): every domain's part, read through its api.
  const dataExport = createDataExportModule({
    db: infra.db,
    clock: infra.clock,
    jobs: infra.jobs,
    baseUrl: infra.baseUrl,
    urlKey: signedUrlKey(infra.config.secrets.pepper, 'data-export-url'),
    lockUser: auth.api.lockUser,
    sources: {
      findUserById: auth.api.findUserById,
      kycOf: kyc.api.personalDataOf,
      walletOf: wallet.api.walletOf,
      purchasesOf: vtu.api.personalDataOf,
      savingsOf: savings.api.personalDataOf,
      rewardsOf: growth.api.personalDataOf,
      notificationsOf: notifications.api.personalDataOf,
      beneficiariesOf: beneficiaries.api.personalDataOf,
      schedulesOf: schedules.api.personalDataOf,
      bulkOrdersOf: bulkOrders.api.personalDataOf,
      disputesOf: disputes.api.personalDataOf,
      pushDevicesOf: push.api.personalDataOf,
    },
  });
  // Closing an account (API.md 17.3, decision 0047): its reasons, the closing and the erasure past
  // retention, each through the api of the domain whose state it is.
  const accountClosure = createAccountClosureModule({
    db: infra.db,
    clock: infra.clock,
    jobs: infra.jobs,
    logger: infra.logger,
    config: infra.config.accountClosure,
    verifyTransactionPin: auth.api.verifyTransactionPin,
    closeUser: auth.api.closeUser,
    processingPurchasesOf: vtu.api.processingPurchasesOf,
    openDisputesOf: disputes.api.openDisputesOf,
    activeLocksOf: savings.api.activeLocksOf,
    openSchedulesOf: schedules.api.openSchedulesOf,
    deleteSchedulesOf: schedules.api.deleteSchedulesOf,
    deleteBeneficiariesOf: beneficiaries.api.deleteBeneficiariesOf,
    forgetDevicesOf: push.api.forgetDevicesOf,
    forgetInboxOf: notifications.api.forgetInboxOf,
    releaseIdentityOf: kyc.api.releaseIdentityOf,
    eraseKycRecordsOf: kyc.api.eraseRecordsOf,
    raiseAlert: alerts.api.raiseAlert,
  });
  // Retention (decision 0054): how long the growing tables are kept; each owner deletes its own rows.
  const retention = createRetentionModule({
    clock: infra.clock,
    logger: infra.logger,
    config: infra.config.retention,
    purges: {
      idempotencyKeys: (now, batchMax) => purgeIdempotencyKeysBatch(infra.db, now, batchMax),
      signInCodes: auth.api.purgeExpiredSignInCodes,
      emailCodes: auth.api.purgeExpiredEmailCodes,
      paymentEvents: funding.api.purgeProcessedPaymentEvents,
      notifications: notifications.api.purgeOldNotifications,
      dataExports: dataExport.api.purgeExpiredDataExports,
      ledgerChecks: (before, batchMax) => purgeLedgerChecks(infra.db, before, batchMax),
      reconciliationMatched: reconciliation.api.purgeMatchedItems,
      ussdSessions: ussd.api.purgeSessions,
    },
  });
  // In the order of the contract's operations (API.md, /openapi.json), not the order of building.
  return {
    auth,
    wallet,
    limits,
    kyc,
    funding,
    alerts,
    catalogue,
    vtu,
    savings,
    transfers,
    beneficiaries,
    growth,
    notifications,
    push,
    admin,
    audit,
    figures,
    disputes,
    adjustments,
    pauses,
    reconciliation,
    schedules,
    bulkOrders,
    ussd,
    dataExport,
    accountClosure,
    retention,
  } satisfies Record<string, DomainModule>;
}

type SharedModules = ReturnType<typeof createSharedModules>;
type MoneyModules = ReturnType<typeof createMoneyModules>;
type ModulesOverMoney = ReturnType<typeof createModulesOverMoney>;

/**
 * The modules others take an api from, built first: the users, the catalogue, KYC, and the push,
 * notifications and operations alerts every domain reaches people through.
 */
function createSharedModules(infra: Infrastructure) {
  const { config, clock, logger, db, jobs } = infra;
  // PINs and codes are hashed with SECRET_PEPPER; the previous one is accepted while a rotation lasts.
  const pepper = hashKeys(config.secrets.pepper, config.secrets.pepperPrevious);
  // Operators' pauses of a service or provider: the catalogue lists them and the purchases refuse on them.
  const pauses = createPausesModule({ db, clock, config: config.pauses, routes: config.vtu.routes });
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
    totpSealingSecret: config.adminSecondFactor.sealingKey,
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
    pauseOf: pauses.api.pauseOf,
    // The rate limits' namespace is already distinct per deployment and per test world.
    redisPrefix: `${infra.rateLimitNamespace}catalogue:`,
  });
  // KYC reads and writes the users through auth's api; funding, transfers and vtu gate on its tiers.
  const kyc = createKycModule({
    db,
    clock,
    jobs,
    provider: infra.kyc.provider,
    store: infra.kyc.documents,
    urlKey: infra.kyc.urlKey,
    pepper,
    users: auth.api,
    banks: () => catalogue.api.banks(),
    baseUrl: infra.baseUrl,
    config: { livenessUrl: config.kyc.livenessUrl, sandboxTokens: config.sandbox },
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
    findUserIdsByPhones: auth.api.findUserIdsByPhones,
  });
  // Any domain raises an operations alert in its own transaction through alerts' api; the alert's
  // job puts it in the administrators' inboxes through notifications' api, built before it.
  const alerts = createAlertsModule({
    db,
    mailer: infra.mailer,
    opsEmail: config.opsEmail,
    deliverToAdmins: notifications.api.deliverAlertToAdmins,
  });
  // The CBN tier limits: every debit is judged by them and every credit from outside split at them.
  const limits = createLimitsModule({
    db,
    clock,
    jobs,
    logger,
    config: config.limits,
    tiersAmong: auth.api.tiersAmong,
    verifyTransactionPin: auth.api.verifyTransactionPin,
  });
  return { auth, catalogue, kyc, push, notifications, alerts, pauses, limits };
}

/** The money coming in and going out to the providers, and the savings with the rewards they reach. */
function createMoneyModules(infra: Infrastructure, shared: SharedModules) {
  const { config, clock, logger, db, jobs } = infra;
  const { auth, kyc, alerts, catalogue } = shared;
  // Funding raises its alerts through alerts' api and reads its payers through auth's and kyc's;
  // the administrator's reconciliation is its api's.
  const funding = createFundingModule({
    db,
    clock,
    jobs,
    logger,
    payments: infra.payments,
    batching: infra.database.batching,
    baseUrl: infra.baseUrl,
    config: {
      preferredBank: config.payments.preferredBank,
      webhookSecret: config.secrets.paymentSigning,
      ledgerShards: config.database.ledgerShards,
    },
    raiseAlert: alerts.api.raiseAlert,
    findUserById: auth.api.findUserById,
    requireKycTier: kyc.api.requireKycTier,
    approvedNinName: kyc.api.approvedNinName,
    limits: shared.limits.api,
  });
  // The purchases take their buyers' reads and PIN check from auth, the tier gate from kyc, their
  // prices from the catalogue, and raise their alerts through alerts.
  const vtu = createVtuModule({
    db,
    batching: infra.database.batching,
    clock,
    jobs,
    logger,
    config,
    providers: infra.vtuProviders,
    funding: funding.api.providerFunding,
    catalogue: catalogue.api,
    readBuyerStates: auth.api.readBuyerStates,
    verifyTransactionPin: auth.api.verifyTransactionPin,
    requireTier: kyc.api.requireTier,
    raiseAlert: alerts.api.raiseAlert,
    resolveHost: infra.resolveHost,
    debitRules: infra.debitRules,
    frozenAmong: auth.api.frozenAmong,
    limits: shared.limits.api,
    metrics: infra.metrics.purchases,
    // A paused service or provider is refused before any debit (decision 0042).
    requireOpen: shared.pauses.api.requireOpen,
    // Counted beside the rate limit's keys, so that separate deployments (or tests) do not share them.
    providerRateRedis:
      config.redisUrl === undefined
        ? undefined
        : { url: config.redisUrl, prefix: `${infra.rateLimitNamespace}provider-rate:` },
  });
  const growth = createGrowthModule({ db, clock, jobs, config: config.growth, users: auth.api });
  // A lock records the milestones it reaches in its own transaction, through growth's api.
  const savings = createSavingsModule({
    db,
    clock,
    jobs,
    logger,
    config: config.savings,
    reachMilestones: growth.api.reachMilestones,
  });
  return { funding, vtu, growth, savings };
}

/**
 * Built after the money domains: the transfers between wallets, the disputes of purchases, the
 * wallet, whose history names the movements of all of them, then the administrator's work on them.
 */
function createModulesOverMoney(infra: Infrastructure, shared: SharedModules, money: MoneyModules) {
  const { config, clock, logger, db, jobs } = infra;
  const { auth, kyc, catalogue } = shared;
  const { funding, vtu, growth, savings } = money;
  const transfers = createTransfersModule({
    db,
    clock,
    jobs,
    config: config.transfers,
    users: auth.api,
    verifyTransactionPin: auth.api.verifyTransactionPin,
    requireTier: kyc.api.requireTier,
    limits: shared.limits.api,
  });
  // A disputed purchase is asked of the purchases' api; the outcome reaches the person through
  // the notifications module's subscription to its event.
  const disputes = createDisputesModule({
    db,
    clock,
    jobs,
    windowDays: config.disputes.windowDays,
    purchaseRecord: vtu.api.purchaseRecord,
    phonesOf: auth.api.phonesOf,
  });
  // An operator's correction of a wallet, four eyes: the person and their phone from auth's api.
  const adjustments = createAdjustmentsModule({
    db,
    clock,
    jobs,
    findUserById: auth.api.findUserById,
    phonesOf: auth.api.phonesOf,
    limits: shared.limits.api,
  });
  // After every module that moves a wallet's money: the history's kinds are theirs, tried in this order.
  const wallet = createWalletModule({
    db,
    movementKinds: [
      ...funding.movementKinds,
      ...transfers.movementKinds,
      ...vtu.movementKinds,
      ...savings.movementKinds,
      ...growth.movementKinds,
      ...disputes.movementKinds,
      ...adjustments.movementKinds,
    ],
    counterpartiesOf: transfers.api.counterpartiesOf,
  });
  // After the modules whose work an administrator runs now (funding, vtu, catalogue), and after the
  // wallet, whose movements the look-up of a person shows.
  const admin = createAdminModule({
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
    findUserById: auth.api.findUserById,
    findUserByPhone: auth.api.findUserByPhone,
    rolesOf: auth.api.rolesOf,
    walletOf: wallet.api.walletOf,
  });
  // Reconciliation with the providers' own records (API.md 17.5): our side through funding's and
  // vtu's apis, theirs through the same adapters the money moves by.
  const reconciliation = createReconciliationModule({
    db,
    clock,
    jobs,
    logger,
    payments: infra.payments,
    providers: infra.vtuProviders,
    funding: funding.api,
    vtu: vtu.api,
    raiseAlert: shared.alerts.api.raiseAlert,
  });
  return { admin, transfers, disputes, adjustments, wallet, reconciliation };
}

/**
 * Built after every other module: the beneficiaries, /metrics' figures, and the schedules and bulk
 * orders that buy through vtu's api.
 */
function createModulesBuiltLast(infra: Infrastructure, money: MoneyModules, overMoney: ModulesOverMoney) {
  const { config, clock, logger, db, jobs } = infra;
  const { funding, vtu } = money;
  const { admin, reconciliation } = overMoney;
  const beneficiaries = createBeneficiariesModule({ db, clock });
  // What /metrics serves, read every 30 s by one job through the modules that own it (decision 0028).
  const figures = createFiguresModule({
    db,
    clock,
    logger,
    jobs,
    reads: {
      floatBalances: vtu.api.floatBalances,
      processingPurchases: vtu.api.processingPurchases,
      paymentInbox: funding.api.paymentInbox,
      queueCounts: jobs.queueCounts,
      lastLedgerCheck: admin.api.lastLedgerCheck,
      latestRuns: reconciliation.api.latestRuns,
    },
  });
  // A schedule's runs are purchases through vtu's api: the PIN's approval, the order's checks, buyTogether.
  const schedules = createSchedulesModule({
    db,
    clock,
    jobs,
    logger,
    vtu: vtu.api,
    config: config.schedules,
  });
  // Section 16's bulk orders: lines checked, priced and accepted together through vtu's api.
  const bulkOrders = createBulkOrdersModule({ db, clock, vtu: vtu.api });
  return { beneficiaries, figures, schedules, bulkOrders };
}

/** The USSD channel (API.md 17.6): a menu onto the wallet, paying through vtu's api like the schedules. */
function createUssdChannel(
  infra: Infrastructure,
  shared: SharedModules,
  money: MoneyModules,
  overMoney: ModulesOverMoney,
) {
  return createUssdModule({
    db: infra.db,
    clock: infra.clock,
    logger: infra.logger,
    pepper: infra.config.secrets.pepper,
    config: infra.config.ussd,
    findUserByPhone: shared.auth.api.findUserByPhone,
    findUserById: shared.auth.api.findUserById,
    ussdEnabledAmong: shared.auth.api.ussdEnabledAmong,
    walletOf: overMoney.wallet.api.walletOf,
    catalogue: shared.catalogue.api,
    vtu: money.vtu.api,
  });
}

export type Modules = ReturnType<typeof createModules>;
