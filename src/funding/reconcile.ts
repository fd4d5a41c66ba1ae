import assert from 'node:assert/strict';
import { PaymentProviderError } from '../providers/payments/payment-provider.ts';
import { type FundingDeps, reconcileTopup } from './service.ts';

// Reconciliation (SPEC.md item 14, Events rule 5): a top-up whose webhook never arrived is found by
// asking the provider about every intent still pending, and credited once through the same path as
// verifyTopup (reconcileTopup → creditTopup). Runs every five minutes as a job and on demand
// (adminReconcile). Purchases will add their requery here, beside top-ups.

export const JOB_FUNDING_RECONCILE = 'funding.reconcile';

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
export type ReconcileCounts = { topups: TopupReconcileCounts };

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

/** One reconciliation run of everything that can be reconciled (today: top-ups). */
export async function reconcile(
  deps: FundingDeps,
  options: ReconcileTopupsOptions = reconcileDefaults,
): Promise<ReconcileCounts> {
  return { topups: await reconcileTopups(deps, options) };
}
