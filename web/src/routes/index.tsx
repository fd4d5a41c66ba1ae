import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { BadgeCheck, Eye, EyeOff, Gift, PiggyBank, Plus, Send, ShieldCheck, Trophy } from 'lucide-react';
import { type ReactNode, useEffect, useState } from 'react';
import type { Output } from '../api/client.ts';
import { useMe, useWallet } from '../api/queries.ts';
import { requireSignIn } from '../auth-guard.ts';
import { FrozenNotice } from '../components/frozen-notice.tsx';
import { HeldBalance } from '../components/held-balance.tsx';
import { RecentTransactions } from '../components/recent-transactions.tsx';
import { BillTiles } from '../components/tiles.tsx';
import { ErrorNote, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNairaNumber } from '../format.ts';
import { keep, kept } from '../offline-cache.ts';

// Home: the balances (hidden on request, remembered on this phone), money held over the tier's maximum
// and what releases it, Fund and Send, a tile for every bill, and the way to the rest. Offline, the
// last balance seen, marked with its time.

type Wallet = Output<'getWallet'>;

const hiddenKey = 'billrail.balanceHidden';

/** Whether the person hid their balances, kept on this phone across reloads. */
function useBalanceHidden(): [boolean, (hidden: boolean) => void] {
  const [hidden, setHidden] = useState(() => localStorage.getItem(hiddenKey) === '1');
  const remember = (next: boolean) => {
    if (next) localStorage.setItem(hiddenKey, '1');
    else localStorage.removeItem(hiddenKey);
    setHidden(next);
  };
  return [hidden, remember];
}

function Home() {
  const navigate = useNavigate();
  const me = useMe();
  const wallet = useWallet();
  const [hidden, setHidden] = useBalanceHidden();
  useEffect(() => {
    if (wallet.data) keep('wallet', wallet.data);
  }, [wallet.data]);
  useEffect(() => {
    if (me.data && !me.data.hasPin) void navigate({ to: '/pin' });
  }, [me.data, navigate]);
  const last = wallet.data ? null : kept<Wallet>('wallet');
  const shown = wallet.data ?? last?.value;
  const amount = (naira: number) => (hidden ? <HiddenAmount /> : formatNairaNumber(naira));

  return (
    <Screen title="Your wallet">
      <FrozenNotice />
      {wallet.isPending && !shown ? <Waiting label="Loading your balance" /> : null}
      {last && wallet.isError ? (
        <p role="status" className="rounded-lg bg-amber-100 p-3 text-amber-900">
          Offline: this is your balance as of {formatDateTime(last.at)}.
        </p>
      ) : (
        <ErrorNote error={wallet.error as never} />
      )}
      {shown ? (
        <>
          <div className="flex flex-col gap-3 rounded-xl bg-brand p-4 text-white">
            <div className="flex items-center justify-between">
              <p>Balance</p>
              <button
                type="button"
                aria-pressed={hidden}
                onClick={() => setHidden(!hidden)}
                className="flex items-center gap-1 rounded-lg px-2 py-1 text-sm"
              >
                {hidden ? <Eye aria-hidden="true" size={18} /> : <EyeOff aria-hidden="true" size={18} />}
                {hidden ? 'Show' : 'Hide'}
                <span className="sr-only"> balance</span>
              </button>
            </div>
            <p className="whitespace-nowrap text-3xl font-bold" data-testid="balance">
              {amount(shown.balance)}
            </p>
            <div className="grid grid-cols-2 gap-2">
              <QuickAction to="/fund" icon={<Plus aria-hidden="true" size={20} />}>
                Fund wallet
              </QuickAction>
              <QuickAction to="/transfer" icon={<Send aria-hidden="true" size={20} />}>
                Send money
              </QuickAction>
            </div>
          </div>
          <div className="grid grid-cols-2 gap-3">
            <Link to="/savings" className="flex flex-col gap-1 rounded-xl bg-brand-light p-3 text-gray-900">
              <span className="flex items-center gap-1">
                <PiggyBank aria-hidden="true" size={18} className="text-brand" />
                Locked savings
              </span>
              <span className="whitespace-nowrap font-semibold">{amount(shown.lockedSavings)}</span>
            </Link>
            <div className="flex flex-col gap-1 rounded-xl bg-brand-light p-3 text-gray-900">
              <span className="flex items-center gap-1">
                <Gift aria-hidden="true" size={18} className="text-brand" />
                Locked bonus
              </span>
              <span className="whitespace-nowrap font-semibold">{amount(shown.lockedBonus)}</span>
            </div>
          </div>
          <LockedBonusExplained />
          {/* Hidden with the balances; a balance kept from before API.md 17.2 has none. */}
          {hidden || !shown.heldBalance ? null : <HeldBalance heldBalance={shown.heldBalance} />}
        </>
      ) : null}
      <BillTiles />
      <RecentTransactions />
      <nav aria-label="More" className="flex flex-col">
        <MoreLink to="/savings" icon={<PiggyBank aria-hidden="true" size={20} />}>
          Savings
        </MoreLink>
        <MoreLink to="/rewards" icon={<Trophy aria-hidden="true" size={20} />}>
          Rewards
        </MoreLink>
        <MoreLink to="/verify" icon={<BadgeCheck aria-hidden="true" size={20} />}>
          Verify identity
        </MoreLink>
        {me.data?.roles.includes('admin') ? (
          <MoreLink to="/admin" icon={<ShieldCheck aria-hidden="true" size={20} />}>
            Administration
          </MoreLink>
        ) : null}
      </nav>
    </Screen>
  );
}

/** An amount the person hid: dots to the eye, "hidden" to a screen reader. */
function HiddenAmount() {
  return (
    <>
      <span aria-hidden="true">₦•••••</span>
      <span className="sr-only">hidden</span>
    </>
  );
}

/** What a locked bonus is: the referral bonus, which nothing ever unlocks (API.md section 9). */
function LockedBonusExplained() {
  return (
    <details className="rounded-xl border border-gray-300 p-3 text-sm">
      <summary className="cursor-pointer font-medium">What is a locked bonus?</summary>
      <p className="mt-2">
        It is the bonus you earn each time a friend you invited verifies their identity. It stays locked for
        good: it cannot be spent, sent or withdrawn, and it is not part of your balance.{' '}
        <Link to="/rewards" className="text-brand underline">
          Invite friends in Rewards
        </Link>
        .
      </p>
    </details>
  );
}

function QuickAction({
  to,
  icon,
  children,
}: {
  to: '/fund' | '/transfer';
  icon: ReactNode;
  children: string;
}) {
  return (
    <Link
      to={to}
      className="flex items-center justify-center gap-1.5 rounded-lg bg-white px-2 py-2 font-semibold whitespace-nowrap text-brand"
    >
      {icon}
      {children}
    </Link>
  );
}

function MoreLink({
  to,
  icon,
  children,
}: {
  to: '/savings' | '/rewards' | '/verify' | '/admin';
  icon: ReactNode;
  children: string;
}) {
  return (
    <Link to={to} className="flex items-center gap-3 border-b border-gray-300 py-3 text-gray-900">
      <span className="text-brand">{icon}</span>
      {children}
    </Link>
  );
}

export const Route = createFileRoute('/')({ beforeLoad: requireSignIn, component: Home });
