import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AlertsModule } from '../alerts/module.ts';
import type { AuthApi } from '../auth/module.ts';
import type { CatalogueApi } from '../catalogue/module.ts';
import type { Clock } from '../clock.ts';
import type { Config, VtuProviderName } from '../config.ts';
import type { Batching } from '../db/batching.ts';
import type { DB } from '../db/schema.ts';
import type { WithCommit } from '../db/unit-of-work.ts';
import type { ProviderFunding } from '../funding/module.ts';
import { type JobDefinition, type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { KycModule } from '../kyc/module.ts';
import { systemAccounts } from '../ledger/accounts.ts';
import type { LimitsApi } from '../limits/module.ts';
import { type DomainModule, on } from '../module.ts';
import type { Resolve } from '../outbound-addresses.ts';
import { everyRow } from '../paging.ts';
import type { PausesApi } from '../pauses/module.ts';
import type { VtuProvider, VtuService } from '../providers/vtu/vtu-provider.ts';
import type { MovesWallet } from '../wallet/module.ts';
import {
  type AcceptBatchDeps,
  type AcceptStageDeps,
  acceptBatchOptions,
  acceptPurchase,
  acceptPurchases,
} from './accept.ts';
import { createPurchaseBatches } from './batches.ts';
import { accountNotFrozen, type DebitRule } from './debit-rules.ts';
import {
  claimBatchOptions,
  claimPurchases,
  createInlineSends,
  type DispatchDeps,
  dispatchPurchase,
  dispatchPurchasesWaitingFor,
  vtuDispatchJob,
} from './dispatch.ts';
import { type FloatDeps, failPurchasesWaitingFor } from './float.ts';
import { floatReservedKobo } from './float-reservations.ts';
import { requeryAwaitedDeliveries } from './late-delivery.ts';
import { processingPurchasesOf } from './open-purchases.ts';
import {
  type FloatBalance,
  floatBalances,
  type ProcessingPurchases,
  processingPurchases,
} from './operator-figures.ts';
import { operatorPurchaseOperations } from './operator-purchases.ts';
import { createProviderRates } from './provider-rate.ts';
import type { PurchaseMetrics } from './purchase-metrics.ts';
import {
  authorisedMarkupOf,
  buyTogether,
  createPurchaseReads,
  type OrderedService,
  type PurchaseFields,
  type PurchaseOpsDeps,
  purchaseOperations,
  purchaseOrders,
  requireRouteOpen,
} from './purchase-ops.ts';
import { findPurchaseRecord } from './purchase-records.ts';
import {
  chargeOf,
  findPurchases,
  listPurchases,
  type PurchaseOrder,
  purchasePostings,
  purchaseReference,
  type VtuTransactionView,
} from './purchases.ts';
import {
  type RequeryCounts,
  type RequeryOptions,
  requeryByReference,
  requeryDuePurchases,
  requeryOptionsOf,
  vtuRequeryJob,
} from './requery.ts';
import { routedServiceOperations } from './routed-service-ops.ts';
import { purchasesByReference, purchasesSentBetween, type SentPurchase } from './sent-purchases.ts';
import { type SettlementDeps, settleBatchOptions, settlePurchases } from './settlement.ts';

// VTU purchases (SPEC.md items 2-5, API.md sections 5 and 14): the six purchases, social orders and
// airtime-to-cash, each through one path of stages, each stage one named function in its own file:
//
//   handler (purchase-ops.ts) → acceptPurchase (accept.ts) ─(commit)→ dispatchPurchase (dispatch.ts)
//     → the provider's adapter → settlePurchases (settlement.ts)
//   vtuDispatchJob (the acceptance's safety net) → dispatchPurchase
//   vtuRequeryJob (every minute) → requeryDuePurchases (requery.ts) → settlePurchases
//                                   → requeryAwaitedDeliveries (late-delivery.ts): tokens, pins to come
//
// The module owns what the stages share: the group commit of acceptances, claims and settlements
// (batches.ts: one batcher each, run by the function that takes the batch), the bound on purchases sent at once and
// the purchases' batched reads (what is in flight to each provider is in the database, shared by
// every process: float-reservations.ts). All of it is built once
// here, so every batch runs over the same deps.

/**
 * Everything the purchases use: the infrastructure, and what they take of other domains, each
 * through that domain's api (auth, kyc, catalogue, alerts, funding). The stages' deps
 * (PurchaseOpsDeps, SettlementDeps, ...) are picked from these by createVtuModule.
 */
export type VtuModuleDeps = {
  /** The database: this module's table (vtu_transactions) and the ledger's postings. */
  db: Kysely<DB>;
  /** The service clock: a purchase's time, its reference's date, and when a requery is due. */
  clock: Clock;
  /**
   * The routing, the floats, the bound on sends and each provider's settings (config.vtu),
   * airtime-to-cash's rates and window, and the ledger's shards (database.ledgerShards).
   */
  config: Pick<Config, 'vtu' | 'airtimeToCash' | 'database'>;
  /** The database's batchers and loaders (the group commit). */
  batching: Batching;
  /** The queue of the dispatch and requery jobs, and of the purchases' domain events. */
  jobs: JobQueue;
  /** The stages' lines: a failed send, the requery runs, a batch's failure. */
  logger: Logger;
  /** The upstream VTU providers by configuration name (data, bills, social); routing is config.vtu.routes. */
  providers: Record<VtuProviderName, VtuProvider>;
  /** The outbound-address check of social links. */
  resolveHost: Resolve;
  /** The routed providers' catalogues (cached), the customers the look-ups just named, the markups (catalogue's api). */
  catalogue: CatalogueApi;
  /** The buyers' tier, PIN columns and price level, many in one read (auth's api). */
  readBuyerStates: AuthApi['readBuyerStates'];
  /** The PIN's check, decided on the buyer's row under its lock (auth's api). */
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
  /** The tier gate on a tier already read: purchases need Tier 1 (kyc's api). */
  requireTier: KycModule['api']['requireTier'];
  /** Raises an operations alert in the caller's transaction (alerts' api). */
  raiseAlert: AlertsModule['api']['raiseAlert'];
  /** Tops up a provider's float by a float top-up (float.ts): funding's. */
  funding: ProviderFunding;
  /**
   * The purchase rules decided at debit time (debit-rules.ts), none by default: the module always
   * runs accountNotFrozen before them.
   */
  debitRules: readonly DebitRule[];
  /** Which of these buyers are frozen, read FOR SHARE in the acceptance's transaction (auth's api). */
  frozenAmong: AuthApi['frozenAmong'];
  /** The CBN daily debit limit as a purchase rule, and the room a refund gives back (limits' api). */
  limits: Pick<LimitsApi, 'dailyDebitRule' | 'giveBackRoom'>;
  /** The purchases' figures for operators (/metrics): accepted and settled, by service and provider. */
  metrics: PurchaseMetrics;
  /** 503 SERVICE_PAUSED while an operator has paused a service or its provider, before any debit (pauses' api). */
  requireOpen: PausesApi['requireOpen'];
  /** Redis (REDIS_URL) and the prefix of its keys, where the providers' send rates are counted; undefined: the database. */
  providerRateRedis: { url: string; prefix: string } | undefined;
};

/** What other modules (and the composition root, and tests) may call of the purchases. */
export type { DebitRule } from './debit-rules.ts';
export type { PurchaseFields } from './purchase-ops.ts';
export type { PurchaseRecord } from './purchase-records.ts';
export type { PurchaseOrder, VtuTransactionView } from './purchases.ts';
export type { SentPurchase } from './sent-purchases.ts';

export type VtuApi = {
  /**
   * Requeries the purchases whose requery is due, and the successes whose token or pins are due to
   * be asked for again; with includeNotDue, every one still processing or awaited (adminReconcile).
   */
  requeryDue(options?: { includeNotDue?: boolean }): Promise<RequeryCounts>;
  /** Requeries one sent purchase of the service still processing, by reference (a provider's callback); null if none. */
  requeryReference(service: VtuService, reference: string): Promise<RequeryCounts | null>;
  /** Tier 1 and the PIN, as every purchase checks them first (a schedule's approval, a bulk order's). */
  authorise(userId: string, pin: string): Promise<void>;
  /**
   * 503 SERVICE_PAUSED while an operator has paused the service, or the provider it is routed to
   * (a scheduled run is then skipped, a bulk order refused); buyTogether asks it again of each order.
   */
  requireOpen(service: OrderedService): Promise<void>;
  /**
   * A purchase's checks after the PIN (Tier 1 included) and its order, priced for this buyer, as
   * its operation makes it: a schedule's run, a bulk order's line. Refusals are the operation's.
   */
  orderFor<K extends OrderedService>(
    userId: string,
    service: K,
    fields: PurchaseFields[K],
  ): Promise<PurchaseOrder>;
  /**
   * Accepts one buyer's orders from orderFor all or nothing, in one transaction of their own (a bulk
   * order's lines, a schedule's run): every one debited, recorded and dispatched as the operations
   * do, or, when the wallet does not
   * cover them all (decided under its lock) or a debit rule refuses one, none (INSUFFICIENT_FUNDS or
   * the rule's refusal). `withCommit` is written for the purchases' views in that transaction.
   * Each purchase is then its own: its reference, its outcome, its refund. At most 100 orders.
   * `references` (purchaseReference) when the caller derives them from what it runs, so that each
   * purchase happens at most once; a refusal by `withCommit` then rolls back these orders only.
   */
  buyTogether(
    userId: string,
    orders: PurchaseOrder[],
    withCommit?: WithCommit,
    references?: readonly string[],
  ): Promise<VtuTransactionView[]>;
  /** The buyer's purchases among the ids, in the order asked; ids that are not theirs are left out. */
  purchasesOf(userId: string, ids: readonly string[]): Promise<VtuTransactionView[]>;
  /** Every purchase of the person, newest first, as listMyVtuTransactions gives them (their data export). */
  personalDataOf(userId: string): Promise<VtuTransactionView[]>;
  /** Accepts a checked purchase, as the operations do after their checks (tests of the accept stage). */
  acceptPurchase(userId: string, order: PurchaseOrder, withCommit?: WithCommit): Promise<VtuTransactionView>;
  /**
   * What the purchases keep about one of the user's purchases, by id or reference (a dispute judges
   * it by this); undefined when it is not theirs. Takes the caller's transaction, if it is in one.
   */
  purchaseRecord: typeof findPurchaseRecord;
  /** What an order costs the buyer, in kobo: its wholesale price and its markup. */
  chargeOf: typeof chargeOf;
  /**
   * A purchase reference of the form every provider takes (purchases.ts), dated now, with a suffix
   * of the caller's (a schedule's run derives it from the schedule and the due time).
   */
  purchaseReference: typeof purchaseReference;
  /** Resolves when this process's send of the purchase (if any) has ended. */
  sendEnded(id: string): Promise<void>;
  /** Purchases checked and waiting for a place to be sent, not debited yet. */
  sendsWaiting(): number;
  /** What the purchases sent to a provider, by every process, hold of its float until they settle. */
  floatReservedKobo(provider: string): Promise<bigint>;
  /** Resolves when every send under way, then every batch, has ended (graceful shutdown). */
  drained(): Promise<void>;
  /** Each provider's float as it reports it now, with the floor operators are warned under (/metrics). */
  floatBalances(): Promise<FloatBalance[]>;
  /** Purchases still processing, and those past the stuck-alert window (/metrics). */
  processingPurchases(): Promise<ProcessingPurchases>;
  /** How many of one person's purchases are still processing, on the handle given (a closing account's). */
  processingPurchasesOf: typeof processingPurchasesOf;
  /** Reconciliation (API.md 17.5): the purchases routed to a provider (data, bills, social) in [from, to). */
  purchasesSentBetween(provider: string, from: Date, to: Date): Promise<SentPurchase[]>;
  /** Reconciliation: the purchases with these references, whenever made. */
  purchasesByReference(references: readonly string[]): Promise<Map<string, SentPurchase>>;
};

export type VtuModule = DomainModule &
  MovesWallet & {
    api: VtuApi;
    /** Closes what counts the providers' send rates (its Redis connection), after drained(). */
    close(): Promise<void>;
  };

export function createVtuModule(deps: VtuModuleDeps): VtuModule {
  const { db, batching, clock, jobs, logger, config } = deps;
  const { vtu } = config;
  const settlement: SettlementDeps = {
    db,
    clock,
    jobs,
    raiseAlert: deps.raiseAlert,
    metrics: deps.metrics,
    giveBackRoom: deps.limits.giveBackRoom,
    ledgerShards: config.database.ledgerShards,
  };
  const float: FloatDeps = {
    ...settlement,
    funding: deps.funding,
    destinations: { data: vtu.data.funding, bills: vtu.bills.funding, social: vtu.social.funding },
    topupMinKobo: vtu.floatTopupMinKobo,
  };
  // Each provider's sends per second across every process (VTU_PROVIDER_RATE_<NAME>).
  const providerRates = createProviderRates({
    db,
    clock,
    logger,
    rates: vtu.providerRates,
    ...(deps.providerRateRedis !== undefined ? { redis: deps.providerRateRedis } : {}),
  });
  const claims = { ...settlement, providers: deps.providers, float, providerRates };
  // Each stage's batches, run by the function that takes the batch (batches.ts).
  const batches = createPurchaseBatches(batching);
  // A frozen account pays for nothing, and nothing passes the CBN daily limit, whatever other rules
  // run (decisions 0040 and 0044).
  const debitRules = [accountNotFrozen(deps.frozenAmong), deps.limits.dailyDebitRule, ...deps.debitRules];
  const acceptance: AcceptBatchDeps = { ...settlement, logger, debitRules };
  batches.define(acceptPurchases, acceptance, acceptBatchOptions(acceptance));
  batches.define(claimPurchases, claims, claimBatchOptions);
  batches.define(settlePurchases, settlement, settleBatchOptions);
  const dispatching: DispatchDeps = { ...claims, logger, batches, sends: createInlineSends(vtu.sendsMax) };
  const accepting: AcceptStageDeps = { ...dispatching, debitRules };
  const ops: PurchaseOpsDeps = { ...deps, purchaseReads: createPurchaseReads(deps, batching), accepting };
  const requeryOptions = requeryOptionsOf(config);

  return {
    operations: [
      ...purchaseOperations(ops),
      ...routedServiceOperations(ops),
      ...operatorPurchaseOperations({ db: deps.db }),
    ],
    jobs: purchaseJobs(dispatching, requeryOptions, logger),
    close: () => providerRates.close(),
    // Purchases react to their provider's float top-up: sent once it settled, failed and refunded
    // when it failed (they were never sent). Each may run twice (the domain-event job): dispatch and
    // failWaiting act only on purchases still processing and unsent.
    subscribers: [
      on('funding.float_top_up_settled', (event) =>
        dispatchPurchasesWaitingFor(dispatching, event.reference),
      ),
      on('funding.float_top_up_failed', (event) =>
        failPurchasesWaitingFor(settlement, event.reference, event.reason),
      ),
    ],
    // A purchase's debit and refund; a settlement reaches the wallet for a sale's payout (from
    // airtime_cash_payouts, settlement.ts) or for the part of a purchase not delivered. In this order:
    // the first rule that matches wins.
    movementKinds: [
      { kind: 'purchase', reference: purchasePostings.debit },
      { kind: 'refund', reference: purchasePostings.refund },
      {
        kind: 'airtime_cash',
        reference: purchasePostings.settle,
        alongside: systemAccounts.airtimeCashPayouts,
      },
      { kind: 'refund', reference: purchasePostings.settle },
    ],
    api: {
      async requeryDue(options = {}) {
        const counts = await requeryDuePurchases(dispatching, { ...requeryOptions, ...options });
        await requeryAwaitedDeliveries(dispatching, { ...requeryOptions, ...options });
        return counts;
      },
      purchasesSentBetween: (provider, from, to) => purchasesSentBetween(db, provider, from, to),
      purchasesByReference: (references) => purchasesByReference(db, references),
      requeryReference: (service, reference) =>
        requeryByReference(dispatching, service, reference, requeryOptions),
      async authorise(userId, pin) {
        await authorisedMarkupOf(ops, userId, pin);
      },
      requireOpen: (service) => requireRouteOpen(ops, service),
      async orderFor(userId, service, fields) {
        const { buyer, markupOf } = await ops.purchaseReads(userId);
        deps.requireTier(buyer?.kyc_tier ?? 0, 1);
        return purchaseOrders[service](ops, markupOf, fields);
      },
      buyTogether: (userId, orders, withCommit, references) =>
        buyTogether(ops, userId, orders, withCommit, references),
      purchasesOf: (userId, ids) => findPurchases(ops, userId, ids),
      personalDataOf: async (userId) => (await listPurchases(ops, userId, {}, everyRow)).items,
      acceptPurchase: (userId, order, withCommit) => acceptPurchase(accepting, userId, order, withCommit),
      purchaseRecord: findPurchaseRecord,
      chargeOf,
      purchaseReference,
      // The sends' own functions (they use no `this`), so that a caller lands in dispatch.ts.
      sendEnded: dispatching.sends.ended,
      sendsWaiting: dispatching.sends.waiting,
      floatReservedKobo: (provider) => floatReservedKobo(db, provider),
      async drained() {
        await dispatching.sends.allEnded();
        await batches.drained();
      },
      floatBalances: () => floatBalances(deps.providers, vtu.floatFloorKobo),
      processingPurchases: () => processingPurchases(settlement, requeryOptions.stuckAlertAfterSeconds),
      processingPurchasesOf,
    },
  };
}

/**
 * The purchases' background jobs: the acceptance's safety net that sends what a crash left unsent,
 * and the requery of the purchases still processing.
 */
function purchaseJobs(
  dispatching: DispatchDeps,
  requeryOptions: RequeryOptions,
  logger: Logger,
): readonly JobDefinition[] {
  return [
    // The purchases accepted by one transaction: the accepting process sends them right after
    // commit; this job is the safety net after a crash, and takes a purchase whose dispatch failed
    // there (accept.ts). At most one run sends each (dispatch claims the row), so the job nearly
    // always finds them all sent.
    jobDefinition(vtuDispatchJob, {
      batchSize: 20,
      retryLimit: 5,
      retryDelaySeconds: 10,
      expireInSeconds: 120,
      // Enqueued in every acceptance's transaction: no NOTIFY on the purchase path (decision 0036).
      wake: 'poll',
      handler: async ({ ids }) => {
        await Promise.all(ids.map((id) => dispatchPurchase(dispatching, id)));
      },
    }),
    // Purchases still processing (pending or unknown at the provider): requeried on their backoff
    // schedule under the same reference; alerted, never refunded, when they stay unresolved.
    jobDefinition(vtuRequeryJob, {
      cron: '* * * * *',
      retryLimit: 1,
      retryDelaySeconds: 30,
      expireInSeconds: 300,
      runOnClockAdvance: true,
      // Also the successes still awaiting their token or pins (late-delivery.ts), on the same
      // schedule: they move no money, and are asked about until they come.
      handler: async () => {
        const counts = await requeryDuePurchases(dispatching, requeryOptions);
        if (counts.checked > 0) logger.info({ counts }, 'purchase requery run');
        const deliveries = await requeryAwaitedDeliveries(dispatching, requeryOptions);
        if (deliveries.checked > 0) logger.info({ deliveries }, 'awaited deliveries requery run');
      },
    }),
  ];
}
