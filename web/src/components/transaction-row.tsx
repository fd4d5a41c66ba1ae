import { useQuery } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import {
  ArrowDownLeft,
  ArrowUpRight,
  Banknote,
  CreditCard,
  Gift,
  Landmark,
  Lock,
  LockOpen,
  type LucideIcon,
  RotateCcw,
  Scale,
  ShoppingBag,
  Undo2,
} from 'lucide-react';
import { useMemo } from 'react';
import { call, type Output } from '../api/client.ts';
import { formatDateTime, formatNairaNumber } from '../format.ts';

// One row of a history, the same on the History screen and on home: what moved the money (an icon
// and a word), what it was, who the other person was, the amount (never wrapping) and, for a purchase,
// how it went. Each row opens its details: the purchase, or the wallet entry.

export type WalletEntry = Output<'listTransactions'>['items'][number];
export type Purchase = Output<'listMyVtuTransactions'>['items'][number];
export type MovementKind = WalletEntry['kind'];
export type PurchaseStatus = Purchase['status'];

export const kindLabels: Record<MovementKind, string> = {
  topup: 'Top-up',
  bank_transfer: 'Bank transfer in',
  transfer_in: 'Money received',
  transfer_out: 'Money sent',
  purchase: 'Purchase',
  refund: 'Refund',
  airtime_cash: 'Airtime to cash',
  savings_lock: 'Savings locked',
  savings_release: 'Savings returned',
  reward: 'Reward',
  dispute_refund: 'Dispute refund',
  adjustment: 'Adjustment',
};

const kindIcons: Record<MovementKind, LucideIcon> = {
  topup: CreditCard,
  bank_transfer: Landmark,
  transfer_in: ArrowDownLeft,
  transfer_out: ArrowUpRight,
  purchase: ShoppingBag,
  refund: RotateCcw,
  airtime_cash: Banknote,
  savings_lock: Lock,
  savings_release: LockOpen,
  reward: Gift,
  dispute_refund: Undo2,
  adjustment: Scale,
};

export const statusWords: Record<PurchaseStatus, string> = {
  processing: 'Pending',
  success: 'Successful',
  failed: 'Failed',
};

const statusColours: Record<PurchaseStatus, string> = {
  processing: 'bg-amber-100 text-amber-900',
  success: 'bg-green-100 text-green-900',
  failed: 'bg-red-100 text-red-900',
};

/** The kinds whose entry opens the purchase it belongs to rather than the wallet entry. */
const purchaseKinds: ReadonlySet<MovementKind> = new Set(['purchase', 'refund', 'airtime_cash']);

/** What a row shows, from a wallet entry or from a purchase. */
export type Row = {
  key: string;
  kind: MovementKind;
  description: string;
  /** The other person of a transfer, as "from …" or "to …". */
  party?: string | undefined;
  direction: 'credit' | 'debit';
  amount: number;
  createdAt: string;
  status?: PurchaseStatus | undefined;
  /** A purchase (its receipt and token) or a wallet entry (its details). */
  opens: { purchase: string } | { entry: string };
};

/** A wallet entry's row; `statuses` are the purchases' own, by id, where they are known. */
export function rowOfEntry(entry: WalletEntry, statuses?: ReadonlyMap<string, PurchaseStatus>): Row {
  const party =
    entry.counterparty === undefined
      ? undefined
      : `${entry.direction === 'credit' ? 'from' : 'to'} ${entry.counterparty}`;
  const purchase = purchaseKinds.has(entry.kind) ? entry.purchaseId : undefined;
  return {
    key: `entry-${entry.id}`,
    kind: entry.kind,
    description: entry.description,
    party,
    direction: entry.direction,
    amount: entry.amount,
    createdAt: entry.createdAt,
    // A refund is marked as one by its kind; only the purchase's own debit says how it went.
    status: entry.kind === 'purchase' && purchase !== undefined ? statuses?.get(purchase) : undefined,
    opens: purchase === undefined ? { entry: entry.id } : { purchase },
  };
}

export function rowOfPurchase(purchase: Purchase): Row {
  return {
    key: `purchase-${purchase.id}`,
    kind: purchase.direction === 'credit' ? 'airtime_cash' : 'purchase',
    description: purchase.description,
    direction: purchase.direction,
    amount: purchase.amount,
    createdAt: purchase.createdAt,
    status: purchase.status,
    opens: { purchase: purchase.id },
  };
}

/**
 * How the purchases among these wallet entries went. A purchase's debit is made at the instant the
 * purchase is, so the purchases made between the first and the last of them are all it takes: one
 * read, whatever the number of rows (a page holds at most 20 purchases; the read takes 100).
 */
export function usePurchaseStatuses(
  entries: readonly WalletEntry[] | undefined,
): ReadonlyMap<string, PurchaseStatus> {
  const times = (entries ?? [])
    .filter((entry) => entry.kind === 'purchase' && entry.purchaseId !== undefined)
    .map((entry) => entry.createdAt)
    .sort();
  const from = times[0];
  const to = times.at(-1);
  const query = useQuery({
    queryKey: ['purchase-statuses', from, to],
    enabled: from !== undefined,
    queryFn: () => call('listMyVtuTransactions', { from: from!, to: to!, limit: 100 }),
    // A pending purchase is looked at again until it settles.
    refetchInterval: (q) => (q.state.data?.items.some((p) => p.status === 'processing') ? 5_000 : false),
  });
  return useMemo(() => new Map(query.data?.items.map((p) => [p.id, p.status]) ?? []), [query.data]);
}

/** +₦1,000.00 for money in, −₦150.00 for money out. */
export const signedNaira = (direction: 'credit' | 'debit', amount: number): string =>
  `${direction === 'credit' ? '+' : '−'}${formatNairaNumber(amount)}`;

export function KindIcon({ kind }: { kind: MovementKind }) {
  const Icon = kindIcons[kind];
  return (
    <span className="flex h-10 w-10 shrink-0 items-center justify-center rounded-full bg-brand-light text-brand">
      <Icon size={20} aria-hidden="true" />
    </span>
  );
}

export function StatusBadge({ status }: { status: PurchaseStatus }) {
  return (
    <span className={`rounded px-1.5 text-xs font-semibold ${statusColours[status]}`}>
      {statusWords[status]}
    </span>
  );
}

export function TransactionRow({ row }: { row: Row }) {
  const inner = (
    <>
      <KindIcon kind={row.kind} />
      <span className="flex min-w-0 flex-1 flex-col">
        <span className="text-sm font-semibold text-gray-700">
          {kindLabels[row.kind]}
          {row.party ? ` ${row.party}` : ''}
        </span>
        <span className="break-words">{row.description}</span>
        <span className="flex flex-wrap items-center gap-x-2 text-sm text-gray-700">
          {formatDateTime(row.createdAt)}
          {row.status ? <StatusBadge status={row.status} /> : null}
        </span>
      </span>
      <span
        className={`whitespace-nowrap font-semibold ${row.direction === 'credit' ? 'text-green-800' : 'text-gray-900'}`}
      >
        {signedNaira(row.direction, row.amount)}
      </span>
    </>
  );
  const className = 'flex items-start gap-3 py-3';
  return (
    <li>
      {'purchase' in row.opens ? (
        <Link to="/transactions/$id" params={{ id: row.opens.purchase }} className={className}>
          {inner}
        </Link>
      ) : (
        <Link to="/transactions/entry/$id" params={{ id: row.opens.entry }} className={className}>
          {inner}
        </Link>
      )}
    </li>
  );
}
