import { useMutation, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { Gauge } from 'lucide-react';
import { type FormEvent, useState } from 'react';
import { type CallError, call } from '../api/client.ts';
import { queryKeys, useLimits } from '../api/queries.ts';
import { formatDateTime, formatNairaNumber, parseNaira } from '../format.ts';
import { describeLimitChange, describePendingLimit, ownLimitBinds } from '../payments/limits.ts';
import { PinStep, pinComplete } from './pin-step.tsx';
import { Button, ErrorNote, Field, Waiting } from './ui.tsx';

// Settings' "Limits" (API.md 17.2): the tier's daily limit, what is used and left of today's, the
// maximum balance and anything held over it, when the day starts again (Lagos time), the person's own
// limit, and a form to change it with the PIN: lowering takes effect at once, raising (or removing
// it) from the next Lagos day, which the form says before the PIN is asked.

const naira = (amount: number | null) => (amount === null ? 'No limit' : formatNairaNumber(amount));

export function AccountLimits() {
  const limits = useLimits();
  const data = limits.data;
  const pending = data === undefined ? null : describePendingLimit(data);
  return (
    <section aria-labelledby="limits-title" id="limits" className="flex flex-col gap-3">
      <h2 id="limits-title" className="flex items-center gap-2 text-lg font-semibold">
        <Gauge aria-hidden="true" size={20} className="text-brand" />
        Limits
      </h2>
      {limits.isPending ? <Waiting label="Loading your limits" /> : null}
      <ErrorNote error={limits.error as CallError | null} />
      {data ? (
        <>
          <p className="text-sm text-gray-700">
            The Central Bank of Nigeria limits what a wallet may send or spend in a day and hold, by how far
            its owner is verified. You are at Tier {data.tier}.
          </p>
          <dl className="grid grid-cols-[1fr_auto] gap-x-3 gap-y-1" data-testid="limits">
            <dt>Daily limit ({ownLimitBinds(data) ? 'your own' : `Tier ${data.tier}`})</dt>
            <dd className="text-right font-semibold whitespace-nowrap">{naira(data.dailyDebitLimit)}</dd>
            <dt>Used today</dt>
            <dd className="text-right font-semibold whitespace-nowrap">
              {formatNairaNumber(data.dailyDebitUsed)}
            </dd>
            <dt>Left today</dt>
            <dd className="text-right font-semibold whitespace-nowrap">{naira(data.dailyDebitRemaining)}</dd>
            <dt>Maximum balance</dt>
            <dd className="text-right font-semibold whitespace-nowrap">
              {data.maxBalance === null ? 'No maximum' : formatNairaNumber(data.maxBalance)}
            </dd>
            {data.heldBalance > 0 ? (
              <>
                <dt>Held over the maximum</dt>
                <dd className="text-right font-semibold whitespace-nowrap">
                  {formatNairaNumber(data.heldBalance)}
                </dd>
              </>
            ) : null}
          </dl>
          {pending !== null ? (
            <p className="rounded-lg bg-brand-light p-3" data-testid="pending-limit">
              {pending}
            </p>
          ) : null}
          <p className="text-sm text-gray-700" data-testid="day-resets">
            Today’s limit starts again on {formatDateTime(data.dayResetsAt)} (Lagos time). Savings locks do
            not count; a refund gives its amount back to today’s limit.
          </p>
          {data.nextTier !== undefined ? (
            <p className="text-sm">
              Tier {data.nextTier.tier} raises the daily limit to {naira(data.nextTier.dailyDebitLimit)}
              {data.nextTier.maxBalance === null
                ? ' and has no maximum balance. '
                : ` and the maximum balance to ${formatNairaNumber(data.nextTier.maxBalance)}. `}
              <Link to="/verify" className="font-semibold text-brand underline">
                Verify for Tier {data.nextTier.tier}
              </Link>
            </p>
          ) : null}
          <OwnLimitForm />
        </>
      ) : null}
    </section>
  );
}

/** The person's own daily limit: a lower one at once, a higher one (or none) from tomorrow, with the PIN. */
function OwnLimitForm() {
  const queries = useQueryClient();
  const limits = useLimits();
  const [amountText, setAmountText] = useState('');
  const [pin, setPin] = useState('');
  const [done, setDone] = useState<string | null>(null);
  // Going back to the tier's limit is its own choice, never an empty field.
  const [removing, setRemoving] = useState(false);
  const data = limits.data;
  const typed = amountText.trim() !== '';
  const amount = removing ? null : parseNaira(amountText);
  const typo = !removing && typed && amount === null;
  const change =
    data === undefined || typo || (!removing && !typed) ? null : describeLimitChange(data, amount);
  const refusal = change !== null && 'refusal' in change ? change.refusal : undefined;
  const words = change !== null && 'words' in change ? change : null;
  const save = useMutation({
    mutationFn: (input: { amount: number | null; pin: string }) => call('setPersonalDailyLimit', input),
    onSuccess: () => {
      setDone(words?.words ?? 'Saved.');
      setAmountText('');
      setRemoving(false);
      return queries.invalidateQueries({ queryKey: queryKeys.limits });
    },
  });
  if (data === undefined) return null;
  const ready = words !== null && pinComplete(pin);
  const edited = () => {
    setDone(null);
    save.reset();
  };

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!ready) return;
    setDone(null);
    save.mutate({ amount, pin });
    setPin('');
  }

  return (
    <form className="flex flex-col gap-3" onSubmit={submit} noValidate aria-labelledby="own-limit-title">
      <h3 id="own-limit-title" className="font-semibold">
        {data.personalDailyLimit === null ? 'Set your own daily limit' : 'Change your own daily limit'}
      </h3>
      <p className="text-sm text-gray-700">
        A lower limit protects you if your phone or PIN is ever used by someone else. Lowering it takes effect
        at once; raising it takes effect tomorrow.
      </p>
      {removing ? null : (
        <Field
          label="Your daily limit (₦)"
          value={amountText}
          onChange={(value) => {
            setAmountText(value);
            edited();
          }}
          inputMode="decimal"
          hint={
            data.personalDailyLimit === null
              ? `Below your tier’s ${naira(data.dailyDebitLimit)}.`
              : `Yours is ${formatNairaNumber(data.personalDailyLimit)}.`
          }
          error={typo ? 'Type an amount such as 20,000' : refusal}
        />
      )}
      {words !== null ? (
        <p
          className={`rounded-lg p-3 ${words.raise ? 'bg-amber-100 text-amber-900' : 'bg-brand-light'}`}
          data-testid="limit-change"
        >
          {words.words}
        </p>
      ) : null}
      {words !== null ? <PinStep pin={pin} onPin={setPin} /> : null}
      <ErrorNote error={save.error as CallError | null} />
      {words !== null ? (
        <Button type="submit" busy={save.isPending} disabled={!ready}>
          {removing ? 'Use my tier’s limit' : 'Save my limit'}
        </Button>
      ) : null}
      {data.personalDailyLimit !== null || removing ? (
        <Button
          variant="secondary"
          onClick={() => {
            setRemoving(!removing);
            setAmountText('');
            edited();
          }}
        >
          {removing ? 'Keep a limit of my own' : 'Go back to my tier’s limit'}
        </Button>
      ) : null}
      <p role="status" aria-live="polite" className="text-green-900" data-testid="limit-saved">
        {done}
      </p>
    </form>
  );
}
