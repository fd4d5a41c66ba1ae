import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { CallError, call } from '../api/client.ts';
import { describeCodeRefusal, describeError } from '../api/errors.ts';
import { session } from '../api/session.ts';
import {
  type CodeSent,
  codeLifetimeSeconds,
  describeWait,
  ResendCodeButton,
  requestCode,
  useCodeAction,
  useSecondsUntil,
} from '../components/code-request.tsx';
import { Button, Field, Screen } from '../components/ui.tsx';
import { isAppPath } from '../paths.ts';

// Sign-in (API.md section 4): the phone, then the code sent to it by SMS.
//
// The phone and when its code was sent are kept in this tab's sessionStorage (never the code), so a
// reload while the person waits for the SMS comes back to the code field, with the wait for a new
// code still counted down. "Change number" goes back to the phone.
//
// A sign-in's answer is never kept for replay (API.md section 3), so when the answer to verifyOtp is
// lost on the way back the code has been used up all the same: the retry is refused. The screen
// then says so plainly and offers a new code, and the person signs in with that. A retry of the
// same code carries the first attempt's Idempotency-Key, so it waits (409) rather than runs beside a
// first attempt that is still going.

/** The code on its way: the phone it went to and when (ms), and when a new one may be asked for. */
type Pending = { phone: string; sentAt: number; resendAt: number };
const pendingKey = 'billrail.signIn';

function readPending(): Pending | null {
  try {
    const pending = JSON.parse(sessionStorage.getItem(pendingKey) ?? 'null') as Pending | null;
    return typeof pending?.phone === 'string' && typeof pending.sentAt === 'number' ? pending : null;
  } catch {
    return null;
  }
}
const keepPending = (pending: Pending | null) =>
  pending === null
    ? sessionStorage.removeItem(pendingKey)
    : sessionStorage.setItem(pendingKey, JSON.stringify(pending));
const codeStillGood = (pending: Pending | null): pending is Pending =>
  pending !== null && Date.now() < pending.sentAt + codeLifetimeSeconds * 1000;

function SignIn() {
  const { next, ref } = Route.useSearch();
  const navigate = useNavigate();
  const [restored] = useState(readPending);
  const [phone, setPhone] = useState(restored?.phone ?? '');
  const [pending, setPending] = useState<Pending | null>(codeStillGood(restored) ? restored : null);
  const [code, setCode] = useState('');
  const { busy, error, setError, notice, setNotice, act } = useCodeAction();
  /** The Idempotency-Key of signing in with the code as typed; a new code, or a new typing, a new key. */
  const [verifyKey, setVerifyKey] = useState(() => crypto.randomUUID());
  /** The code of an attempt whose answer never came: it may have used the code up. */
  const [lostCode, setLostCode] = useState<string | null>(null);
  const resendSeconds = useSecondsUntil(pending?.resendAt ?? null);
  const goOn = () => navigate({ to: next ?? '/' });

  // Signed in in another tab: this one goes on too.
  useEffect(
    () =>
      session.subscribeElsewhere(() => {
        if (!session.signedIn()) return;
        keepPending(null);
        void navigate({ to: next ?? '/' });
      }),
    [navigate, next],
  );

  function typeCode(value: string) {
    setCode(value);
    setVerifyKey(crypto.randomUUID());
  }

  function codeSent(to: string, sent: CodeSent) {
    const record = { phone: to, sentAt: sent.sentAt, resendAt: Date.now() + sent.waitSeconds * 1000 };
    keepPending(record);
    setPending(record);
  }

  function sendFirstCode() {
    void act(async () => {
      const sent = await requestCode(phone);
      codeSent(phone, sent);
      if (!sent.justNow) {
        setNotice(
          `We sent a code to this number a moment ago: enter it below. You can ask for a new one in ${describeWait(sent.waitSeconds)}.`,
        );
      }
    });
  }

  function resendCode(to: string) {
    void act(async () => {
      const sent = await requestCode(to);
      codeSent(to, sent);
      if (!sent.justNow) {
        setNotice(`You can ask for a new code in ${describeWait(sent.waitSeconds)}.`);
        return;
      }
      typeCode('');
      setLostCode(null);
      setNotice('We sent a new code. Enter it below.');
    });
  }

  function changeNumber() {
    keepPending(null);
    setPending(null);
    typeCode('');
    setLostCode(null);
    setError(null);
    setNotice(null);
  }

  async function verify(to: string) {
    try {
      const tokens = await call(
        'verifyOtp',
        { phone: to, code, ...(ref === undefined ? {} : { referralCode: ref }) },
        { idempotencyKey: verifyKey },
      );
      keepPending(null);
      session.set(tokens);
      await goOn();
    } catch (caught) {
      // No answer, or the service failed: the attempt may have gone through and used the code.
      if (caught instanceof CallError && (caught.status === 0 || caught.status >= 500)) setLostCode(code);
      throw caught;
    }
  }

  return (
    <Screen title="Sign in">
      <form
        className="flex flex-col gap-4"
        onSubmit={(event) => {
          event.preventDefault();
          if (pending === null) sendFirstCode();
          else void act(() => verify(pending.phone));
        }}
      >
        {pending === null ? (
          <Field
            label="Phone number"
            value={phone}
            onChange={setPhone}
            inputMode="tel"
            autoComplete="tel"
            hint="Your Nigerian number, like 0803 123 4567"
          />
        ) : (
          <div className="flex items-center justify-between gap-3">
            <p>
              We sent a 6-digit code by SMS to <span className="font-semibold">{pending.phone}</span>.
            </p>
            <button type="button" className="shrink-0 py-2 text-brand underline" onClick={changeNumber}>
              Change number
            </button>
          </div>
        )}
        {pending !== null ? (
          <Field
            label="Code"
            value={code}
            onChange={typeCode}
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={6}
            hint="The 6-digit code we sent you by SMS. It works for 5 minutes."
          />
        ) : null}
        <div role="alert" aria-live="assertive">
          {error !== null ? (
            <p className="rounded-lg bg-red-100 p-3 text-red-900">
              {signInRefusal(error, lostCode !== null && lostCode === code)}
            </p>
          ) : null}
        </div>
        <div role="status" aria-live="polite">
          {notice !== null ? <p className="rounded-lg bg-green-100 p-3 text-green-900">{notice}</p> : null}
        </div>
        <Button type="submit" busy={busy}>
          {pending !== null ? 'Sign in' : 'Send code'}
        </Button>
        {pending !== null ? (
          <ResendCodeButton
            secondsLeft={resendSeconds}
            busy={busy}
            onClick={() => resendCode(pending.phone)}
          />
        ) : null}
      </form>
    </Screen>
  );
}

/** What a refusal on the sign-in screen means for the person, in their words. */
function signInRefusal(error: CallError, answerLost: boolean): string {
  const seconds = error.details?.retryAfterSeconds;
  if (error.code === 'RATE_LIMITED' && typeof seconds === 'number') {
    return `You can ask for a new code in ${describeWait(seconds)}.`;
  }
  if (error.code !== 'UNAUTHENTICATED') return describeError(error);
  const attemptsLeft = error.details?.attemptsLeft;
  if (answerLost && !(typeof attemptsLeft === 'number' && attemptsLeft > 0)) {
    // The try whose answer was lost signed in at the service and used the code up.
    return 'This code has already been used: your last try reached us, but our answer was lost on the way. Ask for a new code and sign in with it.';
  }
  return describeCodeRefusal(error);
}

export const Route = createFileRoute('/sign-in')({
  // `next`: where to go after (this app's own paths only); `ref`: an inviter's code from a shared link.
  validateSearch: (search: Record<string, unknown>): { next?: string; ref?: string } => ({
    ...(typeof search.next === 'string' && isAppPath(search.next) ? { next: search.next } : {}),
    ...(typeof search.ref === 'string' && /^[A-Za-z0-9]{1,32}$/.test(search.ref) ? { ref: search.ref } : {}),
  }),
  component: SignIn,
});
