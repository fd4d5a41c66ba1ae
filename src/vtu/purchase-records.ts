import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { toView, type VtuTransactionView } from './purchases.ts';

// What the purchases keep about one purchase, for another domain that must judge it (a dispute):
// the view the buyer sees, what the provider was asked and answered as far as it is stored, the
// requery's progress, and how much of the wallet's money the purchase still holds. The last is the
// purchases' own rule (a failure was refunded whole, a part delivery in part), so it is decided here.

/** The stored side of the exchange with the provider: what was sent, its reference there, the requery. */
export type PurchaseExchange = {
  /** What the provider was asked for, as sent (without our reference). */
  request: Record<string, unknown>;
  /** The provider's own reference of the order, once it gave one. */
  providerReference?: string;
  /** When it was sent (claimed for sending); absent while it waits for a float top-up or a place. */
  sentAt?: string;
  /** The provider float top-up it waited for, if any. */
  fundingReference?: string;
  /** Requeries made while the outcome was unknown or pending. */
  requeryAttempts: number;
  /** When the next requery is due, while it is processing. */
  nextRequeryAt?: string;
  /** When its outcome was settled (success or failed). */
  completedAt?: string;
  /** The provider's reason for a definite failure. */
  failureReason?: string;
};

export type PurchaseRecord = {
  view: VtuTransactionView;
  userId: string;
  createdAt: Date;
  exchange: PurchaseExchange;
  /** Kobo the purchase charged the wallet when it was accepted; 0 for an airtime-to-cash sale. */
  chargedKobo: bigint;
  /**
   * Kobo of the wallet's money the purchase still holds: what it charged less what went back (a
   * failure's refund, a part delivery's). Null while it is processing: its outcome may yet refund
   * it. Zero for an airtime-to-cash sale, which charges nothing.
   */
  stillChargedKobo: bigint | null;
};

/** One purchase of the user, by its id or its reference; undefined when it is not theirs. */
export async function findPurchaseRecord(
  db: Kysely<DB> | Transaction<DB>,
  userId: string,
  by: { id: string } | { reference: string },
): Promise<PurchaseRecord | undefined> {
  let query = db.selectFrom('vtu_transactions').selectAll().where('user_id', '=', userId);
  query = 'id' in by ? query.where('id', '=', by.id) : query.where('reference', '=', by.reference);
  const row = await query.executeTakeFirst();
  if (row === undefined) return undefined;
  const request = (typeof row.request === 'string' ? JSON.parse(row.request) : row.request) as Record<
    string,
    unknown
  >;
  const exchange: PurchaseExchange = {
    request,
    ...(row.provider_reference === null ? {} : { providerReference: row.provider_reference }),
    ...(row.sent_at === null ? {} : { sentAt: row.sent_at.toISOString() }),
    ...(row.funding_reference === null ? {} : { fundingReference: row.funding_reference }),
    requeryAttempts: row.requery_attempts,
    ...(row.status !== 'processing' || row.next_requery_at === null
      ? {}
      : { nextRequeryAt: row.next_requery_at.toISOString() }),
    ...(row.completed_at === null ? {} : { completedAt: row.completed_at.toISOString() }),
    ...(row.failure_reason === null ? {} : { failureReason: row.failure_reason }),
  };
  return {
    view: toView(row),
    userId: row.user_id,
    createdAt: row.created_at,
    exchange,
    chargedKobo: row.direction === 'debit' ? row.amount : 0n,
    stillChargedKobo: stillCharged(row),
  };
}

function stillCharged(row: {
  status: 'processing' | 'success' | 'failed';
  direction: 'debit' | 'credit';
  amount: bigint;
  refunded: bigint;
}): bigint | null {
  if (row.direction === 'credit') return 0n;
  switch (row.status) {
    case 'processing':
      return null;
    // A definite failure refunded the whole amount in the transaction that failed it (settlement.ts).
    case 'failed':
      return 0n;
    case 'success':
      return row.amount - row.refunded;
    default: {
      const unknown: never = row.status;
      throw new Error(`unknown purchase status ${String(unknown)}`);
    }
  }
}
