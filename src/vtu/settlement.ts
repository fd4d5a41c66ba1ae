import type { Kysely, Transaction } from 'kysely';
import type { AlertsModule } from '../alerts/module.ts';
import type { Clock } from '../clock.ts';
import { type BatcherOptions, type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { type DomainEvent, publishEvents } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { providerFloatAccount, systemAccounts, userAccount } from '../ledger/accounts.ts';
import { type PostingRequest, postBatch } from '../ledger/postings.ts';
import type { LimitsApi } from '../limits/module.ts';
import { formatNaira, koboToNaira } from '../money.ts';
import type { Delivery, PurchaseOutcome, RequeryOutcome } from '../providers/vtu/vtu-provider.ts';
import { releaseFloat } from './float-reservations.ts';
import type { PurchaseMetrics } from './purchase-metrics.ts';
import { purchasePostings, type VtuTransaction } from './purchases.ts';

// What a provider's answer does to a purchase (SPEC.md "States and transitions", DESIGN.md "Money"):
//   success          vtu_in_flight → the provider's float (wholesale) and revenue (markup); delivery kept
//     in part        (a social order the panel filled partly: `remains` of its quantity undelivered)
//                    the undelivered share of the charge back to the wallet, the rest as above
//   failed           vtu_in_flight → the wallet, exactly what was charged: the only refund there is
//   pending, unknown stays processing; requeried later on a backoff schedule, never refunded
// A credit (airtime-to-cash: nothing was debited) moves money only on success: airtime_cash_payouts
// → the wallet, the payout; failed moves nothing. The payout follows the airtime the provider
// confirms, never more than the amount declared: the rate × min(confirmed, declared), rounded down to
// the kobo, and the record's amount becomes it. A confirmation without an amount pays nothing and is
// requeried (and, after the window, alerted as stuck); one above the declared amount raises an alert.
// Each runs under the purchase's row lock and only while it is processing, so two answers (the
// dispatch racing a requery, a retried job) settle it once.
// A success that should carry a token or pins (a prepaid meter, exam pins) and came without them is
// settled all the same (the provider delivered and was paid), and marked delivery_awaited_at: the
// requery runner asks again on the same backoff until they come (late-delivery.ts), moving no money.

export type SettlementDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  /** Raises an operations alert in the caller's transaction (alerts' api). */
  raiseAlert: AlertsModule['api']['raiseAlert'];
  /** Told of each purchase accepted or settled, once its transaction committed; absent: nowhere (a stage's own test). */
  metrics?: PurchaseMetrics;
  /** A refund gives its room back to the buyer's daily debit limit (limits' api), under the refund's locks. */
  giveBackRoom: LimitsApi['giveBackRoom'];
  /** The rows each hot system account is kept in (LEDGER_SHARDS): vtu_in_flight, the floats, revenue. */
  ledgerShards: number;
};

/** Answers settled per transaction at most: the purchases' row locks, and vtu_in_flight's, are held briefly. */
const settleBatchMax = 100;

/** The batches of settlePurchases (batches.ts): the answers that arrive while a settlement runs share the next. */
export const settleBatchOptions: BatcherOptions<PurchaseAnswer, SettleResult> = { batchMax: settleBatchMax };

/** Seconds before each requery of a purchase still pending or unknown; the last repeats. */
export const requeryDelaysSeconds = [15, 30, 60, 120, 300, 600, 1800, 3600] as const;

export function requeryDelaySeconds(attempt: number): number {
  return requeryDelaysSeconds[Math.min(attempt, requeryDelaysSeconds.length - 1)]!;
}

/** The purchase row, locked until the transaction ends, for settling, failing or alerting it. */
export const lockPurchase = (trx: Transaction<DB>, id: string): Promise<VtuTransaction> =>
  trx.selectFrom('vtu_transactions').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();

export type SettleResult = 'success' | 'failed' | 'processing' | 'already_settled';

/** One answer about a purchase: the provider's, or a decision of ours (a top-up that failed). */
export type PurchaseAnswer = { id: string; outcome: PurchaseOutcome | RequeryOutcome };

/**
 * The settle stage: applies answers about purchases, many in one transaction (a batch of
 * settlePurchases's batches, the group commit of batches.ts): the purchases are locked in id
 * order, their new states written by one UPDATE, their events enqueued by one INSERT and their
 * settlements and refunds posted together.
 */
export async function settlePurchases(
  deps: SettlementDeps,
  answers: PurchaseAnswer[],
): Promise<BatchResults<SettleResult>> {
  const { results, locked } = await deps.db.transaction().execute(async (trx) => {
    const { rows } = await statement<VtuTransaction>('vtu.settlement-purchases')`
      select * from vtu_transactions
      where id = any(${[...new Set(answers.map((a) => a.id))]}::uuid[])
      order by id for update`.execute(trx);
    const locked = new Map(rows.map((row) => [row.id, row]));
    return { results: await settleLocked(deps, trx, answers, locked), locked };
  });
  countSettled(deps.metrics, answers, locked, results);
  return results;
}

/**
 * Reports the purchases that settleLocked's results settled (success or failed), once the
 * transaction that settled them has committed.
 */
export function countSettled(
  metrics: PurchaseMetrics | undefined,
  answers: PurchaseAnswer[],
  locked: ReadonlyMap<string, VtuTransaction>,
  results: BatchResults<SettleResult>,
): void {
  if (metrics === undefined) return;
  results.forEach((result, i) => {
    const purchase = locked.get(answers[i]!.id);
    if (purchase === undefined || result.status !== 'fulfilled') return;
    if (result.value === 'success' || result.value === 'failed') {
      metrics.purchaseCounted(purchase, result.value);
    }
  });
}

/**
 * Settles purchases locked by the caller's transaction (`locked`, by id). The answers apply in order,
 * each only to a purchase still processing: once one settles a purchase, later ones find it settled.
 */
export async function settleLocked(
  deps: SettlementDeps,
  trx: Transaction<DB>,
  answers: PurchaseAnswer[],
  locked: Map<string, VtuTransaction>,
): Promise<BatchResults<SettleResult>> {
  const now = deps.clock.now();
  const changed = new Map<string, VtuTransaction>();
  const events: DomainEvent[] = [];
  const postings: PostingRequest[] = [];
  const overConfirmed: Array<{ sale: VtuTransaction; receivedKobo: bigint }> = [];
  const refunds: Array<{ userId: string; amountKobo: bigint; acceptedAt: Date }> = [];
  const refunded = (purchase: VtuTransaction, amountKobo: bigint) =>
    refunds.push({ userId: purchase.user_id, amountKobo, acceptedAt: new Date(purchase.created_at) });
  const results = answers.map(({ id, outcome }): PromiseSettledResult<SettleResult> => {
    const current = changed.get(id) ?? locked.get(id);
    if (current === undefined) return rejected(new Error(`no purchase ${id}`));
    if (current.status !== 'processing') return fulfilled('already_settled');
    const next = nextState(current, outcome, now);
    changed.set(id, next);
    if (next.status === 'processing') return fulfilled('processing');
    const event = {
      userId: next.user_id,
      transactionId: next.id,
      reference: next.reference,
      service: next.service,
      amountKobo: next.amount.toString(),
      occurredAt: now.toISOString(),
    };
    if (next.status === 'success') {
      events.push({
        type: 'vtu.purchase_succeeded',
        ...event,
        ...(next.refunded > 0n ? { refundedKobo: next.refunded.toString() } : {}),
        ...deliveryOf(next),
        ...(next.delivery_awaited_at === null ? {} : { deliveryAwaited: true }),
      });
      postings.push(deliveredPosting(next));
      if (next.direction === 'debit' && next.refunded > 0n) refunded(next, next.refunded);
      const received = outcome.status === 'success' ? outcome.receivedKobo : undefined;
      if (next.direction === 'credit' && received !== undefined && received > next.wholesale) {
        overConfirmed.push({ sale: next, receivedKobo: received });
      }
    } else {
      events.push({ type: 'vtu.purchase_failed', ...event, reason: next.failure_reason ?? '' });
      if (next.direction === 'debit') {
        postings.push(refundPosting(next));
        refunded(next, next.amount);
      }
    }
    return fulfilled(next.status);
  });
  if (changed.size > 0) await writeStates(trx, [...changed.values()]);
  await publishEvents(deps.jobs, trx, events);
  for (const { sale, receivedKobo } of overConfirmed) {
    await alertOverConfirmed(deps, trx, sale, receivedKobo, now);
  }
  // The postings last, for the system accounts' row locks are held from them to the commit. Neither a
  // settlement nor a refund can be refused (they draw on vtu_in_flight, a system account): a refusal
  // is a bug, and the whole batch rolls back. Each purchase was locked while processing, so neither
  // its settlement nor its refund is posted yet.
  for (const posted of await postBatch(trx, postings, now, {
    referencesUnposted: true,
    shards: deps.ledgerShards,
  })) {
    if (posted.status === 'rejected') throw posted.reason;
  }
  // After the refunds' postings, which locked the buyers' wallets: the limits' rows come after them.
  await deps.giveBackRoom(trx, refunds, now);
  // Last, the providers' reservation rows (held briefly, and after every other lock): what the
  // purchases settled here held of their floats since their claim is theirs no more.
  await releaseFloat(trx, floatHeldBy(changed.values()), now);
  return results;
}

/** What the purchases that left processing held of each provider's float (0 for one never sent). */
function floatHeldBy(purchases: Iterable<VtuTransaction>): Map<string, bigint> {
  const held = new Map<string, bigint>();
  for (const p of purchases) {
    if (p.status === 'processing' || p.float_reserved_kobo === 0n) continue;
    held.set(p.provider, (held.get(p.provider) ?? 0n) + p.float_reserved_kobo);
  }
  return held;
}

/** The purchase after the answer: settled (success, failed) or still processing, requeried later. */
function nextState(
  purchase: VtuTransaction,
  outcome: PurchaseOutcome | RequeryOutcome,
  now: Date,
): VtuTransaction {
  switch (outcome.status) {
    case 'success': {
      if (purchase.direction === 'credit') {
        const paid = creditPaid(purchase, outcome.receivedKobo);
        // Confirmed without an amount we can read: nothing is guessed, the requery asks again.
        if (paid === null) {
          return requeryLater(purchase, outcome.providerReference ?? purchase.provider_reference, now);
        }
        // So little arrived that its payout rounds down to nothing: a sale that pays nothing has
        // failed (nothing moves), and says what arrived.
        if (paid.payoutKobo === 0n) {
          return {
            ...purchase,
            status: 'failed',
            provider_reference: outcome.providerReference ?? purchase.provider_reference,
            units: paid.units,
            failure_reason: `the airtime that arrived pays nothing: ${paid.units}`,
            next_requery_at: null,
            updated_at: now,
            completed_at: now,
          };
        }
        return {
          ...purchase,
          status: 'success',
          provider_reference: outcome.providerReference ?? purchase.provider_reference,
          amount: paid.payoutKobo,
          units: paid.units,
          next_requery_at: null,
          updated_at: now,
          completed_at: now,
        };
      }
      const part = deliveredPart(purchase, outcome.remains);
      // A part delivery we cannot make sense of is left for the requery and, after it, for a person.
      if (part === null) return requeryLater(purchase, purchase.provider_reference, now);
      const awaited = awaitsDelivery(purchase, outcome);
      return {
        ...purchase,
        status: 'success',
        provider_reference: outcome.providerReference ?? purchase.provider_reference,
        token: outcome.token ?? null,
        units: part.units ?? outcome.units ?? null,
        refunded: part.refundedKobo,
        pins: outcome.pins === undefined ? null : JSON.stringify(outcome.pins),
        // The provider's word at delivery wins; else the name a look-up gave when it was accepted.
        customer_name: outcome.customerName ?? purchase.customer_name,
        // The token or pins still to come are asked for on the backoff schedule, from its start.
        delivery_awaited_at: awaited ? now : null,
        next_requery_at: awaited ? new Date(now.getTime() + requeryDelaySeconds(0) * 1000) : null,
        requery_attempts: awaited ? 1 : purchase.requery_attempts,
        updated_at: now,
        completed_at: now,
      };
    }
    case 'failed':
      return {
        ...purchase,
        status: 'failed',
        failure_reason: outcome.reason,
        next_requery_at: null,
        updated_at: now,
        completed_at: now,
      };
    case 'pending':
    case 'unknown':
    case 'not_found':
      return requeryLater(
        purchase,
        outcome.status === 'pending'
          ? (outcome.providerReference ?? purchase.provider_reference)
          : purchase.provider_reference,
        now,
      );
    default: {
      const unreachable: never = outcome;
      throw new Error(`unknown purchase outcome ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * True when a delivered purchase lacks what the buyer bought it for: a prepaid meter's token, or an
 * exam's pins. A postpaid meter has no token (the bill is credited), and no other service has either.
 */
export function awaitsDelivery(
  purchase: Pick<VtuTransaction, 'service' | 'request' | 'direction'>,
  delivery: Pick<Delivery, 'token' | 'pins'>,
): boolean {
  if (purchase.direction !== 'debit') return false;
  switch (purchase.service) {
    case 'electricity': {
      const request = (
        typeof purchase.request === 'string' ? JSON.parse(purchase.request) : purchase.request
      ) as { meterType?: unknown };
      return request.meterType === 'prepaid' && (delivery.token === undefined || delivery.token === '');
    }
    case 'education':
      return delivery.pins === undefined || delivery.pins.length === 0;
    default:
      return false;
  }
}

/** What a purchase delivered for its user to keep (its token, units, pins), as its events carry it. */
export function deliveryOf(purchase: Pick<VtuTransaction, 'token' | 'units' | 'pins'>): {
  token?: string;
  units?: string;
  pins?: string[];
} {
  const pins =
    typeof purchase.pins === 'string'
      ? (JSON.parse(purchase.pins) as string[])
      : (purchase.pins as string[] | null);
  return {
    ...(purchase.token === null ? {} : { token: purchase.token }),
    ...(purchase.units === null ? {} : { units: purchase.units }),
    ...(pins === null || pins.length === 0 ? {} : { pins }),
  };
}

/** Still processing: requeried after the next delay of the backoff schedule. */
function requeryLater(purchase: VtuTransaction, providerReference: string | null, now: Date): VtuTransaction {
  return {
    ...purchase,
    provider_reference: providerReference,
    next_requery_at: new Date(now.getTime() + requeryDelaySeconds(purchase.requery_attempts) * 1000),
    requery_attempts: purchase.requery_attempts + 1,
    updated_at: now,
  };
}

/**
 * What of a success was delivered: all of it (no `remains`), or a part of an order's quantity, whose
 * undelivered share of the charge is refunded, rounded down to the kobo (so the buyer pays for what
 * was delivered, rounded up, as the price itself was). Null for a part that makes no sense (more
 * undelivered than ordered, or a part of a purchase that has no quantity).
 */
export function deliveredPart(
  purchase: Pick<VtuTransaction, 'amount' | 'request' | 'direction'>,
  remains: number | undefined,
): { refundedKobo: bigint; units?: string } | null {
  if (remains === undefined || remains === 0) return { refundedKobo: 0n };
  const request = (
    typeof purchase.request === 'string' ? JSON.parse(purchase.request) : purchase.request
  ) as { quantity?: unknown };
  const quantity = request.quantity;
  if (
    purchase.direction !== 'debit' ||
    typeof quantity !== 'number' ||
    !Number.isSafeInteger(remains) ||
    remains < 0 ||
    remains > quantity
  )
    return null;
  return {
    refundedKobo: (purchase.amount * BigInt(remains)) / BigInt(quantity),
    units: `${quantity - remains} of ${quantity} delivered`,
  };
}

/**
 * What a sale pays on the airtime the provider confirmed arrived (`receivedKobo`): the rate it was
 * accepted at times the confirmed amount, never more than the declared one (`wholesale`), rounded
 * down to the kobo; and the received airtime in words for the record. Null without a confirmed amount.
 * A sale accepted before the rate was kept with its request pays its declared payout's share.
 */
export function creditPaid(
  purchase: Pick<VtuTransaction, 'amount' | 'wholesale' | 'request'>,
  receivedKobo: bigint | undefined,
): { payoutKobo: bigint; units: string } | null {
  if (receivedKobo === undefined || receivedKobo <= 0n) return null;
  const declared = purchase.wholesale;
  const counted = receivedKobo < declared ? receivedKobo : declared;
  const request = (
    typeof purchase.request === 'string' ? JSON.parse(purchase.request) : purchase.request
  ) as { payoutRateBp?: unknown };
  const rateBp = request.payoutRateBp;
  const payoutKobo =
    typeof rateBp === 'number' && Number.isSafeInteger(rateBp) && rateBp > 0
      ? (counted * BigInt(rateBp)) / 10_000n
      : (purchase.amount * counted) / declared;
  const units =
    receivedKobo === declared
      ? `${formatNaira(declared)} airtime received`
      : receivedKobo < declared
        ? `${formatNaira(receivedKobo)} of ${formatNaira(declared)} airtime received`
        : `${formatNaira(receivedKobo)} airtime received, paid on the ${formatNaira(declared)} declared`;
  return { payoutKobo, units };
}

/**
 * The provider confirmed more airtime than the user declared: paid on the declared amount, and a
 * person looks (the provider's record and ours disagree). Once per sale.
 */
async function alertOverConfirmed(
  deps: SettlementDeps,
  trx: Transaction<DB>,
  sale: VtuTransaction,
  receivedKobo: bigint,
  now: Date,
): Promise<void> {
  await deps.raiseAlert(
    trx,
    {
      kind: 'airtime_cash_over_confirmed',
      message: `airtime-to-cash sale ${sale.reference} (${sale.provider}): the provider confirmed ₦${koboToNaira(receivedKobo)} of airtime for the ₦${koboToNaira(sale.wholesale)} declared; paid on the declared amount`,
      details: {
        reference: sale.reference,
        purchaseId: sale.id,
        userId: sale.user_id,
        provider: sale.provider,
        declaredKobo: sale.wholesale.toString(),
        confirmedKobo: receivedKobo.toString(),
        payoutKobo: sale.amount.toString(),
      },
      dedupeKey: `airtime_cash_over_confirmed:${sale.reference}`,
    },
    now,
    deps.jobs,
  );
}

/** A jsonb column as its text: pg would write a JavaScript array as a PostgreSQL array. */
const jsonText = (value: unknown): string | null =>
  value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * Writes the settled columns of many locked purchases (the amount too: a sale's payout follows the
 * airtime confirmed) with one statement, one text whatever their
 * number; planned each run, not prepared, for vtu_transactions grows with every purchase (prepared.ts).
 */
async function writeStates(trx: Transaction<DB>, purchases: VtuTransaction[]): Promise<void> {
  const column = <T>(of: (p: VtuTransaction) => T) => purchases.map(of);
  await statement('vtu.settlement-states')`
    update vtu_transactions as t set
      status = v.status, provider_reference = v.provider_reference, token = v.token, units = v.units,
      pins = v.pins::jsonb, amount = v.amount, refunded = v.refunded, customer_name = v.customer_name,
      failure_reason = v.failure_reason, next_requery_at = v.next_requery_at,
      requery_attempts = v.requery_attempts, delivery_awaited_at = v.delivery_awaited_at,
      updated_at = v.updated_at, completed_at = v.completed_at
    from unnest(${column((p) => p.id)}::uuid[], ${column((p) => p.status)}::text[],
      ${column((p) => p.provider_reference)}::text[], ${column((p) => p.token)}::text[],
      ${column((p) => p.units)}::text[], ${column((p) => jsonText(p.pins))}::text[],
      ${column((p) => p.amount)}::bigint[], ${column((p) => p.refunded)}::bigint[],
      ${column((p) => p.customer_name)}::text[], ${column((p) => p.failure_reason)}::text[],
      ${column((p) => p.next_requery_at)}::timestamptz[], ${column((p) => p.requery_attempts)}::integer[],
      ${column((p) => p.delivery_awaited_at)}::timestamptz[],
      ${column((p) => p.updated_at)}::timestamptz[], ${column((p) => p.completed_at)}::timestamptz[])
      as v(id, status, provider_reference, token, units, pins, amount, refunded, customer_name,
        failure_reason, next_requery_at, requery_attempts, delivery_awaited_at, updated_at, completed_at)
    where t.id = v.id`.execute(trx);
}

/**
 * Delivered: vtu_in_flight → the provider's float (wholesale) and revenue (markup). Delivered in
 * part: the refunded share goes back to the wallet, and the provider's price and our markup keep
 * their shares of what was kept (the price's rounded up: never less than the panel takes). A credit
 * confirmed: the payout from airtime_cash_payouts to the wallet.
 */
function deliveredPosting(purchase: VtuTransaction): PostingRequest {
  if (purchase.direction === 'credit') {
    return {
      reference: purchasePostings.settle(purchase.reference),
      description: `${purchase.description}: airtime received`,
      entries: [
        { account: systemAccounts.airtimeCashPayouts, amount: -purchase.amount },
        { account: userAccount('wallet', purchase.user_id), amount: purchase.amount },
      ],
      metadata: { purchaseId: purchase.id, provider: purchase.provider },
    };
  }
  const kept = purchase.amount - purchase.refunded;
  const wholesale =
    purchase.refunded === 0n ? purchase.wholesale : ceilDiv(purchase.wholesale * kept, purchase.amount);
  const markup = kept - wholesale;
  const entries = [
    { account: systemAccounts.vtuInFlight, amount: -purchase.amount },
    { account: providerFloatAccount(purchase.provider), amount: wholesale },
  ];
  if (markup > 0n) entries.push({ account: systemAccounts.revenueMarkup, amount: markup });
  if (purchase.refunded > 0n) {
    entries.push({ account: userAccount('wallet', purchase.user_id), amount: purchase.refunded });
  }
  return {
    reference: purchasePostings.settle(purchase.reference),
    // A part delivery's refund is in this posting: the wallet history shows it by this line.
    description:
      purchase.refunded > 0n
        ? `${purchase.description}: part delivered, ${formatNaira(purchase.refunded)} refunded`
        : `${purchase.description}: delivered`,
    entries,
    metadata: { purchaseId: purchase.id, provider: purchase.provider },
  };
}

const ceilDiv = (a: bigint, b: bigint): bigint => (a + b - 1n) / b;

/** Failed: exactly what was charged goes back to the wallet (the only refund there is). */
function refundPosting(purchase: VtuTransaction): PostingRequest {
  return {
    reference: purchasePostings.refund(purchase.reference),
    description: `${purchase.description}: refunded`,
    entries: [
      { account: systemAccounts.vtuInFlight, amount: -purchase.amount },
      { account: userAccount('wallet', purchase.user_id), amount: purchase.amount },
    ],
    metadata: { purchaseId: purchase.id, provider: purchase.provider },
  };
}
