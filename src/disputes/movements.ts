import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { userAccount } from '../ledger/accounts.ts';
import { accountMovement } from '../ledger/history.ts';
import type { PurchaseRecord } from '../vtu/module.ts';

// The movement a person disputes, found by any reference they were shown: a purchase's own
// (listMyVtuTransactions) or a wallet movement's (listTransactions). A wallet movement of a purchase
// (its debit, its refund) is the purchase: disputing either is disputing the purchase, so that one
// purchase cannot be disputed twice at once under two names, and a refund is bounded by what the
// purchase still holds. Anything else is the wallet movement itself (a top-up, a transfer, a lock).

type Handle = Kysely<DB> | Transaction<DB>;

/** What the purchases keep about one of the user's purchases (the vtu module's api). */
export type PurchaseRecordOf = (
  db: Handle,
  userId: string,
  by: { id: string } | { reference: string },
) => Promise<PurchaseRecord | undefined>;

export type Movement =
  | {
      kind: 'purchase';
      reference: string;
      description: string;
      /** Kobo the purchase charged the wallet (0 for a sale, which charges nothing). */
      chargedKobo: bigint;
      createdAt: Date;
      purchase: PurchaseRecord;
    }
  | {
      kind: 'wallet';
      reference: string;
      description: string;
      /** Kobo the movement took from the person's accounts together (0 for a credit or a lock). */
      chargedKobo: bigint;
      createdAt: Date;
    };

function purchaseMovement(purchase: PurchaseRecord): Movement {
  return {
    kind: 'purchase',
    reference: purchase.view.reference,
    description: purchase.view.description,
    chargedKobo: purchase.chargedKobo,
    createdAt: purchase.createdAt,
    purchase,
  };
}

/** The user's movement this reference names, or undefined when it names none of theirs. */
export async function findMovement(
  db: Handle,
  purchaseRecord: PurchaseRecordOf,
  userId: string,
  reference: string,
): Promise<Movement | undefined> {
  const purchase = await purchaseRecord(db, userId, { reference });
  if (purchase !== undefined) return purchaseMovement(purchase);
  const entry = await accountMovement(db, userAccount('wallet', userId), reference);
  if (entry === undefined) return undefined;
  const purchaseId = entry.metadata.purchaseId;
  if (typeof purchaseId === 'string') {
    const owner = await purchaseRecord(db, userId, { id: purchaseId });
    if (owner !== undefined) return purchaseMovement(owner);
  }
  return {
    kind: 'wallet',
    reference: entry.reference,
    description: entry.description,
    // What left the person, not only the wallet: a lock moved it to their own savings (nothing
    // charged, or a refund would pay them twice), the early break took the penalty.
    chargedKobo: entry.ownerAmount < 0n ? -entry.ownerAmount : 0n,
    createdAt: entry.createdAt,
  };
}
