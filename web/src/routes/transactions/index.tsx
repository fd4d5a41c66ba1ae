import { useInfiniteQuery } from '@tanstack/react-query';
import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Select } from '../../components/select.tsx';
import {
  kindLabels,
  type MovementKind,
  type PurchaseStatus,
  type Row,
  rowOfEntry,
  rowOfPurchase,
  statusWords,
  TransactionRow,
  usePurchaseStatuses,
} from '../../components/transaction-row.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';
import { keep, kept } from '../../offline-cache.ts';

// History: every movement of the wallet, newest first, a page at a time ("Load more"), filtered by
// kind and by whole days (the service reads a date as a whole day in Lagos). A status is a purchase's
// own, so choosing one lists the purchases alone, and says so. The filters live in the address, so
// Back returns to the same list. Offline, the first page last seen, marked with its time.

const pageSize = 20;
type WalletPage = Output<'listTransactions'>;
/** The offline copy: the first unfiltered page (a new key: the purchases-only list kept before differs). */
const keptKey = 'wallet-history';

type Filters = { kind?: MovementKind; status?: PurchaseStatus; from?: string; to?: string };

const isDay = (value: unknown): value is string =>
  typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value));

function validateSearch(search: Record<string, unknown>): Filters {
  const filters: Filters = {};
  if (typeof search.kind === 'string' && search.kind in kindLabels)
    filters.kind = search.kind as MovementKind;
  if (typeof search.status === 'string' && search.status in statusWords)
    filters.status = search.status as PurchaseStatus;
  if (isDay(search.from)) filters.from = search.from;
  if (isDay(search.to)) filters.to = search.to;
  return filters;
}

const kindOptions = Object.entries(kindLabels).map(([value, label]) => ({ value, label }));
const statusOptions = Object.entries(statusWords).map(([value, label]) => ({ value, label }));

/** The pages of the list the filters ask for: wallet entries, or purchases when a status is chosen. */
function useHistory(filters: Filters, datesOk: boolean) {
  const dates = datesOk
    ? { ...(filters.from ? { from: filters.from } : {}), ...(filters.to ? { to: filters.to } : {}) }
    : {};
  const nextOffset = (last: { items: unknown[]; offset: number; total: number }) =>
    last.offset + last.items.length < last.total ? last.offset + last.items.length : undefined;
  const wallet = useInfiniteQuery({
    queryKey: ['history', 'wallet', filters.kind ?? '', dates],
    enabled: datesOk && filters.status === undefined,
    initialPageParam: 0,
    queryFn: ({ pageParam }) =>
      call('listTransactions', {
        limit: pageSize,
        offset: pageParam,
        ...(filters.kind ? { kind: filters.kind } : {}),
        ...dates,
      }),
    getNextPageParam: nextOffset,
  });
  const purchases = useInfiniteQuery({
    queryKey: ['history', 'purchases', filters.status ?? '', dates],
    enabled: datesOk && filters.status !== undefined,
    initialPageParam: 0,
    queryFn: ({ pageParam }) =>
      call('listMyVtuTransactions', {
        limit: pageSize,
        offset: pageParam,
        ...(filters.status ? { status: filters.status } : {}),
        ...dates,
      }),
    getNextPageParam: nextOffset,
  });
  return { wallet, purchases, list: filters.status === undefined ? wallet : purchases };
}

function History() {
  const filters = Route.useSearch();
  const navigate = useNavigate({ from: Route.fullPath });
  const filter = (change: Partial<Filters>) =>
    void navigate({ search: (current) => ({ ...current, ...change }), replace: true });
  const datesOk = !(filters.from && filters.to && filters.from > filters.to);
  const filtered = Object.keys(filters).length > 0;

  const { wallet, purchases, list } = useHistory(filters, datesOk);
  const entries = wallet.data?.pages.flatMap((page) => page.items);
  const statuses = usePurchaseStatuses(entries);

  useEffect(() => {
    const first = wallet.data?.pages[0];
    if (first && !filtered) keep(keptKey, first);
  }, [wallet.data, filtered]);
  const offline = !filtered && list.data === undefined && list.isError ? kept<WalletPage>(keptKey) : null;

  const rows: Row[] | undefined =
    filters.status === undefined
      ? (entries ?? offline?.value.items)?.map((entry) => rowOfEntry(entry, statuses))
      : purchases.data?.pages.flatMap((page) => page.items).map(rowOfPurchase);

  return (
    <Screen title="History">
      <fieldset className="flex flex-col gap-3">
        <legend className="sr-only">Filters</legend>
        {filters.status === undefined ? (
          <Select
            label="Type"
            value={filters.kind ?? ''}
            onChange={(kind) => filter({ kind: (kind || undefined) as MovementKind | undefined })}
            options={[{ value: '', label: 'Everything' }, ...kindOptions]}
          />
        ) : null}
        <Select
          label="Purchase status"
          value={filters.status ?? ''}
          onChange={(status) =>
            filter({ status: (status || undefined) as PurchaseStatus | undefined, kind: undefined })
          }
          options={[{ value: '', label: 'Any' }, ...statusOptions]}
        />
        <div className="grid grid-cols-2 gap-3">
          <Field
            label="From"
            type="date"
            value={filters.from ?? ''}
            onChange={(from) => filter({ from: from || undefined })}
          />
          <Field
            label="To"
            type="date"
            value={filters.to ?? ''}
            onChange={(to) => filter({ to: to || undefined })}
            error={datesOk ? undefined : 'This is before the From date.'}
          />
        </div>
        {filtered ? (
          <Button variant="secondary" onClick={() => void navigate({ search: {}, replace: true })}>
            Clear filters
          </Button>
        ) : null}
      </fieldset>
      {filters.status !== undefined ? (
        <p role="status" className="rounded-lg bg-brand-light p-3">
          Only purchases are shown while a status is chosen.
        </p>
      ) : null}

      {offline ? (
        <p role="status" className="rounded-lg bg-amber-100 p-3 text-amber-900">
          Offline: your history as of {formatDateTime(offline.at)}.
        </p>
      ) : (
        <ErrorNote error={list.error as CallError | null} />
      )}
      {rows === undefined && list.isPending && datesOk ? <Waiting label="Loading your history" /> : null}
      {rows?.length === 0 ? <p>{filtered ? 'Nothing matches these filters.' : 'Nothing here yet.'}</p> : null}
      <ul aria-label="Transactions" className="flex flex-col divide-y divide-gray-200">
        {rows?.map((row) => (
          <TransactionRow key={row.key} row={row} />
        ))}
      </ul>
      {list.hasNextPage ? (
        <Button variant="secondary" busy={list.isFetchingNextPage} onClick={() => void list.fetchNextPage()}>
          Load more
        </Button>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/transactions/')({
  beforeLoad: requireSignIn,
  validateSearch,
  component: History,
});
