import type { Logger } from 'pino';
import type { Batching } from '../db/batching.ts';
import type { DomainModule } from '../module.ts';
import { type PaymentInbox, paymentInbox } from './inbox-figures.ts';
import { fundingOperations } from './ops.ts';
import {
  dedicatedReconcileDefaults,
  JOB_FUNDING_RECONCILE,
  type ReconcileCounts,
  reconcile,
  reconcileDefaults,
  transferReconcileDefaults,
} from './reconcile.ts';
import type { FundingDeps } from './service.ts';
import { createPaymentEventInbox, type StoredEvent, signaturesValid } from './webhook.ts';
import { createPaymentEventDrainer, JOB_PAYMENT_WEBHOOK_SWEEP } from './webhook-processing.ts';

// Wallet funding (SPEC.md items 12 to 14): checkout top-ups, dedicated accounts, the payment
// provider's webhooks, the wallet history, the outbound transfers that fund the providers' floats
// (transfers.ts, called by vtu/float.ts), and the reconciliation that catches what webhooks missed.

export type FundingModuleDeps = Omit<FundingDeps, 'checkoutReturnUrl'> & {
  logger: Logger;
  /** The database's batching: deliveries of the webhook arriving together are stored in one statement. */
  batching: Batching;
  /** The service's own public base URL, known only after listen when PORT is 0: checkouts return to it. */
  baseUrl: { readonly current: string };
  config: {
    /** The provider's bank slug for dedicated accounts (PAYSTACK_PREFERRED_BANK). */
    preferredBank: string;
    /** The secret the provider signs its webhooks with (Paystack's secret key). */
    webhookSecret: string;
  };
};

/** The payment provider's signed webhooks: checked, stored, acknowledged, then processed here. */
export type PaymentEvents = {
  /** Whether the raw body holds a valid signature in every header given (webhook.ts). */
  signaturesValid(rawBody: Buffer, signatures: readonly unknown[]): boolean;
  /**
   * Stores a checked delivery (with those arriving meanwhile: one statement), answering once it is
   * durable; what it stored is then processed by this process without waiting for a job's poll.
   */
  store(rawBody: Buffer): Promise<StoredEvent>;
  /** Processes every stored event this process can take; waits for a processing under way first. */
  drainNow(): Promise<void>;
  /** The deliveries being stored are stored, then every stored event is processed: for closing. */
  drained(): Promise<void>;
};

export type FundingApi = {
  paymentEvents: PaymentEvents;
  /** One reconciliation run, as the five-minute job makes it (reconcile.ts). */
  reconcile(): Promise<ReconcileCounts>;
  /** The stored webhooks not processed yet, and the oldest's arrival (/metrics). */
  paymentInbox(): Promise<PaymentInbox>;
};

export type FundingModule = DomainModule & { api: FundingApi };

/**
 * Stored payment events processed per transaction at most: large enough that a burst of deliveries
 * costs a few commits, small enough that a batch holds its locks (the collections pool) briefly.
 */
const paymentEventBatchMax = 100;

/** Deliveries stored per transaction at most: bounds one statement's size (bodies are ≤ 256 KiB). */
const inboxBatchMax = 64;

export function createFundingModule(deps: FundingModuleDeps): FundingModule {
  const { db, clock, jobs, payments, logger } = deps;
  const fundingDeps: FundingDeps = {
    db,
    clock,
    jobs,
    payments,
    // The web client's return page, which asks verifyTopup: the redirect itself credits nothing.
    checkoutReturnUrl: () => `${deps.baseUrl.current}/fund/return`,
  };
  const paymentEvents = createPaymentEvents(deps);
  const reconcileNow = async (): Promise<ReconcileCounts> =>
    reconcile(
      fundingDeps,
      {
        ...reconcileDefaults,
        onError: (reference, error) =>
          logger.warn({ err: error, reference }, 'reconciliation could not verify a top-up'),
      },
      {
        ...transferReconcileDefaults,
        onError: (reference, error) =>
          logger.warn({ err: error, reference }, 'reconciliation could not verify a transfer'),
      },
      {
        ...dedicatedReconcileDefaults,
        onError: (_scan, error) =>
          logger.warn({ err: error }, 'reconciliation could not list transfers into dedicated accounts'),
      },
    );

  return {
    operations: fundingOperations({ ...fundingDeps, preferredBank: deps.config.preferredBank }),
    jobs: [
      {
        // Stored payment webhooks not yet processed. The process that stored them drains them right
        // after commit; this sweep is the safety net for a crash or a failure there. In this process
        // it waits for a drain under way; another process's locked events are skipped, not waited for.
        name: JOB_PAYMENT_WEBHOOK_SWEEP,
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 10,
        expireInSeconds: 300,
        runOnClockAdvance: true,
        handler: () => paymentEvents.drainNow(),
      },
      {
        // Missed webhooks (SPEC.md item 14): every pending top-up and funding transfer older than a
        // minute is verified with the provider, and transfers into dedicated accounts since the last
        // scan are listed. Safe to run twice at once: crediting is once per reference.
        name: JOB_FUNDING_RECONCILE,
        cron: '*/5 * * * *',
        retryLimit: 2,
        retryDelaySeconds: 30,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const counts = await reconcileNow();
          if (counts.topups.checked + counts.transfers.checked + counts.dedicatedAccounts.credited > 0)
            logger.info({ counts }, 'reconciliation run');
        },
      },
    ],
    subscribers: [],
    api: { paymentEvents, reconcile: reconcileNow, paymentInbox: () => paymentInbox(deps) },
  };
}

/**
 * The inbox that stores deliveries (webhook.ts) and the drainer that processes them
 * (webhook-processing.ts), one of each per context.
 */
function createPaymentEvents(deps: FundingModuleDeps): PaymentEvents {
  const { db, clock, jobs } = deps;
  const inbox = createPaymentEventInbox({ db, clock }, deps.batching, { batchMax: inboxBatchMax });
  const drainer = createPaymentEventDrainer(
    { db, clock, jobs },
    { batchMax: paymentEventBatchMax, logger: deps.logger },
  );
  return {
    signaturesValid: (rawBody, signatures) => signaturesValid(rawBody, signatures, deps.config.webhookSecret),
    async store(rawBody) {
      const stored = await inbox.store(rawBody);
      if (stored.needsProcessing) drainer.kick();
      return stored;
    },
    drainNow: () => drainer.drainNow(),
    async drained() {
      await inbox.drained();
      await drainer.drainNow();
    },
  };
}
