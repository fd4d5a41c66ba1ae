import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { Button, ErrorNote, Field } from './ui.tsx';

// The first and last name, as on the NIN: Tier 2 and Tier 3 compare them with the NIN record and the
// bank account, and once Tier 2 is approved they are the verified name others see (API.md section 4).
// Used by the profile screen and, when a name is missing, by Tier 2's own form.

type Me = Output<'getMe'>;

/** The service's rule for a name (src/auth/schemas.ts): letters, spaces, hyphens, apostrophes, dots. */
const nameShape = /^\p{L}\p{M}*(?:[\p{L}\p{M}'’ .-])*$/u;
const nameMax = 60;

function nameProblem(value: string): string | undefined {
  const name = value.trim().normalize('NFC');
  if (name === '') return undefined;
  if (name.length > nameMax) return `At most ${nameMax} letters`;
  return nameShape.test(name) ? undefined : 'Letters, spaces, hyphens and apostrophes only';
}

export function NamesForm({
  me,
  submitLabel,
  onSaved,
}: {
  me: Me;
  submitLabel: string;
  onSaved?: (user: Me) => void;
}) {
  const queries = useQueryClient();
  const [firstName, setFirstName] = useState(me.firstName ?? '');
  const [lastName, setLastName] = useState(me.lastName ?? '');
  const [saved, setSaved] = useState<string | null>(null);
  const save = useMutation({
    mutationFn: () => call('updateProfile', { firstName: firstName.trim(), lastName: lastName.trim() }),
    onSuccess: (user) => {
      queries.setQueryData(['me'], user);
      setSaved(`Saved: ${user.firstName} ${user.lastName}.`);
      onSaved?.(user);
    },
  });
  const firstProblem = nameProblem(firstName);
  const lastProblem = nameProblem(lastName);
  const unchanged = firstName.trim() === (me.firstName ?? '') && lastName.trim() === (me.lastName ?? '');
  const ready =
    firstName.trim() !== '' && lastName.trim() !== '' && !firstProblem && !lastProblem && !unchanged;
  const error = save.error as CallError | null;
  return (
    <form
      className="flex flex-col gap-4"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        setSaved(null);
        if (ready) save.mutate();
      }}
    >
      <p className="text-sm text-gray-700">
        Write your names exactly as they are on your NIN: we check them against it.
      </p>
      <Field
        label="First name"
        value={firstName}
        onChange={setFirstName}
        autoComplete="given-name"
        maxLength={nameMax}
        error={firstProblem}
      />
      <Field
        label="Last name"
        value={lastName}
        onChange={setLastName}
        autoComplete="family-name"
        maxLength={nameMax}
        hint="Your surname"
        error={lastProblem}
      />
      <ErrorNote
        error={error}
        message={
          error?.code === 'CONFLICT'
            ? 'Your name was verified with your NIN, so it can no longer be changed.'
            : undefined
        }
      />
      <Button type="submit" busy={save.isPending} disabled={!ready}>
        {submitLabel}
      </Button>
      <p role="status" aria-live="polite" className="text-sm text-green-900">
        {saved}
      </p>
    </form>
  );
}
