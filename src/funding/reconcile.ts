import assert from 'node:assert/strict';
import { defineJob, noPayload } from '../jobs/job.ts';
import { PaymentProviderError } from '../providers/payments/payment-provider.ts';
import { creditBankDeposit } from './dedicated-accounts.ts';
import { floatTopUpEnd, settleFloatTopUp } from './float-top-ups.ts';
import { type FundingDeps, reconcileTopup } from './service.ts';

// Reconciliation (SPEC.md item 14, Events rule 5): a top-up whose webhook never arrived is found by
// asking the provider about every intent still pending, and credited once through the same path as
// verifyTopup (reconcileTopup → creditTopup). Runs every five minutes as a job and on demand
// (adminReconcile). Purchases will add their requery here, beside top-ups.

export const fundingReconcileJob = defineJob('funding.reconcile', noPayload);

export type ReconcileTopupsOptions = {
  /** Intents younger than this are left alone: their user may still be at the checkout. */
  olderThanSeconds: number;
  /** At most this many intents per run, the least recently asked about first; the next run takes the rest. */
  batchMax: number;
  /**
   * An intent older than this whose checkout the provider still reports unpaid ('abandoned') is
   * closed as failed. Any other non-definite answer keeps it pending. A payment made after that is
   * still credited by its webhook.
   */
  abandonedAfterSeconds: number;
  /** Told about each intent the provider could not answer for (the job logs it). */
  onError?: (reference: string, error: PaymentProviderError) => void;
};

export const reconcileDefaults = {
  olderThanSeconds: 60,
  batchMax: 100,
  abandonedAfterSeconds: 24 * 60 * 60,
} as const satisfies ReconcileTopupsOptions;

export type TopupReconcileCounts = {
  /** Intents asked about. */
  checked: number;
  /** Credited by this run (a missed webhook recovered). */
  credited: number;
  /** Marked failed on the provider's definite failure (declined, reversed). */
  failed: number;
  /** Closed as failed: left unpaid at the checkout for longer than abandonedAfterSeconds. */
  expired: number;
  /** Credited or failed by someone else (a webhook, the user's verifyTopup) while this run looked. */
  settledMeanwhile: number;
  /** The provider has no definite answer yet: left pending for the next run. */
  stillPending: number;
  /** The provider could not be reached or answered unreadably: nothing changed, the next run retries. */
  errors: number;
};

/** Counts per kind of record, so that purchases can join top-ups without changing the shape. */
export type ReconcileCounts = {
  topups: TopupReconcileCounts;
  /** The float top-ups: `transfers` is adminReconcile's name for them in the contract (decision 0038). */
  transfers: FloatTopUpReconcileCounts;
  dedicatedAccounts: DedicatedReconcileCounts;
};

export type DedicatedReconcileCounts = {
  /** Successful bank deposits into dedicated accounts the provider listed. */
  scanned: number;
  /** Credited by this run: their webhook was lost. */
  credited: number;
  alreadyCredited: number;
  /** Into an account that is not one of ours (or not in NGN): left alone. */
  ignored: number;
  /** The provider could not be reached or answered unreadably: the scan resumes next run. */
  errors: number;
};

export type ReconcileDedicatedOptions = {
  /** How far back the first scan ever looks. */
  firstScanSeconds: number;
  /** Each scan starts this long before the last one ended, for transactions listed late. */
  overlapSeconds: number;
  perPage: number;
  /** At most this many pages per run; a longer scan continues next run. */
  pagesMax: number;
  onError?: (scan: string, error: PaymentProviderError) => void;
};

export const dedicatedReconcileDefaults = {
  firstScanSeconds: 24 * 60 * 60,
  overlapSeconds: 10 * 60,
  perPage: 100,
  pagesMax: 20,
} as const satisfies ReconcileDedicatedOptions;

/** The scan's row in reconcile_cursors: a stored name, kept through decision 0038's rename. */
export const dedicatedScanCursor = 'dedicated_account_transfers';

/**
 * Bank deposits into dedicated accounts have no intent to re-verify, so a lost charge.success would
 * leave the money uncredited forever. This lists the provider's successful dedicated_nuban
 * transactions since the last complete scan and credits each once (the same path as the webhook:
 * the ledger reference `dva:<reference>` makes a second credit impossible). The cursor moves only
 * after a complete scan, so a failed or cut-short run is repeated, never skipped.
 */
export async function reconcileBankDeposits(
  deps: FundingDeps,
  options: ReconcileDedicatedOptions,
): Promise<DedicatedReconcileCounts> {
  assert.ok(options.perPage >= 1 && options.pagesMax >= 1, 'at least one page of one item');
  const now = deps.clock.now();
  const cursor = await deps.db
    .selectFrom('reconcile_cursors')
    .select('position')
    .where('name', '=', dedicatedScanCursor)
    .executeTakeFirst();
  const from = cursor?.position ?? new Date(now.getTime() - options.firstScanSeconds * 1000);
  const counts: DedicatedReconcileCounts = {
    scanned: 0,
    credited: 0,
    alreadyCredited: 0,
    ignored: 0,
    errors: 0,
  };

  let complete = false;
  try {
    for (let page = 1; page <= options.pagesMax; page++) {
      const { transactions, pageCount } = await deps.payments.listTransactions({
        from,
        to: now,
        status: 'success',
        channel: 'dedicated_nuban',
        page,
        perPage: options.perPage,
      });
      for (const transaction of transactions) {
        counts.scanned += 1;
        if (
          transaction.status !== 'success' ||
          transaction.currency !== 'NGN' ||
          transaction.amountKobo <= 0n
        ) {
          counts.ignored += 1;
          continue;
        }
        const outcome = await deps.db.transaction().execute((trx) =>
          creditBankDeposit(deps, trx, {
            reference: transaction.reference,
            paidKobo: transaction.amountKobo,
            accountNumber: transaction.receiverAccountNumber,
            customerCode: transaction.customerCode,
          }),
        );
        if (outcome === 'credited') counts.credited += 1;
        else if (outcome === 'already_credited') counts.alreadyCredited += 1;
        else counts.ignored += 1;
      }
      if (page >= pageCount || transactions.length === 0) {
        complete = true;
        break;
      }
    }
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    counts.errors += 1;
    options.onError?.(dedicatedScanCursor, error);
  }
  if (complete) {
    const position = new Date(now.getTime() - options.overlapSeconds * 1000);
    await deps.db
      .insertInto('reconcile_cursors')
      .values({ name: dedicatedScanCursor, position, updated_at: now })
      .onConflict((oc) =>
        // Never backwards: a slow run finishing after a newer one leaves the newer position.
        oc
          .column('name')
          .doUpdateSet({ position, updated_at: now })
          .where('reconcile_cursors.position', '<', position),
      )
      .execute();
  }
  return counts;
}

export type FloatTopUpReconcileCounts = {
  /** Pending float top-ups asked about. */
  checked: number;
  /** Found settled, failed or reversed by this run (a missed webhook recovered). */
  resolved: number;
  /** Closed as failed: the provider still had no record of the reference after notFoundAfterSeconds. */
  notFound: number;
  /** Still pending at the provider, or unknown to it for less than notFoundAfterSeconds. */
  stillPending: number;
  /** The provider could not be reached or answered unreadably. */
  errors: number;
};

export type ReconcileFloatTopUpsOptions = {
  /** Top-ups younger than this are left to their webhook. */
  olderThanSeconds: number;
  batchMax: number;
  /**
   * A top-up whose transfer the provider still does not know this long after we recorded it never reached it
   * (the initiating call was lost before the provider saw it): closed as failed.
   */
  notFoundAfterSeconds: number;
  onError?: (reference: string, error: PaymentProviderError) => void;
};

export const floatTopUpReconcileDefaults = {
  olderThanSeconds: 60,
  batchMax: 100,
  notFoundAfterSeconds: 30 * 60,
} as const satisfies ReconcileFloatTopUpsOptions;

/**
 * Asks the provider about the transfer of every float top-up still pending, least recently asked
 * first, and moves it through the same state machine as its webhooks (float-top-ups.ts), so a lost
 * transfer.* webhook changes nothing but the delay.
 */
export async function reconcileFloatTopUps(
  deps: FundingDeps,
  options: ReconcileFloatTopUpsOptions,
): Promise<FloatTopUpReconcileCounts> {
  assert.ok(options.batchMax >= 1, 'batchMax is at least 1');
  assert.ok(options.notFoundAfterSeconds > options.olderThanSeconds, 'not found means older than pending');
  const now = deps.clock.now();
  const pending = await deps.db
    .selectFrom('float_top_ups')
    .select(['id', 'reference', 'created_at'])
    .where('status', '=', 'pending')
    .where('updated_at', '<=', new Date(now.getTime() - options.olderThanSeconds * 1000))
    .orderBy('updated_at', 'asc')
    .orderBy('id', 'asc')
    .limit(options.batchMax)
    .execute();
  const counts: FloatTopUpReconcileCounts = {
    checked: 0,
    resolved: 0,
    notFound: 0,
    stillPending: 0,
    errors: 0,
  };
  for (const row of pending) {
    counts.checked += 1;
    try {
      const transfer = await deps.payments.verifyTransfer(row.reference);
      const end = transfer === null ? null : floatTopUpEnd(transfer.status);
      const lostForGood =
        transfer === null && now.getTime() - row.created_at.getTime() >= options.notFoundAfterSeconds * 1000;
      if (end !== null) {
        await settleFloatTopUp(deps, {
          reference: row.reference,
          end,
          reason: transfer?.reason ?? null,
          ...(transfer === null ? {} : { amountKobo: transfer.amountKobo }),
        });
        counts.resolved += 1;
      } else if (lostForGood) {
        await settleFloatTopUp(deps, {
          reference: row.reference,
          end: 'failed',
          reason: 'the payment provider has no record of the transfer',
        });
        counts.notFound += 1;
      } else {
        counts.stillPending += 1;
        await deps.db
          .updateTable('float_top_ups')
          .set({ updated_at: now })
          .where('id', '=', row.id)
          .where('status', '=', 'pending')
          .execute();
      }
    } catch (error) {
      if (!(error instanceof PaymentProviderError)) throw error;
      counts.errors += 1;
      options.onError?.(row.reference, error);
    }
  }
  return counts;
}

export async function reconcileTopups(
  deps: FundingDeps,
  options: ReconcileTopupsOptions,
): Promise<TopupReconcileCounts> {
  assert.ok(Number.isInteger(options.batchMax), 'batchMax is a whole number');
  assert.ok(options.batchMax >= 1, 'batchMax is at least 1');
  assert.ok(options.olderThanSeconds >= 0, 'olderThanSeconds is not negative');
  assert.ok(options.abandonedAfterSeconds > options.olderThanSeconds, 'abandoned means older than pending');

  const now = deps.clock.now();
  const createdBefore = new Date(now.getTime() - options.olderThanSeconds * 1000);
  const closeAbandonedBefore = new Date(now.getTime() - options.abandonedAfterSeconds * 1000);
  // The least recently asked about first (a pending intent's updated_at is when it was last asked
  // about), then the oldest: unpaid checkouts that stay pending until they expire cannot keep newer
  // intents, whose webhook may have been lost, out of every batch. Pending intents are few (they
  // expire after abandonedAfterSeconds); topup_intents_pending_idx narrows the scan to them.
  const intents = await deps.db
    .selectFrom('topup_intents')
    .selectAll()
    .where('status', '=', 'pending')
    .where('credited_at', 'is', null)
    .where('created_at', '<=', createdBefore)
    .orderBy('updated_at', 'asc')
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
    .limit(options.batchMax)
    .execute();

  const counts: TopupReconcileCounts = {
    checked: 0,
    credited: 0,
    failed: 0,
    expired: 0,
    settledMeanwhile: 0,
    stillPending: 0,
    errors: 0,
  };
  // One at a time: a provider that is struggling is not hit with a burst.
  for (const intent of intents) {
    counts.checked += 1;
    try {
      const result = await reconcileTopup(deps, intent, { closeAbandonedBefore });
      switch (result.outcome) {
        case 'credited':
          counts.credited += 1;
          break;
        case 'failed':
          counts.failed += 1;
          break;
        case 'expired':
          counts.expired += 1;
          break;
        case 'already_credited':
        case 'settled':
          counts.settledMeanwhile += 1;
          break;
        case 'pending':
          counts.stillPending += 1;
          // To the back of the queue; only while still pending, so no settlement is overwritten.
          await deps.db
            .updateTable('topup_intents')
            .set({ updated_at: now })
            .where('id', '=', intent.id)
            .where('status', '=', 'pending')
            .execute();
          break;
        default: {
          const unreachable: never = result.outcome;
          throw new Error(`unknown reconcile outcome ${String(unreachable)}`);
        }
      }
    } catch (error) {
      // One provider failure must not stop the others; anything else is a bug and fails the run.
      if (!(error instanceof PaymentProviderError)) throw error;
      counts.errors += 1;
      options.onError?.(intent.reference, error);
    }
  }
  assert.equal(
    counts.credited +
      counts.failed +
      counts.expired +
      counts.settledMeanwhile +
      counts.stillPending +
      counts.errors,
    counts.checked,
    'every intent checked is counted once',
  );
  return counts;
}

/** One reconciliation run of everything that can be reconciled: top-ups, float top-ups, bank deposits. */
export async function reconcile(
  deps: FundingDeps,
  options: ReconcileTopupsOptions = reconcileDefaults,
  floatTopUpOptions: ReconcileFloatTopUpsOptions = floatTopUpReconcileDefaults,
  dedicatedOptions: ReconcileDedicatedOptions = dedicatedReconcileDefaults,
): Promise<ReconcileCounts> {
  return {
    topups: await reconcileTopups(deps, options),
    transfers: await reconcileFloatTopUps(deps, floatTopUpOptions),
    dedicatedAccounts: await reconcileBankDeposits(deps, dedicatedOptions),
  };
}
