import { useQuery } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { useEffect } from 'react';
import { call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNaira } from '../format.ts';
import { keep, kept } from '../offline-cache.ts';

// Home: the balances and the quick actions. Offline, the last balance seen, marked with its time.

type Wallet = Output<'getWallet'>;

function Home() {
  const navigate = useNavigate();
  const me = useQuery({ queryKey: ['me'], queryFn: () => call('getMe', {}) });
  const wallet = useQuery({ queryKey: ['wallet'], queryFn: () => call('getWallet', {}) });
  useEffect(() => {
    if (wallet.data) keep('wallet', wallet.data);
  }, [wallet.data]);
  useEffect(() => {
    if (me.data && !me.data.hasPin) void navigate({ to: '/pin' });
  }, [me.data, navigate]);
  const last = wallet.data ? null : kept<Wallet>('wallet');
  const shown = wallet.data ?? last?.value;

  return (
    <Screen title="Your wallet">
      {wallet.isPending && !shown ? <Waiting label="Loading your balance" /> : null}
      {last && wallet.isError ? (
        <p role="status" className="rounded-lg bg-amber-100 p-3 text-amber-900">
          Offline: this is your balance as of {formatDateTime(last.at)}.
        </p>
      ) : (
        <ErrorNote error={wallet.error as never} />
      )}
      {shown ? (
        <dl className="grid grid-cols-2 gap-3">
          <div className="col-span-2 rounded-xl bg-brand p-4 text-white">
            <dt>Balance</dt>
            <dd className="text-3xl font-bold" data-testid="balance">
              {formatNaira(shown.balance)}
            </dd>
          </div>
          <div className="rounded-xl bg-brand-light p-3">
            <dt>Locked savings</dt>
            <dd className="font-semibold">{formatNaira(shown.lockedSavings)}</dd>
          </div>
          <div className="rounded-xl bg-brand-light p-3">
            <dt>Locked bonus</dt>
            <dd className="font-semibold">{formatNaira(shown.lockedBonus)}</dd>
          </div>
        </dl>
      ) : null}
      <nav aria-label="Quick actions" className="grid grid-cols-2 gap-3">
        <Link to="/buy/airtime" className="rounded-lg border border-brand p-3 text-center text-brand">
          Buy airtime
        </Link>
        <Link to="/fund" className="rounded-lg border border-brand p-3 text-center text-brand">
          Fund wallet
        </Link>
        <Link to="/transfer" className="rounded-lg border border-brand p-3 text-center text-brand">
          Send money
        </Link>
        <Link to="/savings" className="rounded-lg border border-brand p-3 text-center text-brand">
          Savings
        </Link>
        <Link to="/rewards" className="rounded-lg border border-brand p-3 text-center text-brand">
          Rewards
        </Link>
        <Link to="/verify" className="rounded-lg border border-brand p-3 text-center text-brand">
          Verify identity
        </Link>
        {me.data?.roles.includes('admin') ? (
          <Link to="/admin" className="rounded-lg border border-brand p-3 text-center text-brand">
            Administration
          </Link>
        ) : null}
        <Link to="/transactions" className="rounded-lg border border-brand p-3 text-center text-brand">
          History
        </Link>
      </nav>
    </Screen>
  );
}

export const Route = createFileRoute('/')({ beforeLoad: requireSignIn, component: Home });
