import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import { raiseAlert } from '../alerts/alerts.ts';
import type { DB, FundingTransfersTable } from '../db/schema.ts';
import { publishEvent } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import { providerFloatAccount, systemAccounts } from '../ledger/accounts.ts';
import { post } from '../ledger/postings.ts';
import { PaymentProviderError, type Transfer } from '../providers/payments/payment-provider.ts';
import type { FundingDeps } from './service.ts';

// Funding events of outbound transfers (SPEC.md "States and transitions", "Events"): the collections
// pool at the payment provider pays a VTU provider's bank account, which tops up our float there.
// Three parties can tell us how a transfer ended: the provider's answer when it is initiated, its
// signed transfer.* webhooks (in any order, any number of times) and reconciliation's verification
// by reference. All of them go through applyTransferOutcome, one state machine under the row lock:
//
//   pending  → success   the money left the pool: posted pool → provider float; `transfer_settled`
//   pending  → failed    nothing moved; ops alert; `transfer_failed` (a purchase waiting on it fails)
//   pending  → reversed  settled and reversed before we heard of the settlement: nothing net moved,
//                        nothing posted; ops alert; `transfer_failed`
//   success  → reversed  the money came back: posted provider float → pool; ops alert
//   reversed → success   a late success after the reversal: nothing (the reversal is final)
//   anything else        a repeat (nothing) or a contradiction (ops alert, nothing changes)

export type FundingTransfer = Selectable<FundingTransfersTable>;

export type FundingDestination = {
  /** The VTU provider whose float this tops up (data, bills, social). */
  provider: string;
  /** Its bank account, as the payment provider's transfer recipient takes it. */
  bankCode: string;
  accountNumber: string;
  accountName: string;
};

/** The ledger reference of a settled transfer, and of its reversal. */
export const transferPostingReference = (reference: string): string => `transfer:${reference}`;
export const transferReversalPostingReference = (reference: string): string =>
  `transfer:${reference}:reversed`;

/** Paystack's transfer references are 16-50 lower-case letters, digits, '-' and '_'. */
const newTransferReference = (): string => `fund-${randomBytes(12).toString('hex')}`;

/** How a transfer ended, in our terms: Paystack's abandoned, blocked and rejected are failures. */
export type TransferEnd = 'success' | 'failed' | 'reversed';

export type TransferOutcome =
  | 'settled'
  | 'failed'
  | 'reversed'
  /** The same news again, or a late success after a reversal: nothing changed. */
  | 'unchanged'
  /** News that contradicts what we know (failed after success, success after failed): alerted. */
  | 'conflict'
  | 'unknown_reference';

type Deps = Pick<FundingDeps, 'db' | 'clock' | 'jobs' | 'payments'>;

/** Paystack's transfer status, mapped to an end when it is one; null while it may still change. */
export function transferEnd(status: Transfer['status']): TransferEnd | null {
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
 * funding event: recordFundingTransfer, then sendFundingTransfer. Returns the transfer as it stands
 * after the provider's answer: success and failed are final; pending is settled later by the webhook
 * or reconciliation.
 */
export async function startProviderFunding(
  deps: Deps,
  request: { destination: FundingDestination; amountKobo: bigint; reason: string },
): Promise<FundingTransfer> {
  const reference = await recordFundingTransfer(deps.db, deps.clock.now(), request);
  return sendFundingTransfer(deps, reference);
}

/**
 * Writes a pending funding transfer (inside the caller's transaction when given one) and returns its
 * reference. The row exists before the provider is asked, so a crash before or during the call
 * leaves a pending row that reconciliation resolves by reference.
 */
export async function recordFundingTransfer(
  db: Kysely<DB> | Transaction<DB>,
  now: Date,
  request: { destination: FundingDestination; amountKobo: bigint; reason: string },
): Promise<string> {
  assert.ok(request.amountKobo > 0n, 'a funding transfer moves a positive amount');
  const { destination } = request;
  const reference = newTransferReference();
  await db
    .insertInto('funding_transfers')
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
 * Asks the payment provider to make a recorded transfer: the recipient, then the transfer under the
 * recorded reference. No database transaction is open across the provider calls.
 */
export async function sendFundingTransfer(deps: Deps, reference: string): Promise<FundingTransfer> {
  const recorded = await transferByReference(deps, reference);
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
    await settleTransfer(deps, {
      reference,
      end: 'failed',
      reason: `recipient not created: ${error.message}`,
    });
    return transferByReference(deps, reference);
  }

  try {
    const transfer = await deps.payments.initiateTransfer({
      reference,
      amountKobo: recorded.amount,
      recipientCode,
      reason: recorded.reason,
    });
    const end = transferEnd(transfer.status);
    await deps.db
      .updateTable('funding_transfers')
      .set({ transfer_code: transfer.transferCode })
      .where('reference', '=', reference)
      .execute();
    if (end !== null) await settleTransfer(deps, { reference, end, reason: transfer.reason });
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    // A definite refusal: no transfer exists. Otherwise it may: it stays pending until the webhook
    // or reconciliation's verification by reference says how it ended.
    if (error.definite) {
      await settleTransfer(deps, { reference, end: 'failed', reason: `transfer refused: ${error.message}` });
    }
  }
  return transferByReference(deps, reference);
}

export async function transferByReference(
  deps: Pick<Deps, 'db'>,
  reference: string,
): Promise<FundingTransfer> {
  return deps.db
    .selectFrom('funding_transfers')
    .selectAll()
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
}

/** The status of a recorded transfer (a purchase waiting for a float top-up asks it). */
export async function transferStatus(
  db: Kysely<DB> | Transaction<DB>,
  reference: string,
): Promise<FundingTransfer['status']> {
  const transfer = await db
    .selectFrom('funding_transfers')
    .select(['status'])
    .where('reference', '=', reference)
    .executeTakeFirstOrThrow();
  return transfer.status;
}

/**
 * The reference of the newest transfer to the provider still pending, if any: a purchase short of
 * float attaches to it instead of starting another. The caller serialises the decision (vtu's float
 * takes an advisory lock per provider in `trx`), so no row lock is taken here.
 */
export async function latestPendingTransferTo(
  db: Kysely<DB> | Transaction<DB>,
  provider: string,
): Promise<string | undefined> {
  const pending = await db
    .selectFrom('funding_transfers')
    .select('reference')
    .where('provider', '=', provider)
    .where('status', '=', 'pending')
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  return pending?.reference;
}

/** applyTransferOutcome in a transaction of its own. */
export async function settleTransfer(
  deps: Pick<Deps, 'db' | 'clock' | 'jobs'>,
  news: { reference: string; end: TransferEnd; reason: string | null; amountKobo?: bigint },
): Promise<TransferOutcome> {
  return deps.db.transaction().execute((trx) => applyTransferOutcome(deps, trx, news));
}

/**
 * Moves a funding transfer on news of how it ended, inside the caller's transaction (the webhook's
 * processing, or settleTransfer). Safe to call any number of times, concurrently, in any order.
 */
export async function applyTransferOutcome(
  deps: Pick<Deps, 'clock' | 'jobs'>,
  trx: Transaction<DB>,
  news: { reference: string; end: TransferEnd; reason: string | null; amountKobo?: bigint },
): Promise<TransferOutcome> {
  const transfer = await trx
    .selectFrom('funding_transfers')
    .selectAll()
    .where('reference', '=', news.reference)
    .forUpdate()
    .executeTakeFirst();
  if (transfer === undefined) return 'unknown_reference';
  const now = deps.clock.now();
  const alert = (kind: 'transfer_conflicting_event' | 'transfer_amount_mismatch', message: string) =>
    raiseAlert(
      trx,
      {
        kind,
        message,
        details: {
          reference: transfer.reference,
          provider: transfer.provider,
          amountKobo: transfer.amount.toString(),
          status: transfer.status,
          news: news.end,
          newsAmountKobo: news.amountKobo?.toString() ?? null,
        },
      },
      now,
      deps.jobs,
    );

  if (news.amountKobo !== undefined && news.amountKobo !== transfer.amount) {
    // Signed news about another amount than we sent: nothing is posted on it; a person looks.
    await alert(
      'transfer_amount_mismatch',
      `transfer ${transfer.reference} was reported ${news.end} for ${news.amountKobo} kobo, not the ${transfer.amount} kobo sent; left as ${transfer.status}`,
    );
    return 'conflict';
  }

  const from = transfer.status;
  if (from === news.end) return 'unchanged';
  if (from === 'reversed' && news.end === 'success') return 'unchanged';
  if (from === 'failed' || (from === 'success' && news.end === 'failed') || from === 'reversed') {
    await alert(
      'transfer_conflicting_event',
      `transfer ${transfer.reference} is ${from} but was reported ${news.end}; nothing changed`,
    );
    return 'conflict';
  }

  const floatAccount = providerFloatAccount(transfer.provider);
  const reason = news.reason ?? null;
  if (news.end === 'success') {
    await post(
      trx,
      {
        reference: transferPostingReference(transfer.reference),
        description: `Float top-up of ${transfer.provider}`,
        entries: [
          { account: systemAccounts.collectionsPool, amount: transfer.amount },
          { account: floatAccount, amount: -transfer.amount },
        ],
        metadata: { transferReference: transfer.reference, provider: transfer.provider },
      },
      now,
    );
    await trx
      .updateTable('funding_transfers')
      .set({ status: 'success', settled_at: now, updated_at: now })
      .where('id', '=', transfer.id)
      .execute();
    await publishEvent(deps.jobs, trx, {
      type: 'funding.transfer_settled',
      reference: transfer.reference,
      provider: transfer.provider,
      amountKobo: transfer.amount.toString(),
      occurredAt: now.toISOString(),
    });
    return 'settled';
  }

  if (from === 'success') {
    // success → reversed: the money came back to the pool after we counted it as sent.
    await post(
      trx,
      {
        reference: transferReversalPostingReference(transfer.reference),
        description: `Reversed float top-up of ${transfer.provider}`,
        entries: [
          { account: floatAccount, amount: transfer.amount },
          { account: systemAccounts.collectionsPool, amount: -transfer.amount },
        ],
        metadata: { transferReference: transfer.reference, provider: transfer.provider },
      },
      now,
    );
  }
  await trx
    .updateTable('funding_transfers')
    .set({ status: news.end, failure_reason: reason, updated_at: now, closed_at: now })
    .where('id', '=', transfer.id)
    .execute();
  await raiseAlert(
    trx,
    {
      kind: news.end === 'failed' ? 'provider_funding_failed' : 'provider_funding_reversed',
      message:
        news.end === 'failed'
          ? `funding of ${transfer.provider} (${transfer.reference}) failed: ${reason ?? 'no reason given'}`
          : `funding of ${transfer.provider} (${transfer.reference}) was reversed: ${reason ?? 'no reason given'}; the money is back in the collections pool`,
      details: {
        reference: transfer.reference,
        provider: transfer.provider,
        amountKobo: transfer.amount.toString(),
        accountNumber: transfer.account_number,
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
      type: 'funding.transfer_failed',
      reference: transfer.reference,
      provider: transfer.provider,
      amountKobo: transfer.amount.toString(),
      reason: reason ?? news.end,
      occurredAt: now.toISOString(),
    });
  }
  return news.end;
}
