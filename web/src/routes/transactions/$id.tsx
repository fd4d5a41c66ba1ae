import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { call } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNaira } from '../../format.ts';

// One transaction and its receipt, polled about every 3 s while it is processing (API.md section 15),
// with the token or pins copyable once delivered.

const statusWords = { processing: 'Processing', success: 'Successful', failed: 'Failed' } as const;

function Copy({ text }: { text: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <Button
      variant="secondary"
      onClick={() => {
        void navigator.clipboard?.writeText(text).then(() => setCopied(true));
      }}
    >
      {copied ? 'Copied' : 'Copy'}
    </Button>
  );
}

function Transaction() {
  const { id } = Route.useParams();
  const query = useQuery({
    queryKey: ['transaction', id],
    queryFn: () => call('getMyVtuTransaction', { id }),
    refetchInterval: (q) => (q.state.data?.status === 'processing' ? 3_000 : false),
  });
  const t = query.data;
  return (
    <Screen title="Transaction">
      <ErrorNote error={query.error as never} />
      {t === undefined ? <Waiting label="Loading" /> : null}
      {t ? (
        <>
          <p
            role="status"
            aria-live="polite"
            data-testid="status"
            className={`rounded-xl p-4 text-xl font-bold ${
              t.status === 'success'
                ? 'bg-green-100 text-green-900'
                : t.status === 'failed'
                  ? 'bg-red-100 text-red-900'
                  : 'bg-amber-100 text-amber-900'
            }`}
          >
            {statusWords[t.status]}
            {t.status === 'processing' ? ': waiting for the provider…' : ''}
            {t.status === 'failed' && t.direction === 'debit'
              ? `: ${formatNaira(t.amount)} is back in your wallet`
              : ''}
          </p>
          <dl className="grid grid-cols-2 gap-2" aria-label="Receipt">
            <dt>What</dt>
            <dd>{t.description}</dd>
            <dt>{t.direction === 'credit' ? 'Credited' : 'Paid'}</dt>
            <dd className="font-semibold">{formatNaira(t.amount)}</dd>
            {t.refunded !== undefined ? (
              <>
                <dt>Refunded</dt>
                <dd>{formatNaira(t.refunded)}</dd>
              </>
            ) : null}
            {t.units !== undefined ? (
              <>
                <dt>Units</dt>
                <dd data-testid="units">{t.units}</dd>
              </>
            ) : null}
            <dt>Reference</dt>
            <dd className="break-all">{t.reference}</dd>
            <dt>Date</dt>
            <dd>{formatDateTime(t.createdAt)}</dd>
          </dl>
          {t.token ? (
            <div className="flex items-center gap-2">
              <p>
                Token: <strong data-testid="token">{t.token}</strong>
              </p>
              <Copy text={t.token} />
            </div>
          ) : null}
          {t.pins?.length ? (
            <div className="flex flex-col gap-2">
              {t.pins.map((pin) => (
                <div key={pin} className="flex items-center gap-2">
                  <strong>{pin}</strong>
                  <Copy text={pin} />
                </div>
              ))}
            </div>
          ) : null}
          <Link to="/" className="text-brand underline">
            Back home
          </Link>
        </>
      ) : null}
    </Screen>
  );
}

export const Route = createFileRoute('/transactions/$id')({
  beforeLoad: requireSignIn,
  component: Transaction,
});
