import { type ReactNode, useId } from 'react';
import { type ApiError, describeError } from '../api/errors.ts';

// The few building blocks every screen uses: labelled fields, buttons that say when they wait, and
// errors announced to screen readers.

export function Screen({ title, children }: { title: string; children: ReactNode }) {
  return (
    <section aria-labelledby="screen-title" className="mx-auto flex max-w-md flex-col gap-4 p-4">
      <h1 id="screen-title" className="text-2xl font-semibold text-brand">
        {title}
      </h1>
      {children}
    </section>
  );
}

export function Field(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: string | undefined;
  error?: string | undefined;
  inputMode?: 'numeric' | 'tel' | 'decimal' | 'text' | 'email';
  type?: string;
  autoComplete?: string;
  maxLength?: number;
  name?: string;
}) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [props.hint ? hintId : null, props.error ? errorId : null].filter(Boolean).join(' ');
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="font-medium">
        {props.label}
      </label>
      <input
        id={id}
        name={props.name}
        className="rounded-lg border border-gray-400 px-3 py-2 text-lg"
        value={props.value}
        onChange={(event) => props.onChange(event.target.value)}
        inputMode={props.inputMode}
        type={props.type ?? 'text'}
        autoComplete={props.autoComplete}
        maxLength={props.maxLength}
        aria-invalid={props.error ? true : undefined}
        aria-describedby={describedBy || undefined}
      />
      {props.hint ? (
        <p id={hintId} className="text-sm text-gray-700">
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p id={errorId} className="text-sm text-red-800">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** A labelled multi-line field (a broadcast's message, a reported problem). */
export function LongField(props: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  hint?: string;
  maxLength: number;
}) {
  const id = useId();
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="font-medium">
        {props.label}
      </label>
      <textarea
        id={id}
        rows={4}
        className="rounded-lg border border-gray-400 px-3 py-2 text-lg"
        value={props.value}
        maxLength={props.maxLength}
        onChange={(event) => props.onChange(event.target.value)}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
      />
      {props.hint ? (
        <p id={`${id}-hint`} className="text-sm text-gray-700">
          {props.hint}
        </p>
      ) : null}
    </div>
  );
}

export function Button(props: {
  children: ReactNode;
  onClick?: () => void;
  type?: 'button' | 'submit';
  busy?: boolean;
  disabled?: boolean;
  variant?: 'primary' | 'secondary';
}) {
  const primary = (props.variant ?? 'primary') === 'primary';
  return (
    <button
      type={props.type ?? 'button'}
      onClick={props.onClick}
      disabled={props.disabled || props.busy}
      aria-busy={props.busy || undefined}
      className={`rounded-lg px-4 py-3 text-lg font-semibold disabled:opacity-60 ${
        primary ? 'bg-brand text-white' : 'border border-brand text-brand'
      }`}
    >
      {props.busy ? 'Please wait…' : props.children}
    </button>
  );
}

/** An error, announced as it appears; `message` replaces the code's usual words where a screen knows better. */
export function ErrorNote({ error, message }: { error: ApiError | null; message?: string | undefined }) {
  return (
    <div role="alert" aria-live="assertive">
      {error ? (
        <p className="rounded-lg bg-red-100 p-3 text-red-900">{message ?? describeError(error)}</p>
      ) : null}
    </div>
  );
}

export function Waiting({ label }: { label: string }) {
  return (
    <p role="status" aria-live="polite" className="text-gray-700">
      {label}…
    </p>
  );
}
