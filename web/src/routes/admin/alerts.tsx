import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Pager } from '../../components/pager.tsx';
import { ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';

// Admin: the operations alerts (API.md section 11), newest first: a charge that paid another amount
// than its intent, failed provider funding, stuck purchases, ledger imbalances. Each with what the
// service recorded about it, a page at a time.

const PAGE = 20;

/** What each kind of alert means, in plain words; an unknown kind is shown as it is. */
const kindWords: Record<string, string> = {
  topup_amount_mismatch: 'A top-up paid a different amount',
  topup_currency_mismatch: 'A top-up paid in another currency',
  provider_funding_failed: 'Sending money to a provider failed',
  provider_funding_reversed: 'Money sent to a provider came back',
  // These kinds keep the provider's word: they name its transfer.* news of a float top-up (decision 0038).
  transfer_conflicting_event: "A float top-up's transfer event contradicts our records",
  transfer_amount_mismatch: "A float top-up's transfer was for a different amount",
  vtu_purchase_stuck: 'A purchase is stuck',
  vtu_delivery_awaited: 'A token or pins have not arrived',
  transfer_unknown_reference: 'A transfer we never sent',
  ledger_imbalance: 'The ledger does not balance',
  airtime_cash_over_confirmed: 'Airtime to cash: more airtime arrived than was declared',
};

const show = (value: unknown): string =>
  value === null || value === undefined
    ? '—'
    : typeof value === 'object'
      ? JSON.stringify(value)
      : String(value);

function Alerts() {
  const [offset, setOffset] = useState(0);
  const alerts = useQuery({
    queryKey: ['admin-alerts', offset],
    queryFn: () => call('adminListAlerts', { limit: PAGE, offset }),
    placeholderData: keepPreviousData,
  });
  const total = alerts.data?.total ?? 0;

  return (
    <Screen title="Alerts">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      {alerts.isPending ? <Waiting label="Loading the alerts" /> : null}
      <ErrorNote error={alerts.error as CallError | null} />
      {alerts.data ? (
        <p role="status" aria-live="polite">
          {total === 0
            ? 'No alerts. Nothing needs looking at.'
            : `${total} ${total === 1 ? 'alert' : 'alerts'}, newest first. Showing ${offset + 1} to ${Math.min(offset + PAGE, total)}.`}
        </p>
      ) : null}
      <ul className="flex flex-col gap-3" aria-label="Alerts">
        {alerts.data?.items.map((a) => (
          <li key={a.id} className="flex flex-col gap-1 rounded-xl border border-gray-300 p-3">
            <p className="font-semibold">{kindWords[a.kind] ?? a.kind}</p>
            <p>{a.message}</p>
            <p className="text-sm text-gray-700">
              {formatDateTime(a.createdAt)} · <span className="font-mono">{a.kind}</span>
            </p>
            {Object.keys(a.details).length > 0 ? (
              <dl className="grid grid-cols-[auto_1fr] gap-x-3 text-sm">
                {Object.entries(a.details).map(([key, value]) => (
                  <div key={key} className="contents">
                    <dt className="font-medium">{key}</dt>
                    <dd className="break-all font-mono">{show(value)}</dd>
                  </div>
                ))}
              </dl>
            ) : null}
          </li>
        ))}
      </ul>
      <Pager offset={offset} pageSize={PAGE} total={total} busy={alerts.isFetching} onOffset={setOffset} />
    </Screen>
  );
}

export const Route = createFileRoute('/admin/alerts')({ beforeLoad: requireSignIn, component: Alerts });
