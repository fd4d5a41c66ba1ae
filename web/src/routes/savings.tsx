import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { requireSignIn } from '../auth-guard.ts';
import { Button, ErrorNote, Field, Screen, Waiting } from '../components/ui.tsx';
import { formatDateTime, formatNaira, parseNaira } from '../format.ts';

// Savings locks (API.md section 9): create with the maturity date shown before locking; break with
// the penalty and what comes back shown before confirming.

const DAY_MS = 86_400_000;

function Savings() {
  const queries = useQueryClient();
  const locks = useQuery({ queryKey: ['locks'], queryFn: () => call('listSavingsLocks', { limit: 100 }) });
  const [amountText, setAmountText] = useState('');
  const [daysText, setDaysText] = useState('30');
  const [breaking, setBreaking] = useState<string | null>(null);
  const amount = parseNaira(amountText);
  const days = /^\d{1,3}$/.test(daysText) ? Number(daysText) : null;
  const refresh = () =>
    Promise.all([
      queries.invalidateQueries({ queryKey: ['locks'] }),
      queries.invalidateQueries({ queryKey: ['wallet'] }),
    ]);
  const create = useMutation({
    mutationFn: () => call('createSavingsLock', { amount: amount!, days: days! }),
    onSuccess: async () => {
      setAmountText('');
      await refresh();
    },
  });
  const breakLock = useMutation({
    mutationFn: (lockId: string) => call('breakSavingsLock', { lockId }),
    onSuccess: async () => {
      setBreaking(null);
      await refresh();
    },
  });
  const percent = locks.data?.breakPenaltyPercent ?? 0;
  const penaltyOf = (naira: number) => Math.floor(naira * percent) / 100;

  return (
    <Screen title="Savings">
      <form
        className="flex flex-col gap-4 rounded-xl border border-gray-300 p-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (amount !== null && days !== null) create.mutate();
        }}
      >
        <h2 className="text-lg font-semibold">Lock money away</h2>
        <Field label="Amount (₦)" value={amountText} onChange={setAmountText} inputMode="decimal" />
        <Field
          label="Days"
          value={daysText}
          onChange={setDaysText}
          inputMode="numeric"
          hint={
            days !== null
              ? `Matures on ${formatDateTime(new Date(Date.now() + days * DAY_MS).toISOString())}`
              : 'From 7 to 365 days'
          }
        />
        <ErrorNote error={create.error as CallError | null} />
        <Button type="submit" busy={create.isPending} disabled={amount === null || days === null}>
          {amount === null ? 'Lock' : `Lock ${formatNaira(amount)}`}
        </Button>
      </form>
      <h2 className="text-lg font-semibold">Your locks</h2>
      {locks.isPending ? <Waiting label="Loading your locks" /> : null}
      <ErrorNote error={(locks.error ?? breakLock.error) as CallError | null} />
      <ul className="flex flex-col gap-3">
        {locks.data?.items.map((lock) => (
          <li key={lock.id} className="rounded-xl bg-brand-light p-3">
            <p className="font-semibold">
              {formatNaira(lock.amount)} for {lock.days} days · {lock.status}
            </p>
            <p className="text-sm">Matures {formatDateTime(lock.maturesAt)}</p>
            {lock.status === 'active' && breaking !== lock.id ? (
              <Button variant="secondary" onClick={() => setBreaking(lock.id)}>
                Break early
              </Button>
            ) : null}
            {breaking === lock.id ? (
              <fieldset className="mt-2 flex flex-col gap-2">
                <legend className="sr-only">Confirm breaking the lock</legend>
                <p>
                  Breaking now keeps a {percent}% penalty of {formatNaira(penaltyOf(lock.amount))}; you get{' '}
                  {formatNaira(lock.amount - penaltyOf(lock.amount))} back.
                </p>
                <Button busy={breakLock.isPending} onClick={() => breakLock.mutate(lock.id)}>
                  Break and pay the penalty
                </Button>
                <Button variant="secondary" onClick={() => setBreaking(null)}>
                  Keep it locked
                </Button>
              </fieldset>
            ) : null}
          </li>
        ))}
      </ul>
    </Screen>
  );
}

export const Route = createFileRoute('/savings')({ beforeLoad: requireSignIn, component: Savings });
