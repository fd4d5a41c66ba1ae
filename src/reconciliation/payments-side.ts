import type { PaymentRecord } from '../funding/module.ts';
import type { PaymentProvider, VerifiedTransaction } from '../providers/payments/payment-provider.ts';
import { type ComparedItem, type StoredRecord, storedRecord } from './records.ts';
import type { Bucket } from './schemas.ts';

// The payments' reconciliation (API.md 17.5): the payment provider's own transaction list of the
// period (Paystack GET /transaction, every status, paged) against our top-ups and bank deposits.
// Each side's records outside the period are looked up by reference before anything is called
// missing: a transaction listed at the period's edge, or a top-up asked for just before midnight and
// paid after it, is found where it is. A provider that cannot be read fails the run (nothing
// partial is reported as complete).

export type PaymentsSideDeps = {
  payments: Pick<PaymentProvider, 'listTransactions' | 'verifyTransaction'>;
  paymentRecordsBetween(from: Date, to: Date): Promise<PaymentRecord[]>;
  paymentRecordsOf(references: readonly string[]): Promise<Map<string, PaymentRecord>>;
};

/** Transactions per page asked of the provider (Paystack's documented maximum is larger). */
const perPage = 100;
/** A backstop against a list that never ends: a million transactions in a period. */
const pagesMax = 10_000;

/** Every transaction the provider created in [from, to], every status, by reference. */
async function providerTransactions(
  payments: PaymentsSideDeps['payments'],
  from: Date,
  to: Date,
): Promise<Map<string, VerifiedTransaction>> {
  const listed = new Map<string, VerifiedTransaction>();
  for (let page = 1; page <= pagesMax; page++) {
    const { transactions, pageCount } = await payments.listTransactions({ from, to, page, perPage });
    for (const transaction of transactions) listed.set(transaction.reference, transaction);
    if (page >= pageCount || transactions.length === 0) return listed;
  }
  throw new Error(`the payment provider listed more than ${pagesMax} pages for one period`);
}

/** Where one payment stands on both sides. */
export function paymentBucket(ours: PaymentRecord | null, theirs: VerifiedTransaction | null): Bucket {
  if (theirs === null) return 'missingThere';
  const paid = theirs.status === 'success';
  if (ours === null) return paid ? 'missingHere' : 'matched';
  const credited = ours.creditedKobo !== null;
  if (paid && credited) return ours.creditedKobo === theirs.amountKobo ? 'matched' : 'amountMismatch';
  // Paid there, not credited here: the money is missing here, or we even closed it as failed.
  if (paid) return ours.status === 'failed' ? 'statusMismatch' : 'missingHere';
  // Credited here for a payment the provider does not call a success.
  if (credited) return 'statusMismatch';
  return 'matched';
}

const ourRecord = (record: PaymentRecord): StoredRecord =>
  storedRecord({
    status: record.creditedKobo === null ? record.status : 'credited',
    amountKobo: record.creditedKobo ?? record.amountKobo,
    at: record.at,
    userId: record.userId,
    kind: record.kind,
  });

const theirRecord = (transaction: VerifiedTransaction): StoredRecord =>
  storedRecord({
    status: transaction.status,
    amountKobo: transaction.amountKobo,
    at: transaction.paidAt ?? transaction.createdAt,
    userId: transaction.metadata.userId,
    kind: transaction.channel,
    providerReference: String(transaction.id),
    note: transaction.currency === 'NGN' ? transaction.gatewayResponse : `paid in ${transaction.currency}`,
  });

export async function comparePayments(deps: PaymentsSideDeps, from: Date, to: Date): Promise<ComparedItem[]> {
  const theirs = await providerTransactions(deps.payments, from, to);
  const ours = new Map((await deps.paymentRecordsBetween(from, to)).map((r) => [r.reference, r]));
  // Theirs made in the period whose record here is older (or newer) than the period.
  const elsewhere = await deps.paymentRecordsOf(
    [...theirs.keys()].filter((reference) => !ours.has(reference)),
  );
  for (const [reference, record] of elsewhere) ours.set(reference, record);
  // Ours made in the period that the provider listed outside it: asked one by one.
  for (const reference of ours.keys()) {
    if (theirs.has(reference)) continue;
    const verified = await deps.payments.verifyTransaction(reference);
    if (verified !== null) theirs.set(reference, verified);
  }
  const references = [...new Set([...ours.keys(), ...theirs.keys()])].sort();
  return references.map((reference) => {
    const our = ours.get(reference) ?? null;
    const their = theirs.get(reference) ?? null;
    return {
      reference,
      bucket: paymentBucket(our, their),
      ours: our === null ? null : ourRecord(our),
      theirs: their === null ? null : theirRecord(their),
    };
  });
}
