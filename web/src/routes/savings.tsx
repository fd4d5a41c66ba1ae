import { useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { CircleCheck, Lock, LockOpen, PiggyBank } from 'lucide-react';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Field, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNairaNumber, parseNaira } from '../format.ts';
import { type Payment, usePayment } from '../payments/use-payment.ts';

// Savings locks (API.md section 9). Locking and breaking are each confirmed on screen first (the
// maturity date, or the penalty and what comes back) and said after; a lock that has ended reads as
// matured or broken, with what came back and the penalty kept.

type SavingsLock = Output<'listSavingsLocks'>['items'][number];

const DAY_MS = 86_400_000;
const locksKey = ['locks'] as const;

const statusWords: Record<SavingsLock['status'], string> = {
  active: 'Locked',
  matured: 'Matured',
  broken: 'Broken early',
};

/** The penalty breaking `naira` keeps now, rounded down to the kobo as the service rounds it. */
function penaltyOf(naira: number, percent: number): number {
  return Math.floor((Math.round(naira * 100) * percent) / 100) / 100;
}

/** What the person is told after a lock or a break went through. */
function Done({ children }: { children: string | null }) {
  return (
    <p
      role="status"
      aria-live="polite"
      className={children ? 'rounded-lg bg-green-100 p-3 text-green-900' : ''}
    >
      {children ? (
        <CircleCheck aria-hidden="true" size={18} className="mr-1 inline align-text-bottom" />
      ) : null}
      {children}
    </p>
  );
}

/** Said when an answer was lost after Confirm: it may have gone through, and trying again is safe. */
function LostAnswer({
  payment,
  what,
}: {
  payment: Pick<Payment<never>, 'lost' | 'busy' | 'retry'>;
  what: string;
}) {
  if (!payment.lost) return null;
  return (
    <div className="flex flex-col gap-2 rounded-lg bg-amber-100 p-3 text-amber-900">
      <p>We did not hear back, so {what} may have gone through. Check again: it will not be done twice.</p>
      <Button variant="secondary" busy={payment.busy} onClick={payment.retry}>
        Check again
      </Button>
    </div>
  );
}

function Savings() {
  const queries = useQueryClient();
  const locks = useQuery({ queryKey: locksKey, queryFn: () => call('listSavingsLocks', { limit: 100 }) });
  const [amountText, setAmountText] = useState('');
  const [daysText, setDaysText] = useState('30');
  const [done, setDone] = useState<string | null>(null);
  const amount = parseNaira(amountText);
  const days = /^\d{1,4}$/.test(daysText) ? Number(daysText) : null;
  const percent = locks.data?.breakPenaltyPercent ?? 0;
  const refreshLocks = () => queries.invalidateQueries({ queryKey: locksKey });

  const lock = usePayment('createSavingsLock', {
    onDone: async (made) => {
      setAmountText('');
      setDone(
        `${formatNairaNumber(made.amount)} is locked for ${made.days} days. It comes back to your wallet on ${formatDateTime(made.maturesAt)}.`,
      );
      lock.close();
      await refreshLocks();
    },
  });
  const maturesAt = days === null ? null : new Date(Date.now() + days * DAY_MS).toISOString();

  return (
    <Screen title="Savings">
      <Done>{done}</Done>
      <form
        className="flex flex-col gap-4 rounded-xl border border-gray-300 p-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (amount !== null && days !== null) {
            setDone(null);
            lock.open();
          }
        }}
      >
        <h2 className="flex items-center gap-2 text-lg font-semibold">
          <PiggyBank aria-hidden="true" size={22} className="text-brand" />
          Lock money away
        </h2>
        <p className="text-sm text-gray-700">
          Locked money cannot be spent until the day it comes back. No interest is paid.
          {locks.data ? ` Breaking a lock early keeps ${percent}% of it as a penalty.` : null}
        </p>
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={(value) => {
            setAmountText(value);
            lock.close();
          }}
          inputMode="decimal"
        />
        <Field
          label="Days"
          value={daysText}
          onChange={(value) => {
            setDaysText(value.replace(/\D/g, ''));
            lock.close();
          }}
          inputMode="numeric"
          maxLength={4}
          hint={maturesAt !== null ? `Comes back on ${formatDateTime(maturesAt)}` : 'From 7 to 365 days'}
        />
        {lock.confirming && amount !== null && days !== null && maturesAt !== null ? (
          <fieldset className="flex flex-col gap-3 rounded-lg bg-brand-light p-3 text-gray-900">
            <legend className="sr-only">Confirm the lock</legend>
            <p data-testid="lock-preview">
              Lock <strong className="whitespace-nowrap">{formatNairaNumber(amount)}</strong> for {days} days?
              It comes back to your wallet on <strong>{formatDateTime(maturesAt)}</strong>. Breaking it before
              then keeps{' '}
              <span className="whitespace-nowrap">{formatNairaNumber(penaltyOf(amount, percent))}</span>.
            </p>
            <ErrorNote error={lock.lost ? null : lock.error} />
            <LostAnswer payment={lock} what="the lock" />
            {lock.lost ? null : (
              <Button busy={lock.busy} onClick={() => lock.pay({ amount, days })}>
                Lock {formatNairaNumber(amount)}
              </Button>
            )}
            <Button variant="secondary" onClick={lock.close}>
              Change
            </Button>
          </fieldset>
        ) : (
          <Button type="submit" disabled={amount === null || days === null}>
            Continue
          </Button>
        )}
      </form>
      <h2 className="text-lg font-semibold">Your locks</h2>
      {locks.isPending ? <Waiting label="Loading your locks" /> : null}
      <ErrorNote error={locks.error as CallError | null} />
      {locks.data?.items.length === 0 ? <p>No locks yet.</p> : null}
      <ul className="flex flex-col gap-3" aria-label="Your locks">
        {locks.data?.items.map((item) => (
          <LockRow
            key={item.id}
            lock={item}
            percent={percent}
            onBroken={async (message) => {
              setDone(message);
              await refreshLocks();
            }}
          />
        ))}
      </ul>
    </Screen>
  );
}

/** One lock: what it is and, while active, breaking it with the penalty confirmed first. */
function LockRow({
  lock,
  percent,
  onBroken,
}: {
  lock: SavingsLock;
  percent: number;
  onBroken: (message: string) => Promise<void>;
}) {
  const breaking = usePayment('breakSavingsLock', {
    onDone: async ({ refunded, penalty }) => {
      breaking.close();
      await onBroken(
        `Lock broken: ${formatNairaNumber(refunded)} is back in your wallet; ${formatNairaNumber(penalty)} was kept as the penalty.`,
      );
    },
  });
  const penalty = penaltyOf(lock.amount, percent);
  const ended = lock.closedAt === null ? '' : formatDateTime(lock.closedAt);

  return (
    <li
      className={`flex flex-col gap-2 rounded-xl p-3 text-gray-900 ${
        lock.status === 'active' ? 'bg-brand-light' : 'bg-gray-100'
      }`}
    >
      <p className="flex items-center justify-between gap-2">
        <span className="flex items-center gap-2 font-semibold">
          {lock.status === 'active' ? (
            <Lock aria-hidden="true" size={18} className="text-brand" />
          ) : (
            <LockOpen aria-hidden="true" size={18} className="text-gray-700" />
          )}
          <span>
            <span className="whitespace-nowrap">{formatNairaNumber(lock.amount)}</span> for {lock.days} days
          </span>
        </span>
        <span className="rounded-full border border-gray-400 px-2 text-sm whitespace-nowrap">
          {statusWords[lock.status]}
        </span>
      </p>
      {lock.status === 'active' ? (
        <p className="text-sm">Comes back on {formatDateTime(lock.maturesAt)}</p>
      ) : null}
      {lock.status === 'matured' ? (
        <p className="text-sm">
          Matured on {ended}: all {formatNairaNumber(lock.amount)} came back to your wallet.
        </p>
      ) : null}
      {lock.status === 'broken' ? (
        <p className="text-sm">
          Broken early on {ended}: {formatNairaNumber(lock.amount - lock.penalty)} came back to your wallet
          and {formatNairaNumber(lock.penalty)} was kept as the penalty.
        </p>
      ) : null}
      {lock.status === 'active' && !breaking.confirming ? (
        <Button variant="secondary" onClick={breaking.open}>
          Break early
        </Button>
      ) : null}
      {lock.status === 'active' && breaking.confirming ? (
        <fieldset className="flex flex-col gap-2">
          <legend className="sr-only">Confirm breaking the lock</legend>
          <p>
            Breaking now keeps a {percent}% penalty of <strong>{formatNairaNumber(penalty)}</strong>; you get{' '}
            <strong>{formatNairaNumber(lock.amount - penalty)}</strong> back.
          </p>
          <ErrorNote error={breaking.lost ? null : breaking.error} />
          <LostAnswer payment={breaking} what="the break" />
          {breaking.lost ? null : (
            <Button busy={breaking.busy} onClick={() => breaking.pay({ lockId: lock.id })}>
              Break and pay the penalty
            </Button>
          )}
          <Button variant="secondary" onClick={breaking.close}>
            Keep it locked
          </Button>
        </fieldset>
      ) : null}
    </li>
  );
}

export const Route = createFileRoute('/savings')({ beforeLoad: requireSignIn, component: Savings });
