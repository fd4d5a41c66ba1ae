import type { Logger } from 'pino';
import type { Batching } from '../db/batching.ts';
import type { WithCommit } from '../db/unit-of-work.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { requireTier } from '../kyc/guard.ts';
import { type DomainModule, on } from '../module.ts';
import type { PaymentProvider } from '../providers/payments/payment-provider.ts';
import type { VtuService } from '../providers/vtu/vtu-provider.ts';
import { type AcceptDeps, acceptPurchase, acceptPurchasesBatcher } from './accept.ts';
import type { DebitRule } from './debit-rules.ts';
import {
  claimPurchasesBatcher,
  createInlineSends,
  type DispatchDeps,
  dispatchPurchase,
  dispatchPurchasesWaitingFor,
  JOB_VTU_DISPATCH,
} from './dispatch.ts';
import { createFloatInFlight, type FloatDeps, type FloatInFlight, failPurchasesWaitingFor } from './float.ts';
import { requeryAwaitedDeliveries } from './late-delivery.ts';
import {
  type FloatBalance,
  floatBalances,
  type ProcessingPurchases,
  processingPurchases,
} from './operator-figures.ts';
import type { PurchaseMetrics } from './purchase-metrics.ts';
import {
  authorise,
  buyTogether,
  createPurchaseReads,
  type OrderedService,
  type PurchaseFields,
  type PurchaseOpsDeps,
  purchaseOperations,
  purchaseOrders,
} from './purchase-ops.ts';
import { findPurchaseRecord } from './purchase-records.ts';
import { findPurchases, type PurchaseOrder, type VtuTransactionView } from './purchases.ts';
import {
  JOB_VTU_REQUERY,
  type RequeryCounts,
  requeryByReference,
  requeryDuePurchases,
  requeryOptionsOf,
} from './requery.ts';
import { routedServiceOperations } from './routed-service-ops.ts';
import { type SettlementDeps, settlePurchasesBatcher } from './settlement.ts';

// VTU purchases (SPEC.md items 2-5, API.md sections 5 and 14): the six purchases, social orders and
// airtime-to-cash, each through one path of stages, each stage one named function in its own file:
//
//   handler (purchase-ops.ts) → acceptPurchase (accept.ts) ─(commit)→ dispatchPurchase (dispatch.ts)
//     → the provider's adapter → settlePurchases (settlement.ts)
//   JOB_VTU_DISPATCH (the acceptance's safety net) → dispatchPurchase
//   JOB_VTU_REQUERY (every minute) → requeryDuePurchases (requery.ts) → settlePurchases
//                                   → requeryAwaitedDeliveries (late-delivery.ts): tokens, pins to come
//
// The module owns what the stages share: the group commit of acceptances, claims and settlements
// (one batcher each, named after the function it runs), the bound on purchases sent at once, what
// is in flight to each provider (float.ts) and the purchases' batched reads. All of it is built once
// here, so every batch runs over the same deps.

/**
 * The purchase operations' deps (purchase-ops.ts) but the two the module builds for them, and what
 * the stages after the checks need besides.
 */
export type VtuModuleDeps = Omit<PurchaseOpsDeps, 'purchaseReads' | 'accepting'> & {
  /** The database's batchers and loaders (the group commit). */
  batching: Batching;
  jobs: JobQueue;
  logger: Logger;
  /** Tops up a provider's float by an outbound transfer (float.ts). */
  payments: PaymentProvider;
  /** The purchase rules decided at debit time (debit-rules.ts); none by default. */
  debitRules: readonly DebitRule[];
  /** The purchases' figures for operators (/metrics): accepted and settled, by service and provider. */
  metrics: PurchaseMetrics;
};

/** What other modules (and the composition root, and tests) may call of the purchases. */
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
  /** Accepts a checked purchase, as the operations do after their checks (tests of the accept stage). */
  acceptPurchase(userId: string, order: PurchaseOrder, withCommit?: WithCommit): Promise<VtuTransactionView>;
  /**
   * What the purchases keep about one of the user's purchases, by id or reference (a dispute judges
   * it by this); undefined when it is not theirs. Takes the caller's transaction, if it is in one.
   */
  purchaseRecord: typeof findPurchaseRecord;
  /** Resolves when this process's send of the purchase (if any) has ended. */
  sendEnded(id: string): Promise<void>;
  /** Purchases checked and waiting for a place to be sent, not debited yet. */
  sendsWaiting(): number;
  /** What this module is sending to each provider right now. */
  floatInFlight: Pick<FloatInFlight, 'amount'>;
  /** Resolves when every send under way, then every batch, has ended (graceful shutdown). */
  drained(): Promise<void>;
  /** Each provider's float as it reports it now, with the floor operators are warned under (/metrics). */
  floatBalances(): Promise<FloatBalance[]>;
  /** Purchases still processing, and those past the stuck-alert window (/metrics). */
  processingPurchases(): Promise<ProcessingPurchases>;
};

export type VtuModule = DomainModule & { api: VtuApi };

export function createVtuModule(deps: VtuModuleDeps): VtuModule {
  const { db, batching, clock, jobs, logger, config } = deps;
  const { vtu } = config;
  const settlement: SettlementDeps = { db, clock, jobs, metrics: deps.metrics };
  const float: FloatDeps = {
    ...settlement,
    payments: deps.payments,
    destinations: { data: vtu.data.funding, bills: vtu.bills.funding, social: vtu.social.funding },
    topupMinKobo: vtu.floatTopupMinKobo,
    inFlight: createFloatInFlight(),
  };
  const claims = { ...settlement, providers: deps.providers, float };
  const dispatching: DispatchDeps = {
    ...claims,
    logger,
    claimPurchasesBatcher: claimPurchasesBatcher(claims, batching),
    settlePurchasesBatcher: settlePurchasesBatcher(settlement, batching),
    sends: createInlineSends(vtu.sendsMax),
  };
  const accepting: AcceptDeps = {
    ...dispatching,
    acceptPurchasesBatcher: acceptPurchasesBatcher(
      { ...settlement, logger, debitRules: deps.debitRules },
      batching,
    ),
    debitRules: deps.debitRules,
  };
  const ops: PurchaseOpsDeps = { ...deps, purchaseReads: createPurchaseReads(db, batching), accepting };
  const requeryOptions = requeryOptionsOf(config);

  return {
    operations: [...purchaseOperations(ops), ...routedServiceOperations(ops)],
    jobs: [
      {
        // The purchases accepted by one transaction: the accepting process sends them right after
        // commit; this job is the safety net after a crash, and takes a purchase whose dispatch
        // failed there (accept.ts). At most one run sends each (dispatch claims the row), so the job
        // nearly always finds them all sent.
        name: JOB_VTU_DISPATCH,
        batchSize: 20,
        retryLimit: 5,
        retryDelaySeconds: 10,
        expireInSeconds: 120,
        handler: async (data) => {
          // { id } is the form of jobs enqueued before purchases were accepted in batches.
          const { ids, id } = data as { ids?: string[]; id?: string };
          await Promise.all((ids ?? [id!]).map((one) => dispatchPurchase(dispatching, one)));
        },
      },
      {
        // Purchases still processing (pending or unknown at the provider): requeried on their backoff
        // schedule under the same reference; alerted, never refunded, when they stay unresolved.
        name: JOB_VTU_REQUERY,
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
      },
    ],
    // Purchases react to their provider's float top-up: sent once it settled, failed and refunded
    // when it failed (they were never sent). Each may run twice (the domain-event job): dispatch and
    // failWaiting act only on purchases still processing and unsent.
    subscribers: [
      on('funding.transfer_settled', (event) => dispatchPurchasesWaitingFor(dispatching, event.reference)),
      on('funding.transfer_failed', (event) =>
        failPurchasesWaitingFor(settlement, event.reference, event.reason),
      ),
    ],
    api: {
      async requeryDue(options = {}) {
        const counts = await requeryDuePurchases(dispatching, { ...requeryOptions, ...options });
        await requeryAwaitedDeliveries(dispatching, { ...requeryOptions, ...options });
        return counts;
      },
      requeryReference: (service, reference) =>
        requeryByReference(dispatching, service, reference, requeryOptions),
      async authorise(userId, pin) {
        await authorise(ops, userId, pin);
      },
      async orderFor(userId, service, fields) {
        const { buyer, markupOf } = await ops.purchaseReads(userId);
        requireTier(buyer?.kyc_tier ?? 0, 1);
        return purchaseOrders[service](ops, markupOf, fields);
      },
      buyTogether: (userId, orders, withCommit, references) =>
        buyTogether(ops, userId, orders, withCommit, references),
      purchasesOf: (userId, ids) => findPurchases(ops, userId, ids),
      acceptPurchase: (userId, order, withCommit) => acceptPurchase(accepting, userId, order, withCommit),
      purchaseRecord: findPurchaseRecord,
      // The sends' own functions (they use no `this`), so that a caller lands in dispatch.ts.
      sendEnded: dispatching.sends.ended,
      sendsWaiting: dispatching.sends.waiting,
      floatInFlight: float.inFlight,
      async drained() {
        await dispatching.sends.allEnded();
        await accepting.acceptPurchasesBatcher.drained();
        await dispatching.claimPurchasesBatcher.drained();
        await dispatching.settlePurchasesBatcher.drained();
      },
      floatBalances: () => floatBalances(deps.providers, vtu.floatFloorKobo),
      processingPurchases: () => processingPurchases(settlement, requeryOptions.stuckAlertAfterSeconds),
    },
  };
}
