import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { useMe } from '../../api/queries.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Pager } from '../../components/pager.tsx';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, LongField, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber, parseNaira, shownPhone } from '../../format.ts';

// Admin: corrections to a person's wallet, four eyes (API.md section 17.4). One admin proposes a
// credit or a debit with its reason; another approves it (the money moves then, once) or rejects it
// with a reason. The proposer is told that someone else must approve, and is not offered Approve on
// their own proposal (the service would refuse it). The person sees an approved one in their
// history as an adjustment, with the reason.

type Adjustment = Output<'adminListAdjustments'>['items'][number];
type Direction = Input<'adminProposeAdjustment'>['direction'];
type Status = Adjustment['status'];

const PAGE = 20;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const reasonLengthMax = 500;

const statusWords: Record<string, string> = {
  proposed: 'Waiting for approval',
  approved: 'Approved',
  rejected: 'Rejected',
  failed: 'Failed',
};

const queryKey = ['admin-adjustments'] as const;

function Propose() {
  const queries = useQueryClient();
  const [person, setPerson] = useState('');
  const [direction, setDirection] = useState<Direction>('credit');
  const [amountText, setAmountText] = useState('');
  const [reason, setReason] = useState('');
  const who = person.trim();
  const amount = parseNaira(amountText);
  const amountError =
    amountText.trim() !== '' && (amount === null || amount <= 0)
      ? 'Type an amount such as 1500 or 1500.50'
      : undefined;
  const ready = who !== '' && amount !== null && amount > 0 && reason.trim() !== '';

  // A phone is looked up first (adminGetUser): the proposal names the person by id.
  const propose = useMutation<
    Output<'adminProposeAdjustment'>,
    CallError,
    Omit<Input<'adminProposeAdjustment'>, 'userId'> & { who: string }
  >({
    mutationFn: async ({ who: typed, ...input }) => {
      const userId = uuidPattern.test(typed)
        ? typed
        : (await call('adminGetUser', { phone: typed.replace(/[\s-]/g, '') })).id;
      return call('adminProposeAdjustment', { ...input, userId });
    },
    onSuccess: () => {
      setPerson('');
      setAmountText('');
      setReason('');
      void queries.invalidateQueries({ queryKey });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (ready) propose.mutate({ who, direction, amount: amount!, reason: reason.trim() });
  };
  const proposed = propose.data;

  return (
    <section aria-labelledby="propose-title" className="flex flex-col gap-4">
      <h2 id="propose-title" className="text-xl font-semibold">
        Propose an adjustment
      </h2>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Field
          label="Phone or user id"
          value={person}
          onChange={setPerson}
          autoComplete="off"
          hint="The person's phone (0803…) or their id"
        />
        <Select
          label="Direction"
          value={direction}
          onChange={(value) => setDirection(value as Direction)}
          options={[
            { value: 'credit', label: 'Credit: add to their wallet' },
            { value: 'debit', label: 'Debit: take from their wallet' },
          ]}
        />
        <Field
          label="Amount (₦)"
          value={amountText}
          onChange={setAmountText}
          inputMode="decimal"
          error={amountError}
        />
        <LongField
          label="Reason (the person reads it)"
          value={reason}
          onChange={setReason}
          maxLength={reasonLengthMax}
        />
        <ErrorNote
          error={propose.error}
          message={
            propose.error?.code === 'NOT_FOUND'
              ? 'Nobody has this phone or id.'
              : propose.error?.code === 'VALIDATION_ERROR'
                ? 'Check the phone or id, the amount and the reason.'
                : undefined
          }
        />
        <Button type="submit" busy={propose.isPending} disabled={!ready}>
          Propose
        </Button>
      </form>
      <div role="status" aria-live="polite">
        {proposed ? (
          <p className="rounded-xl bg-green-100 p-3 text-green-900">
            Proposed: a {proposed.direction} of {formatNairaNumber(proposed.amount)} for{' '}
            {shownPhone(proposed.phone)}. Another admin must approve it before the money moves.
          </p>
        ) : null}
      </div>
    </section>
  );
}

function Decide({ adjustment }: { adjustment: Adjustment }) {
  const queries = useQueryClient();
  const [reason, setReason] = useState('');
  const decide = useMutation<unknown, CallError, 'approve' | 'reject'>({
    mutationFn: (decision) =>
      decision === 'approve'
        ? call('adminApproveAdjustment', { id: adjustment.id })
        : call('adminRejectAdjustment', { id: adjustment.id, reason: reason.trim() }),
    onSettled: () => queries.invalidateQueries({ queryKey }),
  });
  const error = decide.error;
  return (
    <div className="flex flex-col gap-2">
      <LongField
        label="Reason to reject"
        value={reason}
        onChange={setReason}
        maxLength={reasonLengthMax}
        hint="Only needed to reject."
      />
      <ErrorNote
        error={error}
        message={
          error?.code === 'FORBIDDEN' && error.details?.reason === 'four_eyes'
            ? 'You proposed this one: another admin must approve it.'
            : error?.code === 'INSUFFICIENT_FUNDS'
              ? 'Their balance is below this debit: it cannot be approved.'
              : error?.code === 'CONFLICT'
                ? 'Another admin decided this one already.'
                : undefined
        }
      />
      <div className="flex gap-2">
        <Button
          busy={decide.isPending && decide.variables === 'approve'}
          onClick={() => decide.mutate('approve')}
        >
          Approve
        </Button>
        <Button
          variant="secondary"
          busy={decide.isPending && decide.variables === 'reject'}
          disabled={reason.trim() === ''}
          onClick={() => decide.mutate('reject')}
        >
          Reject
        </Button>
      </div>
    </div>
  );
}

function AdjustmentItem({ adjustment, me }: { adjustment: Adjustment; me: string | undefined }) {
  const a = adjustment;
  const mine = me !== undefined && a.proposedBy === me;
  return (
    <li className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3" data-testid="adjustment">
      <p className="flex flex-wrap justify-between gap-2 font-semibold">
        <span>
          {a.direction === 'credit' ? 'Credit' : 'Debit'} {formatNairaNumber(a.amount)}
        </span>
        <span className="text-sm font-normal">{statusWords[a.status] ?? a.status}</span>
      </p>
      <p>“{a.reason}”</p>
      <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
        <dt className="text-gray-700">Person</dt>
        <dd className="wrap-anywhere">
          {shownPhone(a.phone)} ({a.userId})
        </dd>
        <dt className="text-gray-700">Proposed</dt>
        <dd className="wrap-anywhere">
          {formatDateTime(a.proposedAt)} by {mine ? 'you' : a.proposedBy}
        </dd>
        {a.decidedAt ? (
          <>
            <dt className="text-gray-700">Decided</dt>
            <dd className="wrap-anywhere">
              {formatDateTime(a.decidedAt)}
              {a.decidedBy ? ` by ${a.decidedBy === me ? 'you' : a.decidedBy}` : ''}
            </dd>
          </>
        ) : null}
        {a.rejectReason ? (
          <>
            <dt className="text-gray-700">Why rejected</dt>
            <dd>{a.rejectReason}</dd>
          </>
        ) : null}
      </dl>
      {a.status === 'proposed' ? (
        mine ? (
          <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
            You proposed this: another admin must approve or reject it.
          </p>
        ) : (
          <Decide adjustment={a} />
        )
      ) : null}
    </li>
  );
}

function Adjustments() {
  const me = useMe();
  const [status, setStatus] = useState<Status | ''>('proposed');
  const [offset, setOffset] = useState(0);
  const list = useQuery({
    queryKey: [...queryKey, status, offset],
    queryFn: () =>
      call('adminListAdjustments', { ...(status === '' ? {} : { status }), limit: PAGE, offset }),
    placeholderData: keepPreviousData,
  });
  const page = list.data;
  return (
    <Screen title="Adjustments">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>
        A correction to a person's wallet takes two admins: one proposes it, another approves it. The money
        moves only on approval.
      </p>
      <Propose />
      <section aria-labelledby="list-title" className="flex flex-col gap-3">
        <h2 id="list-title" className="text-xl font-semibold">
          Adjustments
        </h2>
        <Select
          label="Show"
          value={status}
          onChange={(value) => {
            setStatus(value as Status | '');
            setOffset(0);
          }}
          options={[
            { value: 'proposed', label: 'Waiting for approval' },
            { value: 'approved', label: 'Approved' },
            { value: 'rejected', label: 'Rejected' },
            { value: '', label: 'All' },
          ]}
        />
        {list.isPending ? <Waiting label="Loading the adjustments" /> : null}
        <ErrorNote error={list.error as CallError | null} />
        {page?.items.length === 0 ? <p>Nothing here.</p> : null}
        <ul aria-label="Adjustments" className="flex flex-col gap-3">
          {page?.items.map((a) => (
            <AdjustmentItem key={a.id} adjustment={a} me={me.data?.id} />
          ))}
        </ul>
        <Pager offset={offset} pageSize={PAGE} total={page?.total ?? 0} onOffset={setOffset} />
      </section>
    </Screen>
  );
}

export const Route = createFileRoute('/admin/adjustments')({
  beforeLoad: requireSignIn,
  component: Adjustments,
});
