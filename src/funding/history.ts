import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { DateRange } from '../lagos-time.ts';
import { userAccount } from '../ledger/accounts.ts';
import { type HistoryEntry, historyEntry, walletHistory } from '../ledger/history.ts';
import { koboToNaira } from '../money.ts';
import { transferCounterparties } from '../transfers/service.ts';
import { movementKindOf, purchaseKinds } from './movement-kinds.ts';
import type { MovementKind } from './schemas.ts';

// The wallet history (listTransactions, getTransaction; API.md section 6): every entry of the
// user's wallet account, newest first, with its kind (movement-kinds.ts). Apart from the top-ups
// (service.ts) because it reads every domain's references: whatever imports the top-ups (the
// webhook, the float's transfers) does not import the other domains through it.

export type WalletTransactionView = {
  id: string;
  reference: string;
  kind: MovementKind;
  description: string;
  direction: 'credit' | 'debit';
  amount: number;
  balanceAfter: number;
  createdAt: string;
  /** Transfers: the other person's verified name as others see it (API.md sections 4 and 6). */
  counterparty?: string;
  /** Purchases, their refunds and sales: the purchase (getMyVtuTransaction's id). */
  purchaseId?: string;
};

const purchaseIdOf = (entry: HistoryEntry<MovementKind>): string | undefined => {
  const id = entry.metadata.purchaseId;
  return purchaseKinds.has(entry.kind) && typeof id === 'string' ? id : undefined;
};

const toView = (
  entry: HistoryEntry<MovementKind>,
  counterparties: ReadonlyMap<string, string>,
): WalletTransactionView => ({
  id: entry.id.toString(),
  reference: entry.reference,
  kind: entry.kind,
  description: entry.description,
  direction: entry.amount > 0n ? 'credit' : 'debit',
  amount: koboToNaira(entry.amount > 0n ? entry.amount : -entry.amount),
  balanceAfter: koboToNaira(entry.balanceAfter),
  createdAt: entry.createdAt.toISOString(),
  ...(counterparties.has(entry.reference) ? { counterparty: counterparties.get(entry.reference)! } : {}),
  ...optional('purchaseId', purchaseIdOf(entry)),
});

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

export type WalletHistoryFilter = { kind?: MovementKind | undefined; range?: DateRange };

export async function listWalletTransactions(
  db: Kysely<DB>,
  userId: string,
  page: { limit: number; offset: number },
  filter: WalletHistoryFilter = {},
): Promise<{ items: WalletTransactionView[]; limit: number; offset: number; total: number }> {
  const { items, total } = await walletHistory(db, userAccount('wallet', userId), page, {
    kindOf: movementKindOf,
    ...filter,
  });
  const counterparties = await transferCounterparties(
    db,
    userId,
    items.map((e) => e.reference),
  );
  return {
    items: items.map((e) => toView(e, counterparties)),
    limit: page.limit,
    offset: page.offset,
    total,
  };
}

/** int8's largest value: a larger id cannot exist, and would make the query fail rather than miss. */
const entryIdMax = 9_223_372_036_854_775_807n;

export async function getWalletTransaction(
  db: Kysely<DB>,
  userId: string,
  id: string,
): Promise<WalletTransactionView> {
  const entryId = BigInt(id);
  const entry =
    entryId <= entryIdMax
      ? await historyEntry(db, userAccount('wallet', userId), entryId, { kindOf: movementKindOf })
      : undefined;
  if (entry === undefined) throw notFound('transaction');
  return toView(entry, await transferCounterparties(db, userId, [entry.reference]));
}
