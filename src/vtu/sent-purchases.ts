import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, VtuTransactionsTable } from '../db/schema.ts';
import type { VtuService } from '../providers/vtu/vtu-provider.ts';

// The purchases routed to one provider, as the reconciliation with that provider's own records
// compares them (API.md 17.5): what we charged, what we believe became of it, and what a requery
// needs to find it there.

export type SentPurchase = {
  reference: string;
  service: VtuService;
  userId: string;
  /** The phone, meter, smartcard, account or link it was for. */
  recipient: string;
  status: 'processing' | 'success' | 'failed';
  /** Kobo taken from the wallet (a debit) or paid out (airtime-to-cash). */
  amountKobo: bigint;
  /** The provider's price (a debit), or the airtime's face value (airtime-to-cash). */
  wholesaleKobo: bigint;
  /** Kobo refunded of a success delivered in part. */
  refundedKobo: bigint;
  providerReference: string | null;
  /** Null while it waits to be sent: the provider cannot know it yet. */
  sentAt: Date | null;
  at: Date;
};

const toSent = (row: Selectable<VtuTransactionsTable>): SentPurchase => ({
  reference: row.reference,
  service: row.service as VtuService,
  userId: row.user_id,
  recipient: row.recipient,
  status: row.status,
  amountKobo: row.amount,
  wholesaleKobo: row.wholesale,
  refundedKobo: row.refunded,
  providerReference: row.provider_reference,
  sentAt: row.sent_at,
  at: row.created_at,
});

/** The purchases routed to `provider` (data, bills, social) made in [from, to), oldest first. */
export async function purchasesSentBetween(
  db: Kysely<DB>,
  provider: string,
  from: Date,
  to: Date,
): Promise<SentPurchase[]> {
  const rows = await db
    .selectFrom('vtu_transactions')
    .selectAll()
    .where('provider', '=', provider)
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(toSent);
}

/** The purchases with these references, whenever made. */
export async function purchasesByReference(
  db: Kysely<DB>,
  references: readonly string[],
): Promise<Map<string, SentPurchase>> {
  if (references.length === 0) return new Map();
  const rows = await db
    .selectFrom('vtu_transactions')
    .selectAll()
    // One array parameter, however many references: a list of bind parameters has a ceiling.
    .where(sql<boolean>`reference = any(${[...references]}::text[])`)
    .execute();
  return new Map(rows.map((row) => [row.reference, toSent(row)]));
}
