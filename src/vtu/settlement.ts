import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB, VtuTransactionsTable } from '../db/schema.ts';
import { publishEvent } from '../events/domain-events.ts';
import { raiseAlert } from '../funding/alerts.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { providerFloatAccount, systemAccounts, userAccount } from '../ledger/accounts.ts';
import { post } from '../ledger/postings.ts';
import type { PurchaseOutcome, RequeryOutcome } from '../providers/vtu/vtu-provider.ts';

// What a provider's answer does to a purchase (SPEC.md "States and transitions", DESIGN.md "Money"):
//   success          vtu_in_flight → the provider's float (wholesale) and revenue (markup); delivery kept
//   failed           vtu_in_flight → the wallet, exactly what was charged: the only refund there is
//   pending, unknown stays processing; requeried later on a backoff schedule, never refunded
// Each runs under the purchase's row lock and only while it is processing, so two answers (the
// dispatch racing a requery, a retried job) settle it once.

export type VtuTransaction = Selectable<VtuTransactionsTable>;

export type SettlementDeps = { db: Kysely<DB>; clock: Clock; jobs: JobQueue };

/** Ledger references of a purchase's three possible movements. */
export const purchasePostings = {
  debit: (reference: string) => `vtu:${reference}:debit`,
  settle: (reference: string) => `vtu:${reference}:settle`,
  refund: (reference: string) => `vtu:${reference}:refund`,
};

/** Seconds before each requery of a purchase still pending or unknown; the last repeats. */
export const requeryDelaysSeconds = [15, 30, 60, 120, 300, 600, 1800, 3600] as const;

export function requeryDelaySeconds(attempt: number): number {
  return requeryDelaysSeconds[Math.min(attempt, requeryDelaysSeconds.length - 1)]!;
}

/** The purchase row, locked until the transaction ends, for settling, failing or alerting it. */
export const lockPurchase = (trx: Transaction<DB>, id: string): Promise<VtuTransaction> =>
  trx.selectFrom('vtu_transactions').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();

export type SettleResult = 'success' | 'failed' | 'processing' | 'already_settled';

/** Applies one answer about a purchase, in a transaction of its own. */
export async function settlePurchase(
  deps: SettlementDeps,
  id: string,
  outcome: PurchaseOutcome | RequeryOutcome,
): Promise<SettleResult> {
  return deps.db.transaction().execute(async (trx) => {
    const purchase = await lockPurchase(trx, id);
    if (purchase.status !== 'processing') return 'already_settled';
    const now = deps.clock.now();
    switch (outcome.status) {
      case 'success':
        await succeed(deps, trx, purchase, outcome, now);
        return 'success';
      case 'failed':
        await fail(deps, trx, purchase, outcome.reason, now);
        return 'failed';
      case 'pending':
      case 'unknown':
      case 'not_found': {
        const attempts = purchase.requery_attempts;
        await trx
          .updateTable('vtu_transactions')
          .set({
            provider_reference:
              outcome.status === 'pending'
                ? (outcome.providerReference ?? purchase.provider_reference)
                : purchase.provider_reference,
            next_requery_at: new Date(now.getTime() + requeryDelaySeconds(attempts) * 1000),
            requery_attempts: attempts + 1,
            updated_at: now,
          })
          .where('id', '=', purchase.id)
          .execute();
        return 'processing';
      }
      default: {
        const unreachable: never = outcome;
        throw new Error(`unknown purchase outcome ${JSON.stringify(unreachable)}`);
      }
    }
  });
}

async function succeed(
  deps: SettlementDeps,
  trx: Transaction<DB>,
  purchase: VtuTransaction,
  delivery: Extract<PurchaseOutcome, { status: 'success' }>,
  now: Date,
): Promise<void> {
  const float = providerFloatAccount(purchase.provider);
  await trx
    .updateTable('vtu_transactions')
    .set({
      status: 'success',
      provider_reference: delivery.providerReference ?? purchase.provider_reference,
      token: delivery.token ?? null,
      units: delivery.units ?? null,
      pins: delivery.pins === undefined ? null : JSON.stringify(delivery.pins),
      next_requery_at: null,
      updated_at: now,
      completed_at: now,
    })
    .where('id', '=', purchase.id)
    .execute();
  await publishEvent(deps.jobs, trx, {
    type: 'vtu.purchase_succeeded',
    userId: purchase.user_id,
    transactionId: purchase.id,
    reference: purchase.reference,
    service: purchase.service,
    amountKobo: purchase.amount.toString(),
    occurredAt: now.toISOString(),
  });
  const entries = [
    { account: systemAccounts.vtuInFlight, amount: -purchase.amount },
    { account: float, amount: purchase.wholesale },
  ];
  if (purchase.markup > 0n) entries.push({ account: systemAccounts.revenueMarkup, amount: purchase.markup });
  // The posting last, for the system accounts' row locks are held from it to the commit.
  await post(
    trx,
    {
      reference: purchasePostings.settle(purchase.reference),
      description: `${purchase.description}: delivered`,
      entries,
      metadata: { purchaseId: purchase.id, provider: purchase.provider },
    },
    now,
  );
}

/** Refunds exactly what was charged and closes the purchase as failed (a definite failure only). */
export async function fail(
  deps: SettlementDeps,
  trx: Transaction<DB>,
  purchase: VtuTransaction,
  reason: string,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('vtu_transactions')
    .set({
      status: 'failed',
      failure_reason: reason,
      next_requery_at: null,
      updated_at: now,
      completed_at: now,
    })
    .where('id', '=', purchase.id)
    .execute();
  await publishEvent(deps.jobs, trx, {
    type: 'vtu.purchase_failed',
    userId: purchase.user_id,
    transactionId: purchase.id,
    reference: purchase.reference,
    service: purchase.service,
    amountKobo: purchase.amount.toString(),
    reason,
    occurredAt: now.toISOString(),
  });
  // The refund last, for the in-flight account's row lock is held from it to the commit.
  await post(
    trx,
    {
      reference: purchasePostings.refund(purchase.reference),
      description: `${purchase.description}: refunded`,
      entries: [
        { account: systemAccounts.vtuInFlight, amount: -purchase.amount },
        { account: userAccount('wallet', purchase.user_id), amount: purchase.amount },
      ],
      metadata: { purchaseId: purchase.id, provider: purchase.provider },
    },
    now,
  );
}

/** Alerts operations, once per purchase, that it is still unresolved; it stays processing. */
export async function alertStuck(deps: SettlementDeps, id: string, minutes: number): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    const purchase = await lockPurchase(trx, id);
    if (purchase.status !== 'processing' || purchase.stuck_alerted_at !== null) return;
    const now = deps.clock.now();
    await trx.updateTable('vtu_transactions').set({ stuck_alerted_at: now }).where('id', '=', id).execute();
    await raiseAlert(
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
