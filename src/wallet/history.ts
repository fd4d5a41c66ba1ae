import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { DateRange } from '../lagos-time.ts';
import { userAccount } from '../ledger/accounts.ts';
import { type HistoryEntry, historyEntry, walletHistory } from '../ledger/history.ts';
import { koboToNaira } from '../money.ts';
import { type KindOf, purchaseKinds } from './movement-kinds.ts';
import type { MovementKind } from './schemas.ts';

// The wallet history (listTransactions, getTransaction; API.md section 6): every entry of the
// user's wallet account, newest first, with its kind (movement-kinds.ts) and, for a transfer, the
// other person, asked of the transfers in one call per page.

/** What the history reads: the ledger, the kinds, and the other person of the user's transfers. */
export type HistoryDeps = {
  db: Kysely<DB>;
  kindOf: KindOf;
  /** The other person's public name, by posting reference, of those postings that are the user's transfers. */
  counterpartiesOf: (
    userId: string,
    postingReferences: readonly string[],
  ) => Promise<ReadonlyMap<string, string>>;
};

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
  deps: HistoryDeps,
  userId: string,
  page: { limit: number; offset: number },
  filter: WalletHistoryFilter = {},
): Promise<{ items: WalletTransactionView[]; limit: number; offset: number; total: number }> {
  const { items, total } = await walletHistory(deps.db, userAccount('wallet', userId), page, {
    kindOf: deps.kindOf,
    ...filter,
  });
  const counterparties = await deps.counterpartiesOf(
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
  deps: HistoryDeps,
  userId: string,
  id: string,
): Promise<WalletTransactionView> {
  const entryId = BigInt(id);
  const entry =
    entryId <= entryIdMax
      ? await historyEntry(deps.db, userAccount('wallet', userId), entryId, { kindOf: deps.kindOf })
      : undefined;
  if (entry === undefined) throw notFound('transaction');
  return toView(entry, await deps.counterpartiesOf(userId, [entry.reference]));
}
