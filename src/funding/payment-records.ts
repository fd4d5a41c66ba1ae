import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { bankDepositCreditsBetween, type PostedCredit, postedCreditsOf } from '../ledger/credits.ts';
import type { VerifiedTransaction } from '../providers/payments/payment-provider.ts';
import type { CreditOutcome } from './credits.ts';
import { creditBankDeposit, dedicatedPostingReference } from './dedicated-accounts.ts';
import { creditTopup, type FundingDeps } from './service.ts';

// Our side of the money that came in, for the reconciliation with the payment provider's own list
// (API.md 17.5): every checkout top-up and every bank deposit into a dedicated account, by the
// provider's reference. And the operator's credit of a payment the provider took that was never
// credited here (a lost intent after a restore, a webhook that never came): the same once-only path
// as a verified top-up or a bank deposit's webhook, so a late webhook or verifyTopup changes nothing.

/** One payment as we hold it. */
export type PaymentRecord = {
  /** The provider's reference. */
  reference: string;
  kind: 'topup' | 'bank_deposit';
  userId: string;
  /** A bank deposit is here only once credited. */
  status: 'pending' | 'success' | 'failed';
  /** Kobo asked (a top-up), or credited (a bank deposit). */
  amountKobo: bigint;
  /** Kobo credited; null while not credited. */
  creditedKobo: bigint | null;
  at: Date;
};

const dvaPrefix = dedicatedPostingReference('');

function depositRecord(credit: PostedCredit): PaymentRecord {
  return {
    reference: credit.reference.slice(dvaPrefix.length),
    kind: 'bank_deposit',
    userId: credit.userId,
    status: 'success',
    amountKobo: credit.amountKobo,
    creditedKobo: credit.amountKobo,
    at: credit.at,
  };
}

type IntentRow = {
  reference: string;
  user_id: string;
  status: 'pending' | 'success' | 'failed';
  amount: bigint;
  credited_amount: bigint | null;
  created_at: Date;
};

const topupRecord = (intent: IntentRow): PaymentRecord => ({
  reference: intent.reference,
  kind: 'topup',
  userId: intent.user_id,
  status: intent.status,
  amountKobo: intent.amount,
  creditedKobo: intent.credited_amount,
  at: intent.created_at,
});

const intentColumns = ['reference', 'user_id', 'status', 'amount', 'credited_amount', 'created_at'] as const;

/** The top-ups asked for, and the bank deposits credited, in [from, to). */
export async function paymentRecordsBetween(db: Kysely<DB>, from: Date, to: Date): Promise<PaymentRecord[]> {
  const intents = await db
    .selectFrom('topup_intents')
    .select(intentColumns)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .execute();
  const deposits = await bankDepositCreditsBetween(db, from, to);
  return [...intents.map(topupRecord), ...deposits.map(depositRecord)];
}

/** The payments with these provider references, whenever they were made. */
export async function paymentRecordsOf(
  db: Kysely<DB>,
  references: readonly string[],
): Promise<Map<string, PaymentRecord>> {
  const records = new Map<string, PaymentRecord>();
  if (references.length === 0) return records;
  const intents = await db
    .selectFrom('topup_intents')
    .select(intentColumns)
    // One array parameter, however many references: a list of bind parameters has a ceiling.
    .where(sql<boolean>`reference = any(${[...references]}::text[])`)
    .execute();
  for (const intent of intents) records.set(intent.reference, topupRecord(intent));
  const deposits = await postedCreditsOf(db, references.map(dedicatedPostingReference));
  for (const credit of deposits) records.set(credit.reference.slice(dvaPrefix.length), depositRecord(credit));
  return records;
}

/** Why a payment the provider reports could not be credited. */
export type UncreditablePayment = 'not_paid' | 'unknown_payer';

/**
 * Credits a payment the provider took, once: a bank deposit as its webhook would, a checkout payment
 * through its top-up intent. An intent lost (a restore to an earlier backup) is made again from the
 * provider's record first: the payer is the userId the checkout was opened with (its metadata), who
 * must be a user here. `verified` is the provider's own answer, read just before. `finish` runs in
 * the credit's transaction with its outcome (the caller records why it credited, in the same commit).
 */
export async function creditVerifiedPayment<T>(
  deps: Pick<
    FundingDeps,
    'db' | 'clock' | 'jobs' | 'raiseAlert' | 'limits' | 'ledgerShards' | 'findUserById'
  >,
  verified: VerifiedTransaction,
  finish: (trx: Transaction<DB>, outcome: CreditOutcome | UncreditablePayment) => Promise<T>,
): Promise<T> {
  const paid = verified.status === 'success' && verified.currency === 'NGN' && verified.amountKobo > 0n;
  const deposit = verified.channel === 'dedicated_nuban' || verified.receiverAccountNumber !== null;
  const userId = verified.metadata.userId;
  // Asked before the transaction: auth's read runs on its own connection.
  const payerKnown = deposit || (userId !== undefined && (await deps.findUserById(userId)) !== undefined);
  return deps.db.transaction().execute(async (trx) => {
    if (!paid) return finish(trx, 'not_paid');
    if (deposit) {
      const outcome = await creditBankDeposit(deps, trx, {
        reference: verified.reference,
        paidKobo: verified.amountKobo,
        accountNumber: verified.receiverAccountNumber,
        customerCode: verified.customerCode,
      });
      return finish(trx, outcome === 'unknown_reference' ? 'unknown_payer' : outcome);
    }
    if (!payerKnown || userId === undefined) return finish(trx, 'unknown_payer');
    const now = deps.clock.now();
    // Made again only when missing; a concurrent resolution's insert wins and this one credits
    // nothing more: creditTopup decides under the intent's row lock.
    await trx
      .insertInto('topup_intents')
      .values({
        id: newId(),
        user_id: userId,
        reference: verified.reference,
        amount: verified.amountKobo,
        status: 'pending',
        credited_amount: null,
        created_at: verified.createdAt,
        updated_at: now,
        credited_at: null,
      })
      .onConflict((oc) => oc.column('reference').doNothing())
      .execute();
    const outcome = await creditTopup(deps, trx, {
      reference: verified.reference,
      paidKobo: verified.amountKobo,
      source: 'verify',
    });
    return finish(trx, outcome);
  });
}
