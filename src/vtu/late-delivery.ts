import { publishEvent } from '../events/domain-events.ts';
import type { RequeryOutcome, VtuService } from '../providers/vtu/vtu-provider.ts';
import { type DispatchDeps, providerOf } from './dispatch.ts';
import type { VtuTransaction } from './purchases.ts';
import type { RequeryOptions } from './requery.ts';
import { awaitsDelivery, deliveryOf, lockPurchase, requeryDelaySeconds } from './settlement.ts';

// A token or pins that did not come with their purchase's success (API.md section 16, "Tokens and
// pins"). The purchase was settled when it succeeded (settlement.ts marked it delivery_awaited_at);
// what is left is to ask the provider again, under the same reference and on the same backoff as a
// purchase still processing, until they come, then keep them once and tell the buyer (the
// vtu.delivery_arrived event: inbox, push and email, as every purchase message). No money moves
// here, whatever the provider answers: a later reversal of a delivered order is for a person (the
// alert below, and reportProblem), never a refund decided by a requery.
//
// The state is the purchase's row (delivery_awaited_at, next_requery_at), so a restart loses
// nothing: the requery job, every minute and on the sandbox clock, picks up what is due. Two runs
// asking at once (two workers, adminReconcile beside the job) both may ask; the row lock lets one
// keep the answer, and the other finds it kept.

export type DeliveryCounts = { checked: number; arrived: number; stillAwaited: number; alerted: number };

export type DeliveryResult = 'arrived' | 'awaited' | 'already_arrived';

/** Asks again about every purchase whose token or pins are awaited and due, oldest due first. */
export async function requeryAwaitedDeliveries(
  deps: DispatchDeps,
  options: RequeryOptions,
): Promise<DeliveryCounts> {
  const now = deps.clock.now();
  let query = deps.db.selectFrom('vtu_transactions').selectAll().where('delivery_awaited_at', 'is not', null);
  if (options.includeNotDue !== true) query = query.where('next_requery_at', '<=', now);
  const due = await query
    .orderBy('next_requery_at', 'asc')
    .orderBy('id', 'asc')
    .limit(options.batchMax)
    .execute();
  const counts: DeliveryCounts = { checked: 0, arrived: 0, stillAwaited: 0, alerted: 0 };
  for (const purchase of due) {
    counts.checked += 1;
    const outcome = await requery(deps, purchase);
    const result = await keepDelivery(deps, purchase.id, outcome, options);
    if (result.result === 'arrived') counts.arrived += 1;
    else if (result.result === 'awaited') counts.stillAwaited += 1;
    if (result.alerted) counts.alerted += 1;
  }
  return counts;
}

/**
 * Applies a requery's answer to a purchase whose token or pins are awaited, under its row lock: a
 * success that carries them stores them and publishes vtu.delivery_arrived, in one transaction,
 * once; any other answer asks again after the next delay, and raises one alert once they have been
 * awaited stuckAlertAfterSeconds.
 */
export async function keepDelivery(
  deps: DispatchDeps,
  id: string,
  outcome: RequeryOutcome,
  options: Pick<RequeryOptions, 'stuckAlertAfterSeconds'>,
): Promise<{ result: DeliveryResult; alerted: boolean }> {
  return deps.db.transaction().execute(async (trx) => {
    const purchase = await lockPurchase(trx, id);
    const awaitedSince = purchase.delivery_awaited_at;
    if (awaitedSince === null) return { result: 'already_arrived', alerted: false };
    const now = deps.clock.now();
    if (outcome.status === 'success' && !awaitsDelivery(purchase, outcome)) {
      const arrived = {
        token: outcome.token ?? purchase.token,
        units: outcome.units ?? purchase.units,
        // jsonb written as its text: pg would write a JavaScript array as a PostgreSQL array.
        pins: jsonText(outcome.pins ?? purchase.pins),
      };
      await trx
        .updateTable('vtu_transactions')
        .set({ ...arrived, delivery_awaited_at: null, next_requery_at: null, updated_at: now })
        .where('id', '=', id)
        .execute();
      await publishEvent(deps.jobs, trx, {
        type: 'vtu.delivery_arrived',
        userId: purchase.user_id,
        transactionId: purchase.id,
        reference: purchase.reference,
        service: purchase.service,
        ...deliveryOf(arrived),
        occurredAt: now.toISOString(),
      });
      return { result: 'arrived', alerted: false };
    }
    await trx
      .updateTable('vtu_transactions')
      .set({
        next_requery_at: new Date(now.getTime() + requeryDelaySeconds(purchase.requery_attempts) * 1000),
        requery_attempts: purchase.requery_attempts + 1,
        updated_at: now,
      })
      .where('id', '=', id)
      .execute();
    const awaitedFor = now.getTime() - awaitedSince.getTime();
    if (awaitedFor < options.stuckAlertAfterSeconds * 1000) return { result: 'awaited', alerted: false };
    // One alert per purchase (its dedupe key), however many requeries find the token still missing.
    const alerted = await deps.raiseAlert(
      trx,
      {
        kind: 'vtu_delivery_awaited',
        message: `purchase ${purchase.reference} (${purchase.service}, ${purchase.provider}) succeeded ${Math.floor(awaitedFor / 60_000)} minutes ago without its ${purchase.service === 'education' ? 'pins' : 'token'}; still requeried (last answer: ${describe(outcome)})`,
        details: {
          reference: purchase.reference,
          purchaseId: purchase.id,
          userId: purchase.user_id,
          provider: purchase.provider,
          requeryAttempts: purchase.requery_attempts,
        },
        dedupeKey: `vtu_delivery_awaited:${purchase.reference}`,
      },
      now,
      deps.jobs,
    );
    return { result: 'awaited', alerted };
  });
}

const jsonText = (value: unknown): string | null =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : JSON.stringify(value);

function describe(outcome: RequeryOutcome): string {
  switch (outcome.status) {
    case 'success':
      return 'delivered, still without them';
    case 'failed':
    case 'unknown':
      return `${outcome.status}: ${outcome.reason}`;
    case 'pending':
    case 'not_found':
      return outcome.status;
  }
}

async function requery(deps: DispatchDeps, purchase: VtuTransaction): Promise<RequeryOutcome> {
  try {
    return await providerOf(deps, purchase.provider).requery({
      reference: purchase.reference,
      service: purchase.service as VtuService,
      providerReference: purchase.provider_reference,
    });
  } catch (error) {
    deps.logger.warn({ err: error, reference: purchase.reference }, 'delivery requery failed');
    return { status: 'unknown', reason: `requery failed: ${(error as Error).message}` };
  }
}
