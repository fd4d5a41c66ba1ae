import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { shownPhone } from '../format.ts';
import { NamesForm } from './kyc-names-form.tsx';
import { describeKycRefusal, describeTierReason } from './kyc-refusals.tsx';
import { Button, ErrorNote, Field } from './ui.tsx';

// Tier 2 (API.md section 7): the NIN, whose record must carry the profile's name and, where it has
// one, this account's phone. The service compares names the person has given, so a missing first or
// last name is asked for here first; and the phone is the account's own (nothing else is accepted),
// so it is shown, not asked for.

type Me = Output<'getMe'>;

export function Tier2Form({ me, onSettled }: { me: Me; onSettled: () => void }) {
  const [nin, setNin] = useState('');
  const [changingName, setChangingName] = useState(false);
  const submit = useMutation({
    mutationFn: () => call('submitKycTier2', { nin, phone: me.phone }),
    onSettled,
  });
  const namesMissing = !me.firstName || !me.lastName;
  const error = submit.error as CallError | null;

  if (namesMissing || changingName) {
    return (
      <section aria-label="Your name" className="flex flex-col gap-3">
        <p className="font-semibold">
          {namesMissing ? 'First, your name as it is on your NIN' : 'Your name as it is on your NIN'}
        </p>
        <NamesForm
          me={me}
          submitLabel={namesMissing ? 'Save and continue' : 'Save name'}
          onSaved={() => setChangingName(false)}
        />
        {changingName ? (
          <Button variant="secondary" onClick={() => setChangingName(false)}>
            Keep my name
          </Button>
        ) : null}
      </section>
    );
  }

  return (
    <form
      aria-label="Your NIN"
      className="flex flex-col gap-4"
      onSubmit={(event) => {
        event.preventDefault();
        submit.mutate();
      }}
    >
      <p>
        We check that your NIN record carries your name,{' '}
        <strong data-testid="tier2-name">
          {me.firstName} {me.lastName}
        </strong>
        , and your phone number, <strong>{shownPhone(me.phone)}</strong>.
      </p>
      <button type="button" className="self-start text-brand underline" onClick={() => setChangingName(true)}>
        Change my name
      </button>
      <Field
        label="NIN"
        value={nin}
        onChange={(typed) => setNin(typed.replace(/\D/g, ''))}
        inputMode="numeric"
        maxLength={11}
        autoComplete="off"
        hint="The 11 digits on your NIN slip or card. Dial *346# to get it."
      />
      <ErrorNote error={error} message={error ? describeKycRefusal(error) : undefined} />
      {/* Heard, not seen: the tier's card shows the same reason just above this form (TierLadder). */}
      <p role="status" aria-live="polite" className="sr-only" data-testid="tier2-outcome">
        {submit.data?.status === 'rejected'
          ? describeTierReason(2, submit.data.reason, shownPhone(me.phone))
          : null}
      </p>
      <Button type="submit" busy={submit.isPending} disabled={!/^\d{11}$/.test(nin)}>
        Submit NIN
      </Button>
    </form>
  );
}
