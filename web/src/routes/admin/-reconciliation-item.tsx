import { type UseMutationResult, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { Button, ErrorNote, LongField } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber } from '../../format.ts';

// One item of a reconciliation run (API.md 17.5): our record and the provider's side by side, its
// resolution once there is one, and the actions the service would take for it, each asking for the
// reason the audit trail keeps. Credit is offered only where the service would allow it (a payment the
// provider took and we never credited); a refusal it gives anyway (someone resolved it meanwhile) is
// shown in its own words.

export type Run = Output<'adminGetReconciliation'>;
export type Item = Run['items'][number];
type Action = Input<'adminResolveReconciliationItem'>['action'];
type Side = Item['ours'];

export const reconciliationKey = ['admin-reconciliation'] as const;
const reasonLengthMax = 500;

export const bucketWords: Record<Item['bucket'], string> = {
  statusMismatch: 'Status differs',
  amountMismatch: 'Amount differs',
  missingHere: 'Missing here',
  missingThere: 'Missing at the provider',
  matched: 'Matched',
};

const actionWords: Record<Action, { button: string; done: string }> = {
  credit: { button: 'Credit', done: 'Credited' },
  requery: { button: 'Requery', done: 'Requeried' },
  ignore: { button: 'Ignore', done: 'Ignored' },
};

const rows: ReadonlyArray<{ label: string; of: (side: NonNullable<Side>) => string | undefined }> = [
  { label: 'Status', of: (s) => s.status },
  { label: 'Amount', of: (s) => (s.amount === undefined ? undefined : formatNairaNumber(s.amount)) },
  { label: 'Date', of: (s) => (s.at === undefined ? undefined : formatDateTime(s.at)) },
  { label: 'Kind', of: (s) => s.kind },
  { label: 'User', of: (s) => s.userId },
  { label: 'Provider reference', of: (s) => s.providerReference },
  { label: 'For', of: (s) => s.recipient },
  { label: 'Note', of: (s) => s.note },
];

function Sides({ item }: { item: Item }) {
  const cell = (side: Side, of: (s: NonNullable<Side>) => string | undefined) =>
    side === undefined ? '' : (of(side) ?? '—');
  return (
    <table className="w-full table-fixed text-sm">
      <caption className="sr-only">Our record and the provider's of {item.reference}</caption>
      <thead>
        <tr>
          <th scope="col" className="w-1/4 text-left font-normal text-gray-700">
            <span className="sr-only">Field</span>
          </th>
          <th scope="col" className="text-left">
            Ours
          </th>
          <th scope="col" className="text-left">
            Theirs
          </th>
        </tr>
      </thead>
      <tbody>
        {item.ours === undefined || item.theirs === undefined ? (
          <tr>
            <th scope="row" className="text-left font-normal text-gray-700">
              Record
            </th>
            <td>{item.ours === undefined ? 'None here' : ''}</td>
            <td>{item.theirs === undefined ? 'None there' : ''}</td>
          </tr>
        ) : null}
        {rows.map((row) => (
          <tr key={row.label} className="align-top">
            <th scope="row" className="text-left font-normal text-gray-700">
              {row.label}
            </th>
            <td className="wrap-anywhere pr-2">{cell(item.ours, row.of)}</td>
            <td className="wrap-anywhere">{cell(item.theirs, row.of)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Resolution({
  resolution,
  me,
}: {
  resolution: NonNullable<Item['resolution']>;
  me: string | undefined;
}) {
  return (
    <div className="rounded-lg bg-green-100 p-3 text-green-900" data-testid="resolution">
      <p className="font-semibold">
        {actionWords[resolution.action].done}: {resolution.outcome}
      </p>
      <p>“{resolution.reason}”</p>
      <p className="wrap-anywhere text-sm">
        {formatDateTime(resolution.at)} by {resolution.by === me ? 'you' : resolution.by}
      </p>
    </div>
  );
}

type Resolving = UseMutationResult<Output<'adminResolveReconciliationItem'>, CallError, Chosen>;
/** The action an operator chose for an item, with their reason. */
type Chosen = { action: Action; reason: string };

function Resolve({ actions, resolve }: { actions: Action[]; resolve: Resolving }) {
  const [action, setAction] = useState<Action | null>(null);
  const [reason, setReason] = useState('');
  if (action === null) {
    return (
      <div className="flex flex-wrap gap-2">
        {actions.map((a) => (
          <Button key={a} variant={a === 'credit' ? 'primary' : 'secondary'} onClick={() => setAction(a)}>
            {actionWords[a].button}
          </Button>
        ))}
      </div>
    );
  }
  return (
    <div className="flex flex-col gap-2">
      <LongField
        label={`Reason to ${actionWords[action].button.toLowerCase()}`}
        value={reason}
        onChange={setReason}
        maxLength={reasonLengthMax}
        hint="Kept with the item and in the audit log."
      />
      <div className="flex gap-2">
        <Button
          busy={resolve.isPending}
          disabled={reason.trim() === ''}
          onClick={() => resolve.mutate({ action, reason: reason.trim() })}
        >
          {actionWords[action].button} now
        </Button>
        <Button
          variant="secondary"
          disabled={resolve.isPending}
          onClick={() => {
            setAction(null);
            resolve.reset();
          }}
        >
          Cancel
        </Button>
      </div>
    </div>
  );
}

export function ReconciliationItem(props: { item: Item; me: string | undefined }) {
  const { item } = props;
  // The service says what it takes for this item now (the one rule it refuses by).
  const actions = item.actions;
  const queries = useQueryClient();
  // Kept by the item, not by its form: a refusal stays on screen after the item, read again, shows
  // the resolution someone else made meanwhile (and so no form).
  const resolve: Resolving = useMutation({
    mutationFn: (chosen: Chosen) => call('adminResolveReconciliationItem', { id: item.id, ...chosen }),
    onSettled: () => queries.invalidateQueries({ queryKey: reconciliationKey }),
  });
  const error = resolve.error;
  return (
    <li
      className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3"
      data-testid="reconciliation-item"
    >
      <p className="flex flex-wrap justify-between gap-2">
        <span className="wrap-anywhere font-semibold">{item.reference}</span>
        <span className="text-sm">{bucketWords[item.bucket]}</span>
      </p>
      <Sides item={item} />
      {item.resolution !== undefined ? <Resolution resolution={item.resolution} me={props.me} /> : null}
      {actions.length > 0 ? <Resolve actions={actions} resolve={resolve} /> : null}
      {/* A refusal in the service's own words: it names why (already resolved, not paid, …). */}
      <ErrorNote
        error={error}
        message={
          error?.code === 'CONFLICT' && error.message !== '' ? `Not done: ${error.message}.` : undefined
        }
      />
    </li>
  );
}
