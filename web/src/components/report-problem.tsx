import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type CallError, call, type Output } from '../api/client.ts';
import { describeError } from '../api/errors.ts';
import { formatDateTime, formatNairaNumber } from '../format.ts';
import { Select } from './select.tsx';
import { Button, ErrorNote, LongField } from './ui.tsx';

// "Report a problem" under a receipt (API.md section 16): the transaction's disputes, newest first,
// read by its reference (any of a purchase's references finds the purchase's), and a short form to
// report one when none is open. The outcome is the operator's: refunded (and how much) or declined,
// with their words.

export type Dispute = Output<'listMyDisputes'>['items'][number];

export const disputeQueryKey = (reference: string) => ['disputes', reference] as const;

const reasons = [
  { value: 'token_not_received', label: 'My token, PIN or value did not come' },
  { value: 'wrong_recipient', label: 'It went to the wrong number or account' },
  { value: 'charged_twice', label: 'I was charged twice' },
  { value: 'other', label: 'Something else' },
] as const;
type Reason = (typeof reasons)[number]['value'];

const messageLengthMax = 1000;

export function DisputeOutcome({ dispute }: { dispute: Dispute }) {
  const colours = {
    open: 'bg-amber-100 text-amber-900',
    refunded: 'bg-green-100 text-green-900',
    declined: 'bg-gray-100 text-gray-900',
  }[dispute.status];
  const headline = {
    open: 'Problem reported: we are looking into it',
    refunded: `Problem resolved: ${formatNairaNumber(dispute.refunded ?? 0)} refunded to your wallet`,
    declined: 'Problem reviewed: no refund',
  }[dispute.status];
  return (
    <div className={`flex flex-col gap-1 rounded-lg p-3 ${colours}`} data-testid="dispute">
      <p className="font-semibold" data-testid="dispute-status">
        {headline}
      </p>
      <p className="text-sm">
        Reported {formatDateTime(dispute.createdAt)}: “{dispute.message}”
      </p>
      {dispute.resolution ? <p className="text-sm">Our answer: {dispute.resolution}</p> : null}
    </div>
  );
}

/** The person's words for a refusal to report, where the general ones would mislead. */
function refusalWords(error: CallError): string {
  if (error.code === 'CONFLICT') return 'A problem with this transaction is already reported and open.';
  if (error.code === 'ABOVE_MAXIMUM' && typeof error.details?.limit === 'number')
    return `Problems can be reported within ${error.details.limit} days of a transaction.`;
  if (error.code === 'NOT_FOUND') return 'This transaction cannot be found on your account.';
  return describeError(error);
}

export function ReportProblem({ reference }: { reference: string }) {
  const queries = useQueryClient();
  const disputes = useQuery({
    queryKey: disputeQueryKey(reference),
    queryFn: () => call('listMyDisputes', { reference, limit: 20, offset: 0 }),
  });
  const [formOpen, setFormOpen] = useState(false);
  const [reason, setReason] = useState<Reason | ''>('');
  const [message, setMessage] = useState('');
  const report = useMutation({
    mutationFn: () => call('reportProblem', { reference, reason: reason as Reason, message: message.trim() }),
    onSuccess: () => {
      setFormOpen(false);
      setMessage('');
      setReason('');
      return queries.invalidateQueries({ queryKey: disputeQueryKey(reference) });
    },
  });
  const items = disputes.data?.items ?? [];
  const anyOpen = items.some((d) => d.status === 'open');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    report.mutate();
  };

  return (
    <section aria-labelledby="problem-title" className="flex flex-col gap-3">
      <h2 id="problem-title" className="text-lg font-semibold">
        A problem with this transaction?
      </h2>
      {items.map((d) => (
        <DisputeOutcome key={d.id} dispute={d} />
      ))}
      <ErrorNote error={disputes.error as CallError | null} />
      {!anyOpen && !formOpen && disputes.data ? (
        <Button variant="secondary" onClick={() => setFormOpen(true)}>
          Report a problem
        </Button>
      ) : null}
      {formOpen ? (
        <form onSubmit={submit} className="flex flex-col gap-3 rounded-xl border border-gray-300 p-3">
          <Select
            label="What went wrong?"
            value={reason}
            onChange={(value) => setReason(value as Reason)}
            options={reasons}
            placeholder="Choose one"
          />
          <LongField
            label="Tell us more"
            value={message}
            onChange={setMessage}
            maxLength={messageLengthMax}
            hint="What you expected and what happened. We answer in your inbox."
          />
          <ErrorNote
            error={report.error as CallError | null}
            message={report.error ? refusalWords(report.error as CallError) : undefined}
          />
          <div className="flex gap-2">
            <Button type="submit" busy={report.isPending} disabled={reason === '' || message.trim() === ''}>
              Send report
            </Button>
            <Button variant="secondary" onClick={() => setFormOpen(false)}>
              Cancel
            </Button>
          </div>
        </form>
      ) : null}
    </section>
  );
}
