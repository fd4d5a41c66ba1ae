import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useState } from 'react';
import { CallError, call } from '../api/client.ts';
import { session } from '../api/session.ts';
import { Button, ErrorNote, Field, Screen } from '../components/ui.tsx';

// Sign-in (API.md section 4): the phone, then the code sent to it by SMS.

function SignIn() {
  const { next, ref } = Route.useSearch();
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (caught) {
      setError(
        caught instanceof CallError ? caught : new CallError({ code: 'INTERNAL', message: '', status: 0 }),
      );
    } finally {
      setBusy(false);
    }
  }

  return (
    <Screen title="Sign in">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (!sent) {
            void act(async () => {
              await call('requestOtp', { phone });
              setSent(true);
            });
          } else {
            void act(async () => {
              const tokens = await call('verifyOtp', {
                phone,
                code,
                ...(ref === undefined ? {} : { referralCode: ref }),
              });
              session.set(tokens);
              await navigate({ to: next ?? '/' });
            });
          }
        }}
      >
        <Field
          label="Phone number"
          value={phone}
          onChange={setPhone}
          inputMode="tel"
          autoComplete="tel"
          hint="Your Nigerian number, like 0803 123 4567"
        />
        {sent ? (
          <Field
            label="Code"
            value={code}
            onChange={setCode}
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={6}
            hint="The 6-digit code we sent you by SMS"
          />
        ) : null}
        <ErrorNote error={error} />
        <Button type="submit" busy={busy}>
          {sent ? 'Sign in' : 'Send code'}
        </Button>
      </form>
    </Screen>
  );
}

export const Route = createFileRoute('/sign-in')({
  // `next`: where to go after (this app's own paths only); `ref`: an inviter's code from a shared link.
  validateSearch: (search: Record<string, unknown>): { next?: string; ref?: string } => ({
    ...(typeof search.next === 'string' && search.next.startsWith('/') && !search.next.startsWith('//')
      ? { next: search.next }
      : {}),
    ...(typeof search.ref === 'string' && /^[A-Za-z0-9]{1,32}$/.test(search.ref) ? { ref: search.ref } : {}),
  }),
  component: SignIn,
});
