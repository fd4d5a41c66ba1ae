import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNaira } from '../../format.ts';
import { keep, kept } from '../../offline-cache.ts';

// History: purchases, newest first, filtered by status, a page at a time. Offline, the last page
// seen, marked with its time.

const pageSize = 20;
const services = {
  airtime: 'Airtime',
  data: 'Data',
  cable: 'Cable TV',
  electricity: 'Electricity',
  betting: 'Betting',
  education: 'Exam pins',
  social: 'Social media',
  airtime_to_cash: 'Airtime to cash',
} as const;
type Service = keyof typeof services;
type Page = Output<'listMyVtuTransactions'>;

function History() {
  const [offset, setOffset] = useState(0);
  const [status, setStatus] = useState<'' | 'processing' | 'success' | 'failed'>('');
  const [service, setService] = useState<'' | Service>('');
  const query = useQuery({
    queryKey: ['transactions', offset, status, service],
    queryFn: () =>
      call('listMyVtuTransactions', {
        limit: pageSize,
        offset,
        ...(status === '' ? {} : { status }),
        ...(service === '' ? {} : { service }),
      }),
    placeholderData: keepPreviousData,
  });
  useEffect(() => {
    if (query.data && offset === 0 && status === '' && service === '') keep('history', query.data);
  }, [query.data, offset, status, service]);
  const last = query.data ? null : kept<Page>('history');
  const page = query.data ?? last?.value;

  return (
    <Screen title="History">
      <label className="flex flex-col gap-1">
        <span className="font-medium">Show</span>
        <select
          className="rounded-lg border border-gray-400 px-3 py-2"
          value={status}
          onChange={(event) => {
            setStatus(event.target.value as typeof status);
            setOffset(0);
          }}
        >
          <option value="">All</option>
          <option value="success">Successful</option>
          <option value="processing">Processing</option>
          <option value="failed">Failed</option>
        </select>
      </label>
      <label className="flex flex-col gap-1">
        <span className="font-medium">Service</span>
        <select
          className="rounded-lg border border-gray-400 px-3 py-2"
          value={service}
          onChange={(event) => {
            setService(event.target.value as typeof service);
            setOffset(0);
          }}
        >
          <option value="">All services</option>
          {Object.entries(services).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {last && query.isError ? (
        <p role="status" className="rounded-lg bg-amber-100 p-3 text-amber-900">
          Offline: your history as of {formatDateTime(last.at)}.
        </p>
      ) : (
        <ErrorNote error={query.error as never} />
      )}
      {page === undefined ? <Waiting label="Loading your history" /> : null}
      {page && page.items.length === 0 ? <p>Nothing here yet.</p> : null}
      <ul className="flex flex-col divide-y divide-gray-200">
        {page?.items.map((t) => (
          <li key={t.id}>
            <Link to="/transactions/$id" params={{ id: t.id }} className="flex justify-between gap-2 py-3">
              <span>
                <span className="block">{t.description}</span>
                <span className="text-sm text-gray-700">
                  {formatDateTime(t.createdAt)} · {t.status}
                </span>
              </span>
              <span className="font-semibold">
                {t.direction === 'credit' ? '+' : '−'}
                {formatNaira(t.amount)}
              </span>
            </Link>
          </li>
        ))}
      </ul>
      {page ? (
        <div className="flex justify-between">
          <Button variant="secondary" disabled={offset === 0} onClick={() => setOffset(offset - pageSize)}>
            Newer
          </Button>
          <Button
            variant="secondary"
            disabled={offset + pageSize >= page.total}
            onClick={() => setOffset(offset + pageSize)}
          >
            Older
          </Button>
        </div>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/transactions/')({ beforeLoad: requireSignIn, component: History });
