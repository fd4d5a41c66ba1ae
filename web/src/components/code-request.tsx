import { useEffect, useState } from 'react';
import { CallError, call } from '../api/client.ts';
import { Button } from './ui.tsx';

// Asking for an SMS code (requestOtp, API.md section 4), as sign-in and changing the PIN both do.
// The service sends one code per phone per 60 s; asking sooner is refused with the seconds left, and
// means a code was sent a moment ago, which is still good: the screen goes on to the code field and
// counts the wait down on "Resend code" instead of inviting a refusal.

/** The service takes one code request per phone per 60 s. */
export const codeRequestSpacingSeconds = 60;
/** A code works for 5 minutes. */
export const codeLifetimeSeconds = 5 * 60;

/**
 * What asking for a code came to: when the code to type was sent (now, or a moment ago when the
 * service refused to send another so soon), and how long until a new one may be asked for.
 */
export type CodeSent = { sentAt: number; justNow: boolean; waitSeconds: number };

/** Sends a code to `phone`. A refusal for asking too soon answers the code sent a moment ago; other refusals throw. */
export async function requestCode(phone: string): Promise<CodeSent> {
  try {
    await call('requestOtp', { phone });
    return { sentAt: Date.now(), justNow: true, waitSeconds: codeRequestSpacingSeconds };
  } catch (caught) {
    const seconds = caught instanceof CallError ? caught.details?.retryAfterSeconds : undefined;
    if (!(caught instanceof CallError && caught.code === 'RATE_LIMITED' && typeof seconds === 'number')) {
      throw caught;
    }
    const sentAt = Date.now() - Math.max(0, codeRequestSpacingSeconds - seconds) * 1000;
    return { sentAt, justNow: false, waitSeconds: seconds };
  }
}

/** "42 seconds", "1 second", or "5 minutes" for a longer wait. */
export function describeWait(seconds: number): string {
  if (seconds > 90) {
    const minutes = Math.ceil(seconds / 60);
    return `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`;
  }
  return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`;
}

/** Whole seconds left until `at` (ms), 0 once passed or when there is none. */
const secondsUntil = (at: number | null): number =>
  at === null ? 0 : Math.max(0, Math.ceil((at - Date.now()) / 1000));

/** secondsUntil(at), ticking every second until it reaches 0. */
export function useSecondsUntil(at: number | null): number {
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

/** "Resend code", disabled and counting down while the service would refuse a new one. */
export function ResendCodeButton(props: { secondsLeft: number; busy: boolean; onClick: () => void }) {
  return (
    <Button variant="secondary" onClick={props.onClick} disabled={props.busy || props.secondsLeft > 0}>
      {props.secondsLeft === 0
        ? 'Resend code'
        : props.secondsLeft > 90
          ? `Resend code (in ${Math.ceil(props.secondsLeft / 60)} min)`
          : `Resend code (in ${props.secondsLeft} s)`}
    </Button>
  );
}

/**
 * The one action at a time of a screen that sends and checks codes (sign-in, changing the PIN): busy
 * while it runs, the last refusal kept to show, the last notice cleared when the next action starts.
 */
export function useCodeAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<CallError | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
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
  return { busy, error, setError, notice, setNotice, act };
}
