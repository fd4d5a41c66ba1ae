import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call } from '../../api/client.ts';
import { describeCodeRefusal, describeError } from '../../api/errors.ts';
import { useMe } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import {
  type CodeSent,
  describeWait,
  ResendCodeButton,
  requestCode,
  useCodeAction,
  useSecondsUntil,
} from '../../components/code-request.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { isAppPath } from '../../paths.ts';
import { NewPinFields, newPinReady } from './-new-pin-fields.tsx';

// Changing the transaction PIN, or replacing a forgotten or locked one (API.md section 4): a code
// sent by SMS to the person's own phone (requestOtp), then the code and the new PIN typed twice
// (setTransactionPin {pin, otpCode}). The code proves the phone is in their hand, so the old PIN is
// not asked for, and a new PIN also lifts a lock. Settings links here as "Change PIN", and every
// PIN prompt as "Forgot PIN?" with `next` (where to go back to, this app's paths only).

/** +2348031234567 as a person writes it: 0803 123 4567. */
const localPhone = (e164: string): string => {
  const local = `0${e164.slice(4)}`;
  return `${local.slice(0, 4)} ${local.slice(4, 7)} ${local.slice(7)}`;
};

function ChangePin() {
  const { next } = Route.useSearch();
  const me = useMe();
  const [sent, setSent] = useState<CodeSent | null>(null);
  const [resendAt, setResendAt] = useState<number | null>(null);
  const resendSeconds = useSecondsUntil(resendAt);
  const [code, setCode] = useState('');
  const [pin, setPin] = useState('');
  const [again, setAgain] = useState('');
  /** One Idempotency-Key per code and PIN as typed: a retry after a lost answer is the same change. */
  const [changeKey, setChangeKey] = useState(() => crypto.randomUUID());
  const { busy, error, notice, setNotice, act } = useCodeAction();
  const [changed, setChanged] = useState(false);
  const typed = (set: (value: string) => void) => (value: string) => {
    set(value);
    setChangeKey(crypto.randomUUID());
  };

  function sendCode(phone: string) {
    void act(async () => {
      const answer = await requestCode(phone);
      setSent(answer);
      setResendAt(Date.now() + answer.waitSeconds * 1000);
      setNotice(
        answer.justNow
          ? 'We sent you a code by SMS. It works for 5 minutes.'
          : // Signing in sends a code too: the one that came may be that one, already used.
            `A code went to your phone less than a minute ago (signing in sends one too). If it is one you have not used, enter it below; otherwise ask for a new one in ${describeWait(answer.waitSeconds)}.`,
      );
    });
  }

  if (changed) {
    return (
      <Screen title="Change your PIN">
        <p role="status" className="rounded-lg bg-green-100 p-3 text-green-900">
          Your PIN has been changed. Use the new PIN for every payment from now on.
        </p>
        <Link
          to={next ?? '/'}
          className="rounded-lg bg-brand px-4 py-3 text-center text-lg font-semibold text-white"
        >
          Continue
        </Link>
      </Screen>
    );
  }

  const phone = me.data?.phone;
  const ready = /^\d{6}$/.test(code) && newPinReady(pin, again);
  return (
    <Screen title="Change your PIN">
      <p>
        Forgotten your PIN, or locked it? This replaces it too. We send a code to your phone by SMS; you type
        it with the new PIN.
      </p>
      {me.isPending ? <Waiting label="Loading your phone number" /> : null}
      <ErrorNote error={me.error as CallError | null} />
      {phone !== undefined ? (
        <form
          className="flex flex-col gap-4"
          onSubmit={(event) => {
            event.preventDefault();
            if (sent === null) return sendCode(phone);
            if (!ready) return;
            void act(async () => {
              await call('setTransactionPin', { pin, otpCode: code }, { idempotencyKey: changeKey });
              setChanged(true);
            });
          }}
        >
          {sent === null ? (
            <p>
              We will send the code to <span className="font-semibold">{localPhone(phone)}</span>.
            </p>
          ) : (
            <>
              <Field
                label="Code"
                value={code}
                onChange={typed(setCode)}
                inputMode="numeric"
                autoComplete="one-time-code"
                maxLength={6}
                hint={`The 6-digit code we sent by SMS to ${localPhone(phone)}`}
              />
              <NewPinFields pin={pin} again={again} onPin={typed(setPin)} onAgain={typed(setAgain)} />
            </>
          )}
          <ErrorNote error={error} message={error === null ? undefined : changeRefusal(error)} />
          <div role="status" aria-live="polite">
            {notice !== null ? <p className="rounded-lg bg-green-100 p-3 text-green-900">{notice}</p> : null}
          </div>
          {sent === null ? (
            <Button type="submit" busy={busy}>
              Send code
            </Button>
          ) : (
            <>
              <Button type="submit" busy={busy} disabled={!ready}>
                Save new PIN
              </Button>
              <ResendCodeButton secondsLeft={resendSeconds} busy={busy} onClick={() => sendCode(phone)} />
            </>
          )}
        </form>
      ) : null}
    </Screen>
  );
}

/** setTransactionPin refuses a wrong or used-up code with 403 FORBIDDEN and the tries left. */
const changeRefusal = (error: CallError): string =>
  error.code === 'FORBIDDEN' ? describeCodeRefusal(error) : describeError(error);

export const Route = createFileRoute('/pin/change')({
  validateSearch: (search: Record<string, unknown>): { next?: string } =>
    typeof search.next === 'string' && isAppPath(search.next) ? { next: search.next } : {},
  beforeLoad: requireSignIn,
  component: ChangePin,
});
