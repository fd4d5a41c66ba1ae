import type { Config } from '../config.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import type { RequeryOutcome, VtuService } from '../providers/vtu/vtu-provider.ts';
import { type DispatchDeps, type DispatchResult, dispatchPurchase, providerOf } from './dispatch.ts';
import type { VtuTransaction } from './purchases.ts';
import { lockPurchase, type SettlementDeps, settlePurchases } from './settlement.ts';

// Finding out what became of a purchase whose outcome is still unknown (the requery stage): every
// minute the purchases whose next requery is due are asked about, under their own reference, and
// their answers settled as the first answer would have been (settlement.ts). A purchase never sent
// (the process died between its commit and its dispatch, and its job was lost too) is sent now. One
// still unresolved after half an hour raises one operations alert; none is ever refunded blindly.

/** Purchases still processing, requeried on their backoff schedule (a job every minute). */
export const vtuRequeryJob = defineJob('vtu.requery', noPayload);

export type RequeryOptions = {
  batchMax: number;
  /** A purchase the provider still does not know this long after it was sent never reached it: failed. */
  notFoundFailAfterSeconds: number;
  /**
   * A send's longest wait for its provider (VTU_TIMEOUT_MS): "not found" is believed only this long
   * after the purchase's previous requery, when no send of it can still be on its way.
   */
  sendTimeoutMs: number;
  /** A purchase unresolved this long after acceptance raises one operations alert. */
  stuckAlertAfterSeconds: number;
  /**
   * A credit (airtime-to-cash) the provider has not confirmed this long after it was accepted fails,
   * with nothing moved (API.md section 14: 30 minutes by default, AIRTIME_TO_CASH_WINDOW_MINUTES).
   */
  creditConfirmWindowSeconds: number;
  /** Every processing purchase, not only those due (adminReconcile: "requery now"). */
  includeNotDue?: boolean;
};

export const requeryDefaults = {
  batchMax: 100,
  notFoundFailAfterSeconds: 15 * 60,
  sendTimeoutMs: 20_000,
  stuckAlertAfterSeconds: 30 * 60,
  creditConfirmWindowSeconds: 30 * 60,
} as const satisfies RequeryOptions;

/** The requery runner's limits, with the send timeout and the airtime-to-cash window from the configuration. */
export function requeryOptionsOf(config: Pick<Config, 'airtimeToCash' | 'vtu'>): RequeryOptions {
  return {
    ...requeryDefaults,
    sendTimeoutMs: config.vtu.timeoutMs,
    creditConfirmWindowSeconds: config.airtimeToCash.windowMinutes * 60,
  };
}

export type RequeryCounts = {
  checked: number;
  succeeded: number;
  failed: number;
  stillProcessing: number;
  /** Accepted but never sent (the process died between commit and dispatch): sent now. */
  dispatched: number;
  alerted: number;
};

/**
 * Requeries every purchase whose next requery is due (or which was never sent), oldest due first.
 * Runs as a job every minute, on the sandbox clock, and from adminReconcile.
 */
export async function requeryDuePurchases(
  deps: DispatchDeps,
  options: RequeryOptions,
): Promise<RequeryCounts> {
  const now = deps.clock.now();
  let query = deps.db.selectFrom('vtu_transactions').selectAll().where('status', '=', 'processing');
  if (options.includeNotDue !== true) query = query.where('next_requery_at', '<=', now);
  const due = await query
    .orderBy('next_requery_at', 'asc')
    .orderBy('id', 'asc')
    .limit(options.batchMax)
    .execute();
  return requeryPurchases(deps, due, now, options);
}

/**
 * Requeries the provider about one purchase still processing, found by our reference (a provider's
 * callback says something changed: its body is never trusted, the provider is asked). Answers what
 * became of it, or null for no such purchase, or one already settled.
 */
export async function requeryByReference(
  deps: DispatchDeps,
  service: VtuService,
  reference: string,
  options: RequeryOptions,
): Promise<RequeryCounts | null> {
  const purchase = await deps.db
    .selectFrom('vtu_transactions')
    .selectAll()
    .where('reference', '=', reference)
    .where('service', '=', service)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  if (purchase === undefined || purchase.sent_at === null) return null;
  return requeryPurchases(deps, [purchase], deps.clock.now(), options);
}

async function requeryPurchases(
  deps: DispatchDeps,
  due: VtuTransaction[],
  now: Date,
  options: RequeryOptions,
): Promise<RequeryCounts> {
  const counts: RequeryCounts = {
    checked: 0,
    succeeded: 0,
    failed: 0,
    stillProcessing: 0,
    dispatched: 0,
    alerted: 0,
  };
  for (const purchase of due) {
    counts.checked += 1;
    let result: DispatchResult;
    if (purchase.sent_at === null) {
      result = await dispatchPurchase(deps, purchase.id);
      if (result !== 'already_sent' && result !== 'waiting') counts.dispatched += 1;
    } else {
      let outcome = await requery(deps, purchase);
      if (outcome.status === 'not_found' && neverReachedProvider(purchase, now, options)) {
        outcome = { status: 'failed', reason: 'the provider has no record of the purchase' };
      }
      outcome = outsideConfirmWindow(purchase, outcome, now, options);
      result = await deps.batches.join(settlePurchases, { id: purchase.id, outcome });
    }
    if (result === 'success') counts.succeeded += 1;
    else if (result === 'failed') counts.failed += 1;
    else {
      counts.stillProcessing += 1;
      const age = now.getTime() - purchase.created_at.getTime();
      if (age >= options.stuckAlertAfterSeconds * 1000 && purchase.stuck_alerted_at === null) {
        await alertStuck(deps, purchase.id, Math.floor(age / 60_000));
        counts.alerted += 1;
      }
    }
  }
  return counts;
}

/**
 * Whether a purchase its provider answers "not found" about never reached it, so that failing it
 * (and refunding it) loses nothing: 15 minutes after it was sent, and a whole send timeout after this
 * purchase's previous requery, or its claim. That previous requery came after the send began, so by
 * now the send has ended: a request still on its way, which the provider would take a moment later,
 * is never judged lost. On the real clock the second condition holds long before the first; only a
 * clock that jumps (the sandbox's, moved 15 minutes or more at once) could otherwise requery a
 * purchase seconds after its claim and find it "old" (decision 0055).
 */
function neverReachedProvider(purchase: VtuTransaction, now: Date, options: RequeryOptions): boolean {
  if (purchase.sent_at === null) return false;
  const sentFor = now.getTime() - purchase.sent_at.getTime();
  // updated_at: the purchase's last write, its claim's or its previous requery's (settlement.ts requeryLater).
  const sinceLastLook = now.getTime() - purchase.updated_at.getTime();
  return (
    sentFor >= options.notFoundFailAfterSeconds * 1000 &&
    purchase.requery_attempts > 0 &&
    sinceLastLook >= options.sendTimeoutMs
  );
}

/**
 * A credit still unconfirmed once its window has passed fails: nothing was debited, so nothing moves
 * and nothing is owed. Should the airtime arrive after all, the provider's late confirmation finds
 * the sale settled, and operations sort it out with the provider.
 */
function outsideConfirmWindow(
  purchase: VtuTransaction,
  outcome: RequeryOutcome,
  now: Date,
  options: RequeryOptions,
): RequeryOutcome {
  if (purchase.direction !== 'credit' || outcome.status === 'success' || outcome.status === 'failed')
    return outcome;
  const age = now.getTime() - purchase.created_at.getTime();
  if (age < options.creditConfirmWindowSeconds * 1000) return outcome;
  const minutes = Math.round(options.creditConfirmWindowSeconds / 60);
  return {
    status: 'failed',
    reason: `the provider did not confirm receiving the airtime within ${minutes} minutes`,
  };
}

async function requery(deps: DispatchDeps, purchase: VtuTransaction): Promise<RequeryOutcome> {
  try {
    return await providerOf(deps, purchase.provider).requery({
      reference: purchase.reference,
      service: purchase.service as VtuService,
      providerReference: purchase.provider_reference,
      ...(purchase.sent_at !== null ? { sentAt: purchase.sent_at } : {}),
    });
  } catch (error) {
    deps.logger.warn({ err: error, reference: purchase.reference }, 'purchase requery failed');
    return { status: 'unknown', reason: `requery failed: ${(error as Error).message}` };
  }
}

/** Alerts operations, once per purchase, that it is still unresolved; it stays processing. */
async function alertStuck(deps: SettlementDeps, id: string, minutes: number): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const purchase = await lockPurchase(trx, id);
    if (purchase.status !== 'processing' || purchase.stuck_alerted_at !== null) return;
    const now = deps.clock.now();
    await trx.updateTable('vtu_transactions').set({ stuck_alerted_at: now }).where('id', '=', id).execute();
    await deps.raiseAlert(
      trx,
      {
        kind: 'vtu_purchase_stuck',
        message: `purchase ${purchase.reference} (${purchase.service}, ${purchase.provider}) is unresolved after ${minutes} minutes; not refunded, still requeried`,
        details: {
          reference: purchase.reference,
          purchaseId: purchase.id,
          userId: purchase.user_id,
          provider: purchase.provider,
          amountKobo: purchase.amount.toString(),
          requeryAttempts: purchase.requery_attempts,
        },
      },
      now,
      deps.jobs,
    );
  });
}
