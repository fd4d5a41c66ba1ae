import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link } from '@tanstack/react-router';
import { UserX } from 'lucide-react';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { queryKeys, useMe, useWallet } from '../api/queries.ts';
import { closingSteps } from '../closing-reasons.ts';
import { formatDateTime } from '../format.ts';
import { PinStep, pinComplete } from './pin-step.tsx';
import { Button, ErrorNote } from './ui.tsx';

// Settings' "Close my account" (API.md 17.3): what happens is said first, and what stops it now
// (getAccountDeletion's reasons) before the PIN is asked, each as a thing to do (closing-reasons.ts);
// a request the service refuses (409 CONFLICT) shows its own reasons the same way. Once asked, the day
// it takes effect and a way to cancel until then, as the service says (on any device).

type Deletion = Output<'getAccountDeletion'>;
const deletionKey = ['account-deletion'] as const;

export function AccountClosure() {
  const queries = useQueryClient();
  const me = useMe();
  const wallet = useWallet();
  const [asking, setAsking] = useState(false);
  const [pin, setPin] = useState('');
  const [cancelled, setCancelled] = useState(false);
  const deletion = useQuery({ queryKey: deletionKey, queryFn: () => call('getAccountDeletion', {}) });
  const request = useMutation({
    mutationFn: (entered: string) => call('requestAccountDeletion', { pin: entered }),
    onSuccess: ({ effectiveAt }) => {
      queries.setQueryData<Deletion>(deletionKey, (was) => ({
        reasons: [],
        ...was,
        pending: { requestedAt: new Date().toISOString(), effectiveAt },
      }));
      setAsking(false);
    },
    // The reasons name amounts: the balances they are about are read again, and the reasons too.
    onError: (error: CallError) => {
      if (error.code !== 'CONFLICT') return;
      void queries.invalidateQueries({ queryKey: queryKeys.wallet });
      void queries.invalidateQueries({ queryKey: deletionKey });
    },
  });
  const cancel = useMutation({
    mutationFn: () => call('cancelAccountDeletion', {}),
    onSuccess: () => {
      setCancelled(true);
      request.reset();
      return queries.invalidateQueries({ queryKey: deletionKey });
    },
    // Nothing to cancel any more (cancelled elsewhere, or its time came): read what is true now.
    onError: () => queries.invalidateQueries({ queryKey: deletionKey }),
  });
  const refusal = request.error as CallError | null;
  const refusedFor =
    refusal?.code === 'CONFLICT' && Array.isArray(refusal.details?.reasons)
      ? refusal.details.reasons.map(String)
      : null;
  const reasons = refusedFor ?? deletion.data?.reasons ?? [];
  const steps = closingSteps(reasons, wallet.data, me.data?.kycTier);
  const closing = deletion.data?.pending ?? null;

  return (
    <section aria-labelledby="closing-title" className="flex flex-col gap-3">
      <h2 id="closing-title" className="flex items-center gap-2 text-lg font-semibold">
        <UserX aria-hidden="true" size={20} className="text-brand" />
        Close my account
      </h2>
      {closing !== null ? (
        <div
          role="status"
          className="flex flex-col gap-3 rounded-lg bg-amber-100 p-3 text-amber-900"
          data-testid="closing"
        >
          <p className="font-semibold">Your account closes on {formatDateTime(closing.effectiveAt)}.</p>
          <p>Until then you can use it as before, and change your mind.</p>
          <ErrorNote error={cancel.error as CallError | null} />
          <Button variant="secondary" busy={cancel.isPending} onClick={() => cancel.mutate()}>
            Keep my account open
          </Button>
        </div>
      ) : (
        <>
          <p className="text-sm text-gray-700">
            Closing is not at once: you get a few days to change your mind, and we show the date. Then you are
            signed out everywhere; your saved numbers and schedules are deleted; your name, email and phone
            are removed, so the phone number and NIN can be used for a new account. The law makes us keep the
            records of your money and your verification for 5 years, under a code instead of your name. First,
            your wallet must be empty and nothing unfinished.
          </p>
          {cancelled ? (
            <p role="status" className="text-green-900">
              Your account stays open.
            </p>
          ) : null}
          <ErrorNote error={deletion.error as CallError | null} />
          {steps.length > 0 ? (
            <div
              role={refusedFor !== null ? 'alert' : 'status'}
              className="flex flex-col gap-2 rounded-lg bg-red-100 p-3 text-red-900"
              data-testid="closing-steps"
            >
              <p className="font-semibold">Before your account can close:</p>
              <ul className="flex list-disc flex-col gap-2 pl-5">
                {steps.map((step) => (
                  <li key={step.reason} data-reason={step.reason}>
                    {step.text}
                    {step.link !== undefined ? (
                      <>
                        {' '}
                        <Link to={step.link.to} className="font-semibold underline">
                          {step.link.label}
                        </Link>
                      </>
                    ) : null}
                  </li>
                ))}
              </ul>
            </div>
          ) : (
            <ErrorNote error={refusal} />
          )}
          {asking ? (
            <form
              className="flex flex-col gap-3"
              aria-labelledby="closing-title"
              onSubmit={(event) => {
                event.preventDefault();
                if (!pinComplete(pin)) return;
                setCancelled(false);
                request.mutate(pin);
                setPin('');
              }}
            >
              <PinStep pin={pin} onPin={setPin} />
              <Button type="submit" busy={request.isPending} disabled={!pinComplete(pin)}>
                Close my account
              </Button>
              <Button
                variant="secondary"
                onClick={() => {
                  setAsking(false);
                  request.reset();
                }}
              >
                Not now
              </Button>
            </form>
          ) : (
            <Button variant="secondary" onClick={() => setAsking(true)}>
              Close my account…
            </Button>
          )}
        </>
      )}
    </section>
  );
}
