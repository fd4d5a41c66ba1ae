import { useMutation, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, useId, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Button, ErrorNote, Field, LongField, Screen } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';

// Admin: a broadcast to everyone (API.md section 11), with a title, a message, when it shows (now
// unless a start is given; until an end, if any) and, if wanted, a poll of 2 to 6 options. One
// Idempotency-Key per broadcast, kept while it is retried, so a lost answer never sends it twice.

const OPTIONS_MIN = 2;
const OPTIONS_MAX = 6;

/** A date and time typed in the admin's own time zone, as the instant the service expects. */
function instant(local: string): string | null {
  if (local === '') return null;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

function Broadcasts() {
  const queries = useQueryClient();
  const [title, setTitle] = useState('');
  const [body, setBody] = useState('');
  const [startsAt, setStartsAt] = useState('');
  const [endsAt, setEndsAt] = useState('');
  const [withPoll, setWithPoll] = useState(false);
  const [question, setQuestion] = useState('');
  const [options, setOptions] = useState<string[]>(['', '']);
  const [key, setKey] = useState(() => crypto.randomUUID());
  const [sent, setSent] = useState<Output<'adminCreateBroadcast'> | null>(null);
  const pollCheckbox = useId();

  /** Any change makes it another broadcast: a new key. */
  function edit<T>(set: (value: T) => void): (value: T) => void {
    return (value) => {
      set(value);
      setKey(crypto.randomUUID());
    };
  }

  const start = instant(startsAt);
  const end = instant(endsAt);
  const filledOptions = options.map((o) => o.trim());
  const problems = [
    title.trim() === '' ? 'Give it a title.' : null,
    body.trim() === '' ? 'Write the message.' : null,
    startsAt !== '' && start === null ? 'The start is not a date and time.' : null,
    endsAt !== '' && end === null ? 'The end is not a date and time.' : null,
    start !== null && end !== null && end <= start ? 'The end must be after the start.' : null,
    withPoll && question.trim() === '' ? 'Write the poll question.' : null,
    withPoll && filledOptions.some((o) => o === '')
      ? 'Fill in every poll option, or remove the empty ones.'
      : null,
  ].filter((p): p is string => p !== null);

  const create = useMutation({
    mutationFn: (input: Input<'adminCreateBroadcast'>) =>
      call('adminCreateBroadcast', input, { idempotencyKey: key }),
    onSuccess: (broadcast) => {
      setSent(broadcast);
      setTitle('');
      setBody('');
      setStartsAt('');
      setEndsAt('');
      setWithPoll(false);
      setQuestion('');
      setOptions(['', '']);
      setKey(crypto.randomUUID());
      void queries.invalidateQueries({ queryKey: ['broadcasts'] });
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (problems.length > 0) return;
    setSent(null);
    create.mutate({
      title: title.trim(),
      body: body.trim(),
      ...(start !== null ? { startsAt: start } : {}),
      ...(end !== null ? { endsAt: end } : {}),
      ...(withPoll ? { poll: { question: question.trim(), options: filledOptions } } : {}),
    });
  }

  return (
    <Screen title="Broadcasts">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>
        A broadcast goes to everyone: it shows in each person's inbox under News, and is pushed to their
        phones.
      </p>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Field label="Title" value={title} onChange={edit(setTitle)} maxLength={120} />
        <LongField
          label="Message"
          value={body}
          onChange={edit(setBody)}
          maxLength={2000}
          hint="Up to 2,000 characters"
        />
        <Field
          label="Starts (optional)"
          type="datetime-local"
          value={startsAt}
          onChange={edit(setStartsAt)}
          hint="Leave empty to show it now. Your own time zone."
        />
        <Field
          label="Ends (optional)"
          type="datetime-local"
          value={endsAt}
          onChange={edit(setEndsAt)}
          hint="Leave empty to show it until it is replaced."
          error={
            start !== null && end !== null && end <= start ? 'The end must be after the start.' : undefined
          }
        />
        <div className="flex items-center gap-2">
          <input
            id={pollCheckbox}
            type="checkbox"
            className="h-6 w-6"
            checked={withPoll}
            onChange={(event) => edit(setWithPoll)(event.target.checked)}
          />
          <label htmlFor={pollCheckbox} className="font-medium">
            Add a poll
          </label>
        </div>
        {withPoll ? (
          <fieldset className="flex min-w-0 flex-col gap-3 rounded-xl border border-gray-300 p-3">
            <legend className="px-1 font-semibold">Poll</legend>
            <Field label="Question" value={question} onChange={edit(setQuestion)} maxLength={300} />
            {options.map((option, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the options are positions in a short list
              <div key={index} className="flex items-end gap-2">
                <div className="min-w-0 flex-1">
                  <Field
                    label={`Option ${index + 1}`}
                    value={option}
                    maxLength={100}
                    onChange={edit((value: string) =>
                      setOptions(options.map((o, i) => (i === index ? value : o))),
                    )}
                  />
                </div>
                {options.length > OPTIONS_MIN ? (
                  <button
                    type="button"
                    className="rounded-lg border border-brand px-3 py-2 text-brand"
                    aria-label={`Remove option ${index + 1}`}
                    onClick={() => edit(setOptions)(options.filter((_, i) => i !== index))}
                  >
                    Remove
                  </button>
                ) : null}
              </div>
            ))}
            {options.length < OPTIONS_MAX ? (
              <Button variant="secondary" onClick={() => edit(setOptions)([...options, ''])}>
                Add an option
              </Button>
            ) : (
              <p className="text-sm text-gray-700">Six options at most.</p>
            )}
          </fieldset>
        ) : null}
        {problems.length > 0 && (title !== '' || body !== '') ? (
          <ul className="list-disc pl-5 text-sm text-gray-800" aria-label="Still needed">
            {problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        ) : null}
        <ErrorNote error={create.error as CallError | null} />
        <Button type="submit" busy={create.isPending} disabled={problems.length > 0}>
          Send to everyone
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {sent ? (
          <div className="rounded-xl bg-brand-light p-3">
            <p className="font-semibold">Sent: {sent.title}</p>
            <p className="text-sm">
              Shows from {formatDateTime(sent.startsAt)}
              {sent.endsAt ? ` until ${formatDateTime(sent.endsAt)}` : ''}
              {sent.poll ? `, with a poll of ${sent.poll.options.length} options` : ''}.
            </p>
          </div>
        ) : null}
      </div>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/broadcasts')({
  beforeLoad: requireSignIn,
  component: Broadcasts,
});
