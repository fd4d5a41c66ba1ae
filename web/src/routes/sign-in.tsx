import { createFileRoute, useNavigate } from '@tanstack/react-router';
import { useEffect, useState } from 'react';
import { CallError, call } from '../api/client.ts';
import { describeError } from '../api/errors.ts';
import { session } from '../api/session.ts';
import { Button, Field, Screen } from '../components/ui.tsx';

// Sign-in (API.md section 4): the phone, then the code sent to it by SMS.
//
// A sign-in's answer is never kept for replay (API.md section 3), so when the answer to verifyOtp is
// lost on the way back the code has been used up all the same: the retry is refused. The screen
// then says so plainly and offers a new code (one per phone per 60 s, the wait shown), and the
// person signs in with that. A retry of the same code carries the first attempt's Idempotency-Key,
// so it waits (409) rather than runs beside a first attempt that is still going.

function SignIn() {
  const { next, ref } = Route.useSearch();
  const navigate = useNavigate();
  const [phone, setPhone] = useState('');
  const [code, setCode] = useState('');
  const [sent, setSent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  /** The Idempotency-Key of signing in with the code as typed; a new code, or a new typing, a new key. */
  const [verifyKey, setVerifyKey] = useState(() => crypto.randomUUID());
  /** The code of an attempt whose answer never came: it may have used the code up. */
  const [lostCode, setLostCode] = useState<string | null>(null);
  /** When the service takes another code request for this phone (one per 60 s), in ms. */
  const [resendAt, setResendAt] = useState<number | null>(null);
  const resendSeconds = useSecondsUntil(resendAt);

  async function act(work: () => Promise<void>) {
    setBusy(true);
    setError(null);
    setNotice(null);
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

  function typeCode(value: string) {
    setCode(value);
    setVerifyKey(crypto.randomUUID());
  }

  /** Asks for a code; a refusal for asking too soon means a code was sent a moment ago: enter that. */
  async function requestCode(): Promise<boolean> {
    try {
      await call('requestOtp', { phone });
      setResendAt(Date.now() + codeRequestSpacingSeconds * 1000);
      return true;
    } catch (caught) {
      const seconds = caught instanceof CallError ? caught.details?.retryAfterSeconds : undefined;
      if (!(caught instanceof CallError && caught.code === 'RATE_LIMITED' && typeof seconds === 'number'))
        throw caught;
      setResendAt(Date.now() + seconds * 1000);
      setSent(true);
      setNotice(
        `We sent a code to this number a moment ago: enter it below. You can ask for a new one in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
      );
      return false;
    }
  }

  function sendNewCode() {
    void act(async () => {
      if (!(await requestCode())) return;
      typeCode('');
      setLostCode(null);
      setNotice('We sent a new code. Enter it below.');
    });
  }

  async function verify() {
    try {
      const tokens = await call(
        'verifyOtp',
        { phone, code, ...(ref === undefined ? {} : { referralCode: ref }) },
        { idempotencyKey: verifyKey },
      );
      session.set(tokens);
      await navigate({ to: next ?? '/' });
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
          if (!sent) {
            void act(async () => {
              if (await requestCode()) setSent(true);
            });
          } else {
            void act(verify);
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
            onChange={typeCode}
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={6}
            hint="The 6-digit code we sent you by SMS"
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
          {sent ? 'Sign in' : 'Send code'}
        </Button>
        {sent ? (
          <Button variant="secondary" onClick={sendNewCode} disabled={busy || resendSeconds > 0}>
            {resendSeconds > 0 ? `Send a new code (in ${resendSeconds} s)` : 'Send a new code'}
          </Button>
        ) : null}
      </form>
    </Screen>
  );
}

/** The service takes one code request per phone per 60 s (API.md section 4). */
const codeRequestSpacingSeconds = 60;

/** Whole seconds left until `at` (ms), 0 once passed or when there is none. */
const secondsUntil = (at: number | null): number =>
  at === null ? 0 : Math.max(0, Math.ceil((at - Date.now()) / 1000));

/** secondsUntil(at), ticking every second until it reaches 0. */
function useSecondsUntil(at: number | null): number {
  const [seconds, setSeconds] = useState(() => secondsUntil(at));
  useEffect(() => {
    setSeconds(secondsUntil(at));
    if (at === null) return;
    const timer = setInterval(() => {
      const left = secondsUntil(at);
      setSeconds(left);
      if (left === 0) clearInterval(timer);
    }, 1000);
    return () => clearInterval(timer);
  }, [at]);
  return seconds;
}

/** What a refusal on the code screen means for the person, in their words. */
function signInRefusal(error: CallError, answerLost: boolean): string {
  const seconds = error.details?.retryAfterSeconds;
  if (error.code === 'RATE_LIMITED' && typeof seconds === 'number') {
    return `You can ask for a new code in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`;
  }
  if (error.code !== 'UNAUTHENTICATED') return describeError(error);
  const attemptsLeft = error.details?.attemptsLeft;
  if (typeof attemptsLeft === 'number' && attemptsLeft > 0) {
    return `That code is not right. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left.`;
  }
  if (answerLost) {
    // The try whose answer was lost signed in at the service and used the code up.
    return 'This code has already been used: your last try reached us, but our answer was lost on the way. Ask for a new code and sign in with it.';
  }
  return 'This code can no longer be used (it has expired, was used, or had too many tries). Ask for a new code.';
}

/**
 * A path of this app only: one leading slash, and no backslash or control character, which a
 * browser could read as the start of another host (`/\evil.example` is `//evil.example`).
 */
const isAppPath = (value: string): boolean =>
  value.startsWith('/') &&
  !value.startsWith('//') &&
  ![...value].some((c) => c === '\\' || c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);

export const Route = createFileRoute('/sign-in')({
  // `next`: where to go after (this app's own paths only); `ref`: an inviter's code from a shared link.
  validateSearch: (search: Record<string, unknown>): { next?: string; ref?: string } => ({
    ...(typeof search.next === 'string' && isAppPath(search.next) ? { next: search.next } : {}),
    ...(typeof search.ref === 'string' && /^[A-Za-z0-9]{1,32}$/.test(search.ref) ? { ref: search.ref } : {}),
  }),
  component: SignIn,
});
