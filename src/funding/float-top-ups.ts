import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { DB, FloatTopUpsTable } from '../db/schema.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import { providerFloatAccount, systemAccounts } from '../ledger/accounts.ts';
import { post } from '../ledger/postings.ts';
import { PaymentProviderError, type Transfer } from '../providers/payments/payment-provider.ts';
import type { FundingDeps } from './service.ts';

// Float top-ups (SPEC.md "States and transitions", "Events"): the collections pool at the payment
// provider pays a VTU provider's bank account, which tops up our float there. The payment provider
// makes each one as one of its transfers (Paystack's Transfer API, under the top-up's reference);
// "transfer" stays the provider's word, at its port, and a wallet-to-wallet transfer's in the
// domains (decision 0038). Three parties can tell us how a top-up ended: the provider's answer
// when its transfer is initiated, its signed transfer.* webhooks (in any order, any number of
// times) and reconciliation's verification by reference. All of them go through
// applyFloatTopUpOutcome, one state machine under the row lock:
//
//   pending  → success   the money left the pool: posted pool → provider float; `float_top_up_settled`
//   pending  → failed    nothing moved; ops alert; `float_top_up_failed` (a purchase waiting on it fails)
//   pending  → reversed  settled and reversed before we heard of the settlement: nothing net moved,
//                        nothing posted; ops alert; `float_top_up_failed`
//   success  → reversed  the money came back: posted provider float → pool; ops alert
//   reversed → success   a late success after the reversal: nothing (the reversal is final)
//   anything else        a repeat (nothing) or a contradiction (ops alert, nothing changes)

export type FloatTopUp = Selectable<FloatTopUpsTable>;

export type FundingDestination = {
  /** The VTU provider whose float this tops up (data, bills, social). */
  provider: string;
  /** Its bank account, as the payment provider's transfer recipient (its word) takes it. */
  bankCode: string;
  accountNumber: string;
  accountName: string;
};

/**
 * The ledger reference of a settled top-up, and of its reversal. The `transfer:` prefix is what
 * postings stored before the rename carry (decision 0038): a settlement heard again after the deploy
 * must meet its first posting, which a new prefix would not (it would post the money twice). The
 * functions took the new name; the stored strings never change.
 */
export const floatTopUpPostingReference = (reference: string): string => `transfer:${reference}`;
export const floatTopUpReversalPostingReference = (reference: string): string =>
  `transfer:${reference}:reversed`;

/** A top-up's reference is its Paystack transfer's: 16-50 lower-case letters, digits, '-' and '_'. */
const newFloatTopUpReference = (): string => `fund-${randomBytes(12).toString('hex')}`;

/** How a top-up ended, in our terms: Paystack's abandoned, blocked and rejected are failures. */
export type FloatTopUpEnd = 'success' | 'failed' | 'reversed';

export type FloatTopUpOutcome =
  | 'settled'
  | 'failed'
  | 'reversed'
  /** The same news again, or a late success after a reversal: nothing changed. */
  | 'unchanged'
  /** News that contradicts what we know (failed after success, success after failed): alerted. */
  | 'conflict'
  | 'unknown_reference';

type Deps = Pick<FundingDeps, 'db' | 'clock' | 'jobs' | 'payments' | 'raiseAlert' | 'ledgerShards'>;

/** The status of the top-up's Paystack transfer, mapped to an end when it is one; null while it may still change. */
export function floatTopUpEnd(status: Transfer['status']): FloatTopUpEnd | null {
  switch (status) {
    case 'success':
      return 'success';
    case 'reversed':
      return 'reversed';
    case 'failed':
    case 'abandoned':
    case 'blocked':
    case 'rejected':
      return 'failed';
    case 'pending':
    case 'otp':
    case 'received':
      return null;
    default: {
      const unreachable: never = status;
      throw new Error(`unknown transfer status ${String(unreachable)}`);
    }
  }
}

/**
 * Sends `amountKobo` from the collections pool to a VTU provider's bank account and records it as a
 * float top-up: recordFloatTopUp, then sendFloatTopUp. Returns the top-up as it stands after the
 * provider's answer: success and failed are final; pending is settled later by the webhook
 * or reconciliation.
 */
export async function startFloatTopUp(
  deps: Deps,
  request: { destination: FundingDestination; amountKobo: bigint; reason: string },
): Promise<FloatTopUp> {
  const reference = await recordFloatTopUp(deps.db, deps.clock.now(), request);
  return sendFloatTopUp(deps, reference);
}

/**
 * Writes a pending float top-up (inside the caller's transaction when given one) and returns its
 * reference. The row exists before the provider is asked, so a crash before or during the call
 * leaves a pending row that reconciliation resolves by reference.
 */
export async function recordFloatTopUp(
  db: Kysely<DB> | Transaction<DB>,
  now: Date,
  request: { destination: FundingDestination; amountKobo: bigint; reason: string },
): Promise<string> {
  assert.ok(request.amountKobo > 0n, 'a float top-up moves a positive amount');
  const { destination } = request;
  const reference = newFloatTopUpReference();
  await db
    .insertInto('float_top_ups')
    .values({
      id: newId(),
      reference,
      provider: destination.provider,
      amount: request.amountKobo,
      bank_code: destination.bankCode,
      account_number: destination.accountNumber,
      account_name: destination.accountName,
      reason: request.reason,
      status: 'pending',
      transfer_code: null,
      failure_reason: null,
      created_at: now,
      updated_at: now,
      settled_at: null,
      closed_at: null,
    })
    .execute();
  return reference;
}

/**
 * Asks the payment provider to make a recorded top-up as one of its transfers: the recipient, then
 * the transfer under the top-up's reference. No database transaction is open across the provider calls.
 */
export async function sendFloatTopUp(deps: Deps, reference: string): Promise<FloatTopUp> {
  const recorded = await floatTopUpByReference(deps, reference);
  let recipientCode: string;
  try {
    ({ recipientCode } = await deps.payments.createTransferRecipient({
      name: recorded.account_name,
      accountNumber: recorded.account_number,
      bankCode: recorded.bank_code,
    }));
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    // No transfer was asked for, so none can exist, whatever happened to the recipient.
    await settleFloatTopUp(deps, {
      reference,
      end: 'failed',
      reason: `recipient not created: ${error.message}`,
    });
    return floatTopUpByReference(deps, reference);
  }

  try {
    const transfer = await deps.payments.initiateTransfer({
      reference,
      amountKobo: recorded.amount,
      recipientCode,
      reason: recorded.reason,
    });
    const end = floatTopUpEnd(transfer.status);
    await deps.db
      .updateTable('float_top_ups')
      .set({ transfer_code: transfer.transferCode })
      .where('reference', '=', reference)
      .execute();
    if (end !== null) await settleFloatTopUp(deps, { reference, end, reason: transfer.reason });
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    // A definite refusal: no transfer exists. Otherwise it may: it stays pending until the webhook
    // or reconciliation's verification by reference says how it ended.
    if (error.definite) {
      await settleFloatTopUp(deps, {
        reference,
        end: 'failed',
        reason: `transfer refused: ${error.message}`,
      });
    }
  }
  return floatTopUpByReference(deps, reference);
}

export async function floatTopUpByReference(deps: Pick<Deps, 'db'>, reference: string): Promise<FloatTopUp> {
  return deps.db
    .selectFrom('float_top_ups')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
}

/** The status of a recorded top-up (a purchase waiting for it asks). */
export async function floatTopUpStatus(
  db: Kysely<DB> | Transaction<DB>,
  reference: string,
): Promise<FloatTopUp['status']> {
  const topUp = await db
    .selectFrom('float_top_ups')
    .select(['status'])
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  return topUp.status;
}

/**
 * The reference of the newest top-up of the provider still pending, if any: a purchase short of
 * float attaches to it instead of starting another. The caller serialises the decision (vtu's float
 * takes an advisory lock per provider in `trx`), so no row lock is taken here.
 */
export async function latestPendingFloatTopUpTo(
  db: Kysely<DB> | Transaction<DB>,
  provider: string,
): Promise<string | undefined> {
  const pending = await db
    .selectFrom('float_top_ups')
    .select('reference')
    .where('provider', '=', provider)
    .where('status', '=', 'pending')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return pending?.reference;
}

/** applyFloatTopUpOutcome in a transaction of its own. */
export async function settleFloatTopUp(
  deps: Pick<Deps, 'db' | 'clock' | 'jobs' | 'raiseAlert' | 'ledgerShards'>,
  news: FloatTopUpNews,
): Promise<FloatTopUpOutcome> {
  return deps.db.transaction().execute((trx) => applyFloatTopUpOutcome(deps, trx, news));
}

/** News of how a top-up's transfer ended, from whichever of the three parties told it. */
type FloatTopUpNews = { reference: string; end: FloatTopUpEnd; reason: string | null; amountKobo?: bigint };

type OutcomeDeps = Pick<Deps, 'clock' | 'jobs' | 'raiseAlert' | 'ledgerShards'>;

/**
 * Moves a float top-up on news of how it ended, inside the caller's transaction (the webhook's
 * processing, or settleFloatTopUp). Safe to call any number of times, concurrently, in any order.
 */
export async function applyFloatTopUpOutcome(
  deps: OutcomeDeps,
  trx: Transaction<DB>,
  news: FloatTopUpNews,
): Promise<FloatTopUpOutcome> {
  const topUp = await trx
    .selectFrom('float_top_ups')
    .selectAll()
    .where('reference', '=', news.reference)
    .forUpdate()
    .executeTakeFirst();
  if (topUp === undefined) return 'unknown_reference';
  const now = deps.clock.now();

  if (news.amountKobo !== undefined && news.amountKobo !== topUp.amount) {
    // Signed news about another amount than we sent: nothing is posted on it; a person looks.
    await alertOnNews(
      deps,
      trx,
      { topUp, news, now },
      'transfer_amount_mismatch',
      `float top-up ${topUp.reference} was reported ${news.end} for ${news.amountKobo} kobo, not the ${topUp.amount} kobo sent; left as ${topUp.status}`,
    );
    return 'conflict';
  }

  const from = topUp.status;
  if (from === news.end) return 'unchanged';
  if (from === 'reversed' && news.end === 'success') return 'unchanged';
  if (from === 'failed' || (from === 'success' && news.end === 'failed') || from === 'reversed') {
    await alertOnNews(
      deps,
      trx,
      { topUp, news, now },
      'transfer_conflicting_event',
      `float top-up ${topUp.reference} is ${from} but was reported ${news.end}; nothing changed`,
    );
    return 'conflict';
  }

  if (news.end === 'success') {
    await settlePending(deps, trx, topUp, now);
    return 'settled';
  }
  await closeUnsent(deps, trx, { topUp, from, end: news.end, reason: news.reason ?? null }, now);
  return news.end;
}

/**
 * The alert on news that contradicts what we recorded, with both sides in its details. Its kinds
 * keep the word "transfer": they name the provider's transfer.* news (decision 0038).
 */
async function alertOnNews(
  deps: OutcomeDeps,
  trx: Transaction<DB>,
  seen: { topUp: FloatTopUp; news: FloatTopUpNews; now: Date },
  kind: 'transfer_conflicting_event' | 'transfer_amount_mismatch',
  message: string,
): Promise<void> {
  const { topUp, news, now } = seen;
  await deps.raiseAlert(
    trx,
    {
      kind,
      message,
      details: {
        reference: topUp.reference,
        provider: topUp.provider,
        amountKobo: topUp.amount.toString(),
        status: topUp.status,
        news: news.end,
        newsAmountKobo: news.amountKobo?.toString() ?? null,
      },
    },
    now,
    deps.jobs,
  );
}

/** pending → success: the money left the pool for the provider's float; waiting purchases go. */
async function settlePending(
  deps: OutcomeDeps,
  trx: Transaction<DB>,
  topUp: FloatTopUp,
  now: Date,
): Promise<void> {
  await post(
    trx,
    {
      reference: floatTopUpPostingReference(topUp.reference),
      description: `Float top-up of ${topUp.provider}`,
      entries: [
        { account: systemAccounts.collectionsPool, amount: topUp.amount },
        { account: providerFloatAccount(topUp.provider), amount: -topUp.amount },
      ],
      // The key stored postings carry (decision 0038): metadata is read as one shape across them.
      metadata: { transferReference: topUp.reference, provider: topUp.provider },
    },
    now,
    { shards: deps.ledgerShards },
  );
  await trx
    .updateTable('float_top_ups')
    .set({ status: 'success', settled_at: now, updated_at: now })
    .where('id', '=', topUp.id)
    .execute();
  await publishEvent(deps.jobs, trx, {
    type: 'funding.float_top_up_settled',
    reference: topUp.reference,
    provider: topUp.provider,
    amountKobo: topUp.amount.toString(),
    occurredAt: now.toISOString(),
  });
}

/**
 * pending → failed or reversed, success → reversed: the top-up is closed, its reversal posted when it
 * had been counted as sent, an ops alert raised, and a purchase waiting on a pending one told.
 */
async function closeUnsent(
  deps: OutcomeDeps,
  trx: Transaction<DB>,
  closing: {
    topUp: FloatTopUp;
    from: 'pending' | 'success';
    end: 'failed' | 'reversed';
    reason: string | null;
  },
  now: Date,
): Promise<void> {
  const { topUp, from, end, reason } = closing;
  if (from === 'success') {
    // success → reversed: the money came back to the pool after we counted it as sent.
    await post(
      trx,
      {
        reference: floatTopUpReversalPostingReference(topUp.reference),
        description: `Reversed float top-up of ${topUp.provider}`,
        entries: [
          { account: providerFloatAccount(topUp.provider), amount: topUp.amount },
          { account: systemAccounts.collectionsPool, amount: -topUp.amount },
        ],
        metadata: { transferReference: topUp.reference, provider: topUp.provider },
      },
      now,
      { shards: deps.ledgerShards },
    );
  }
  await trx
    .updateTable('float_top_ups')
    .set({ status: end, failure_reason: reason, updated_at: now, closed_at: now })
    .where('id', '=', topUp.id)
    .execute();
  await deps.raiseAlert(
    trx,
    {
      kind: end === 'failed' ? 'provider_funding_failed' : 'provider_funding_reversed',
      message:
        end === 'failed'
          ? `funding of ${topUp.provider} (${topUp.reference}) failed: ${reason ?? 'no reason given'}`
          : `funding of ${topUp.provider} (${topUp.reference}) was reversed: ${reason ?? 'no reason given'}; the money is back in the collections pool`,
      details: {
        reference: topUp.reference,
        provider: topUp.provider,
        amountKobo: topUp.amount.toString(),
        accountNumber: topUp.account_number,
        previousStatus: from,
        reason,
      },
    },
    now,
    deps.jobs,
  );
  // A purchase waiting for this float can no longer count on it (a reversal after the settlement
  // comes too late to matter to one).
  if (from === 'pending') {
    await publishEvent(deps.jobs, trx, {
      type: 'funding.float_top_up_failed',
      reference: topUp.reference,
      provider: topUp.provider,
      amountKobo: topUp.amount.toString(),
      reason: reason ?? end,
      occurredAt: now.toISOString(),
    });
  }
}
