import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { AlertsModule } from '../alerts/module.ts';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Batching } from '../db/batching.ts';
import type { DB } from '../db/schema.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { KycModule } from '../kyc/module.ts';
import type { DomainModule } from '../module.ts';
import type { PaymentProvider, VerifiedTransaction } from '../providers/payments/payment-provider.ts';
import type { MovesWallet } from '../wallet/module.ts';
import type { CreditLimits, CreditOutcome } from './credits.ts';
import { dedicatedPostingReference } from './dedicated-accounts.ts';
import {
  type FloatTopUp,
  type FundingDestination,
  floatTopUpStatus,
  latestPendingFloatTopUpTo,
  recordFloatTopUp,
  sendFloatTopUp,
} from './float-top-ups.ts';
import { type PaymentInbox, paymentInbox } from './inbox-figures.ts';
import { fundingOperations } from './ops.ts';
import {
  creditVerifiedPayment,
  type PaymentRecord,
  paymentRecordsBetween,
  paymentRecordsOf,
  type UncreditablePayment,
} from './payment-records.ts';
import {
  dedicatedReconcileDefaults,
  floatTopUpReconcileDefaults,
  fundingReconcileJob,
  type ReconcileCounts,
  reconcile,
  reconcileDefaults,
} from './reconcile.ts';
import { purgeProcessedPaymentEvents } from './retention.ts';
import { type FundingDeps, topupPostingReference } from './service.ts';
import { createPaymentEventInbox, type StoredEvent, signaturesValid } from './webhook.ts';
import { createPaymentEventDrainer, paymentWebhookSweepJob } from './webhook-processing.ts';

// Wallet funding (SPEC.md items 12 to 14): checkout top-ups, dedicated accounts, the payment
// provider's webhooks, the float top-ups that fund the VTU providers' floats (float-top-ups.ts,
// called by vtu/float.ts), and the reconciliation that catches what webhooks missed.

export type FundingModuleDeps = {
  /** Where intents, webhooks, dedicated accounts and float top-ups are stored, and the ledger credited. */
  db: Kysely<DB>;
  /** When an intent, a webhook or a float top-up was recorded, and how old a pending one is. */
  clock: Clock;
  /** Enqueues funding's events (a wallet credited, a float top-up's outcome) in the deciding transaction. */
  jobs: JobQueue;
  /** Where the reconciliation and the webhooks' processing log each run and what they could not do. */
  logger: Logger;
  /** The payment provider: checkouts, their verification, dedicated accounts and float top-ups. */
  payments: PaymentProvider;
  /** The database's batching: deliveries of the webhook arriving together are stored in one statement. */
  batching: Batching;
  /** The service's own public base URL: checkouts return to it. */
  baseUrl: string;
  config: {
    /** The provider's bank slug for dedicated accounts (PAYSTACK_PREFERRED_BANK). */
    preferredBank: string;
    /** The secret the provider signs its webhooks with (Paystack's secret key). */
    webhookSecret: string;
    /** The rows each hot system account is kept in (LEDGER_SHARDS, decision 0050). */
    ledgerShards: number;
  };
  /**
   * Alerts' api: the operations alert a payment that does not add up raises (a top-up paid another
   * amount or currency, news of a float top-up that contradicts it or that we never sent), in the
   * transaction that decides it.
   */
  raiseAlert: AlertsModule['api']['raiseAlert'];
  /** Auth's api: the payer's row, whose email and phone the provider's customer is made with. */
  findUserById: AuthApi['findUserById'];
  /** Kyc's api: the Tier 2 gate of a dedicated account (403 KYC_TIER_REQUIRED). */
  requireKycTier: KycModule['api']['requireKycTier'];
  /** Kyc's api: the name on the NIN record of the user's Tier 2, the dedicated account's name. */
  approvedNinName: KycModule['api']['approvedNinName'];
  /**
   * Limits' api: every credit is split at the person's maximum balance under their wallet's lock, the
   * part over it held and the person told (API.md 17.2); never refused.
   */
  limits: CreditLimits;
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

export type { FloatTopUp, FundingDestination } from './float-top-ups.ts';

/**
 * The float top-ups of a VTU provider (float-top-ups.ts), as vtu's float asks
 * them: the decision to start one is made in vtu's transaction, which serialises it per provider.
 */
export type ProviderFunding = {
  /** The reference of the newest top-up of the provider still pending, if any. */
  latestPendingFloatTopUpTo(db: Kysely<DB> | Transaction<DB>, provider: string): Promise<string | undefined>;
  /** Writes a pending top-up in the caller's transaction, before the provider is asked; its reference. */
  recordFloatTopUp(
    db: Kysely<DB> | Transaction<DB>,
    now: Date,
    request: { destination: FundingDestination; amountKobo: bigint; reason: string },
  ): Promise<string>;
  /** Asks the payment provider to make a recorded top-up; the top-up as it stands after its answer. */
  sendFloatTopUp(reference: string): Promise<FloatTopUp>;
  /** The status of a recorded top-up. */
  floatTopUpStatus(db: Kysely<DB> | Transaction<DB>, reference: string): Promise<FloatTopUp['status']>;
};

export type FundingApi = {
  paymentEvents: PaymentEvents;
  /** The float top-ups vtu's float starts and waits for. */
  providerFunding: ProviderFunding;
  /** One reconciliation run, as the five-minute job makes it (reconcile.ts). */
  reconcile(): Promise<ReconcileCounts>;
  /** The stored webhooks not processed yet, and the oldest's arrival (/metrics). */
  paymentInbox(): Promise<PaymentInbox>;
  /** Reconciliation (API.md 17.5): the top-ups asked for and bank deposits credited in [from, to). */
  paymentRecordsBetween(from: Date, to: Date): Promise<PaymentRecord[]>;
  /** Reconciliation: our payments with these provider references, whenever made. */
  paymentRecordsOf(references: readonly string[]): Promise<Map<string, PaymentRecord>>;
  /**
   * Reconciliation's credit of a payment the provider took and we never credited: once, through the
   * top-up's or the bank deposit's own path; `finish` runs in its transaction with the outcome.
   */
  creditVerifiedPayment<T>(
    verified: VerifiedTransaction,
    finish: (trx: Transaction<DB>, outcome: CreditOutcome | UncreditablePayment) => Promise<T>,
  ): Promise<T>;
  /** Retention (decision 0054): one batch of the provider's messages processed and received before `before`. */
  purgeProcessedPaymentEvents(before: Date, batchMax: number): Promise<number>;
};

export type { PaymentRecord, UncreditablePayment };

export type FundingModule = DomainModule & MovesWallet & { api: FundingApi };

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
    raiseAlert: deps.raiseAlert,
    findUserById: deps.findUserById,
    requireKycTier: deps.requireKycTier,
    approvedNinName: deps.approvedNinName,
    limits: deps.limits,
    ledgerShards: deps.config.ledgerShards,
    // The web client's return page, which asks verifyTopup: the redirect itself credits nothing.
    checkoutReturnUrl: `${deps.baseUrl}/fund/return`,
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
        ...floatTopUpReconcileDefaults,
        onError: (reference, error) =>
          logger.warn({ err: error, reference }, 'reconciliation could not verify a float top-up'),
      },
      {
        ...dedicatedReconcileDefaults,
        onError: (_scan, error) =>
          logger.warn({ err: error }, 'reconciliation could not list bank deposits into dedicated accounts'),
      },
    );

  return {
    operations: fundingOperations({ ...fundingDeps, preferredBank: deps.config.preferredBank }),
    jobs: [
      jobDefinition(paymentWebhookSweepJob, {
        // Stored payment webhooks not yet processed. The process that stored them drains them right
        // after commit; this sweep is the safety net for a crash or a failure there. In this process
        // it waits for a drain under way; another process's locked events are skipped, not waited for.
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 10,
        expireInSeconds: 300,
        runOnClockAdvance: true,
        handler: () => paymentEvents.drainNow(),
      }),
      jobDefinition(fundingReconcileJob, {
        // Missed webhooks (SPEC.md item 14): every pending top-up and float top-up older than a
        // minute is verified with the provider, and bank deposits into dedicated accounts since the
        // last scan are listed. Safe to run twice at once: crediting is once per reference.
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
      }),
    ],
    subscribers: [],
    // The wallet's credits from outside: a checkout top-up, a bank deposit into a dedicated account
    // (`bank_transfer`: listTransactions' kind for it in the contract, decision 0038).
    movementKinds: [
      { kind: 'topup', reference: topupPostingReference },
      { kind: 'bank_transfer', reference: dedicatedPostingReference },
    ],
    api: {
      paymentEvents,
      providerFunding: {
        latestPendingFloatTopUpTo,
        recordFloatTopUp,
        sendFloatTopUp: (reference) => sendFloatTopUp(fundingDeps, reference),
        floatTopUpStatus,
      },
      reconcile: reconcileNow,
      paymentInbox: () => paymentInbox(deps),
      paymentRecordsBetween: (from, to) => paymentRecordsBetween(db, from, to),
      paymentRecordsOf: (references) => paymentRecordsOf(db, references),
      creditVerifiedPayment: (verified, finish) => creditVerifiedPayment(fundingDeps, verified, finish),
      purgeProcessedPaymentEvents: (before, batchMax) => purgeProcessedPaymentEvents(db, before, batchMax),
    },
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
    {
      db,
      clock,
      jobs,
      raiseAlert: deps.raiseAlert,
      limits: deps.limits,
      ledgerShards: deps.config.ledgerShards,
    },
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
