import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useEffect, useId, useRef, useState, useSyncExternalStore } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { describeError } from '../api/errors.ts';
import { secondFactor } from '../api/second-factor.ts';
import { Button, ErrorNote, Field } from './ui.tsx';

// The admin area's one place for the second factor (API.md section 17.4): mounted by the admin
// layout, it opens as a modal dialog whenever an admin call is refused with SECOND_FACTOR_REQUIRED
// (api/second-factor.ts), asks for the authenticator's 6-digit code, or first enrols an
// authenticator when the admin has none, and closes once the session is verified, when the refused
// calls go again by themselves. The screen under it keeps what the admin typed.

const codePattern = /^\d{6}$/;

/** A refused code in plain words: wrong (with the tries left) or locked for a while. */
function codeRefusal(error: CallError): string {
  const details = error.details ?? {};
  if (error.code === 'PIN_LOCKED') {
    const seconds = typeof details.retryAfterSeconds === 'number' ? details.retryAfterSeconds : null;
    const minutes = seconds === null ? null : Math.max(1, Math.ceil(seconds / 60));
    return `Too many wrong codes: try again in ${minutes === null ? 'a while' : `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}`}.`;
  }
  if (['INVALID_PIN', 'UNAUTHENTICATED', 'FORBIDDEN', 'VALIDATION_ERROR'].includes(error.code)) {
    const left = details.attemptsLeft;
    return typeof left === 'number'
      ? `That code is not right. ${left} ${left === 1 ? 'try' : 'tries'} left.`
      : 'That code is not right. Check the app shows billrail and type the code it shows now.';
  }
  return describeError(error);
}

function CodeField({ code, onCode, label }: { code: string; onCode: (code: string) => void; label: string }) {
  return (
    <Field
      label={label}
      value={code}
      onChange={(text) => onCode(text.replace(/\D/g, '').slice(0, 6))}
      inputMode="numeric"
      autoComplete="one-time-code"
      maxLength={6}
      hint="6 digits; a new one every 30 seconds"
      error={code !== '' && code.length === 6 && !codePattern.test(code) ? 'Type the 6 digits' : undefined}
    />
  );
}

/** The code of an authenticator already set up: adminVerifyTotp. */
function Verify({ note, onNotEnrolled }: { note?: string | undefined; onNotEnrolled: () => void }) {
  const [code, setCode] = useState('');
  const verify = useMutation<Output<'adminVerifyTotp'>, CallError, string>({
    mutationFn: (typed) => call('adminVerifyTotp', { code: typed }),
    onSuccess: () => secondFactor.settle(true),
    onError: (error) => {
      setCode('');
      // No authenticator confirmed after all (enrolment left half-way): enrol first.
      if (error.code === 'CONFLICT' && error.details?.enrolled === false) onNotEnrolled();
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (codePattern.test(code)) verify.mutate(code);
  };
  return (
    <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
      <p>
        {note ??
          'Admin screens need your second factor. Open your authenticator app and type the code it shows for billrail.'}
      </p>
      <CodeField label="Authenticator code" code={code} onCode={setCode} />
      <ErrorNote error={verify.error} message={verify.error ? codeRefusal(verify.error) : undefined} />
      <Button type="submit" busy={verify.isPending} disabled={!codePattern.test(code)}>
        Verify
      </Button>
      <Button variant="secondary" onClick={() => secondFactor.settle(false)}>
        Cancel
      </Button>
    </form>
  );
}

/** A secret in groups of four, as it is typed into an app by hand. */
const grouped = (secret: string) => secret.match(/.{1,4}/g)?.join(' ') ?? secret;

/**
 * Enrolment, for an admin without an authenticator: the secret and its otpauth:// link, shown this once
 * (adminEnrolTotp), then a code from the app confirms it (adminConfirmTotp) and verifies the session.
 */
function Enrol({ onEnrolled }: { onEnrolled: (note: string) => void }) {
  const [code, setCode] = useState('');
  const enrol = useMutation<Output<'adminEnrolTotp'>, CallError>({
    mutationFn: () => call('adminEnrolTotp', {}),
    onError: (error) => {
      // Confirmed meanwhile (another tab): there is nothing to enrol, only a code to type.
      if (error.code === 'CONFLICT')
        onEnrolled('Your authenticator is already set up. Type the code it shows.');
    },
  });
  const confirm = useMutation<void, CallError, string>({
    mutationFn: async (typed) => {
      await call('adminConfirmTotp', { code: typed });
    },
    onSuccess: () => secondFactor.settle(true),
    onError: () => setCode(''),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (codePattern.test(code)) confirm.mutate(code);
  };

  if (!enrol.data) {
    return (
      <div className="flex flex-col gap-4">
        <p>
          Admin screens need a second factor: an authenticator app on your phone (such as Google
          Authenticator, Microsoft Authenticator or Aegis) that shows a new 6-digit code every 30 seconds. You
          set it up once.
        </p>
        <ErrorNote error={enrol.error?.code === 'CONFLICT' ? null : (enrol.error ?? null)} />
        <Button busy={enrol.isPending} onClick={() => enrol.mutate()}>
          Set up my authenticator
        </Button>
        <Button variant="secondary" onClick={() => secondFactor.settle(false)}>
          Cancel
        </Button>
      </div>
    );
  }

  return (
    <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
      <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
        This key is shown only this once. Add it to your authenticator app now, and keep it nowhere else.
      </p>
      <a href={enrol.data.otpauthUrl} className="text-brand underline">
        Open in my authenticator app
      </a>
      <div className="flex flex-col gap-1">
        <p className="font-medium">Or type this key into the app</p>
        <code
          data-testid="totp-secret"
          className="rounded-lg bg-brand-light p-3 text-lg font-semibold tracking-wider wrap-anywhere"
        >
          {grouped(enrol.data.secret)}
        </code>
      </div>
      <details className="text-sm">
        <summary className="cursor-pointer">The full otpauth link</summary>
        <code data-testid="totp-url" className="block wrap-anywhere">
          {enrol.data.otpauthUrl}
        </code>
      </details>
      <CodeField label="Code the app shows" code={code} onCode={setCode} />
      <ErrorNote error={confirm.error} message={confirm.error ? codeRefusal(confirm.error) : undefined} />
      <Button type="submit" busy={confirm.isPending} disabled={!codePattern.test(code)}>
        Confirm
      </Button>
      <Button variant="secondary" onClick={() => secondFactor.settle(false)}>
        Cancel
      </Button>
    </form>
  );
}

/** Mounted once by the admin layout: the dialog that answers SECOND_FACTOR_REQUIRED. */
export function SecondFactorDialog() {
  useEffect(() => secondFactor.host(), []);
  const prompt = useSyncExternalStore(secondFactor.subscribe, secondFactor.current);
  // What the dialog learnt since it opened: the admin turned out enrolled (a note to show), or not.
  const [learnt, setLearnt] = useState<{ enrolled: boolean; note?: string } | null>(null);
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();

  useEffect(() => {
    const element = dialog.current;
    if (element === null) return;
    if (prompt !== null && !element.open) element.showModal();
    if (prompt === null) {
      setLearnt(null);
      if (element.open) element.close();
    }
  }, [prompt]);

  const enrolling = prompt !== null && !(learnt?.enrolled ?? prompt.enrolled);
  // The scrim behind is dark in both schemes: the palette's black turns white in dark mode.
  return (
    <dialog
      ref={dialog}
      aria-labelledby={titleId}
      // Escape, or the dialog closed any other way, gives up: the waiting calls fail as refused.
      onClose={() => secondFactor.settle(false)}
      className="m-auto w-[calc(100%-2rem)] max-w-md rounded-xl bg-white p-4 text-gray-900 backdrop:bg-[rgb(0_0_0/0.6)]"
    >
      {prompt !== null ? (
        <div className="flex flex-col gap-4">
          <h2 id={titleId} className="text-xl font-semibold text-brand">
            {enrolling ? 'Set up your second factor' : 'Your authenticator code'}
          </h2>
          {enrolling ? (
            <Enrol onEnrolled={(note) => setLearnt({ enrolled: true, note })} />
          ) : (
            <Verify note={learnt?.note} onNotEnrolled={() => setLearnt({ enrolled: false })} />
          )}
        </div>
      ) : null}
    </dialog>
  );
}
