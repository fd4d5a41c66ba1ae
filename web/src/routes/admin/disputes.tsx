import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Pager } from '../../components/pager.tsx';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, LongField, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime, formatNairaNumber, parseNaira } from '../../format.ts';

// Admin: the problems people reported (API.md section 16), open ones first by default, each with its
// transaction and, for a purchase, what was sent to the provider and what came back (the requery's
// progress too), so that the operator decides on the record: a refund (all that is refundable, or
// less) or a decline, with a reason the person reads in their inbox.

type AdminDispute = Output<'adminListDisputes'>['items'][number];
type Status = 'open' | 'refunded' | 'declined';

const PAGE = 20;

const reasonWords: Record<AdminDispute['reason'], string> = {
  token_not_received: 'Token, PIN or value not received',
  wrong_recipient: 'Wrong recipient',
  charged_twice: 'Charged twice',
  other: 'Something else',
};

const statuses = [
  { value: 'open', label: 'Open' },
  { value: 'refunded', label: 'Refunded' },
  { value: 'declined', label: 'Declined' },
] as const;

function Row({ label, value }: { label: string; value: string | number | undefined }) {
  if (value === undefined || value === '') return null;
  return (
    <div className="contents">
      <dt className="text-gray-700">{label}</dt>
      <dd className="font-medium wrap-anywhere">{value}</dd>
    </div>
  );
}

function TransactionFacts({ d }: { d: AdminDispute }) {
  const t = d.transaction;
  const p = t.purchase;
  const x = t.exchange;
  return (
    <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
      <Row label="Reference" value={t.reference} />
      <Row label="What" value={t.description} />
      <Row label="Charged" value={formatNairaNumber(t.charged)} />
      <Row label="When" value={formatDateTime(t.createdAt)} />
      {p ? (
        <>
          <Row label="Status" value={p.status} />
          <Row label="Recipient" value={p.recipient} />
          <Row label="Provider" value={p.provider} />
          <Row label="Token" value={p.token} />
          <Row label="Pins" value={p.pins?.join(', ')} />
          <Row
            label="Refunded by the purchase"
            value={p.refunded === undefined ? undefined : formatNairaNumber(p.refunded)}
          />
        </>
      ) : null}
      {x ? (
        <>
          <Row label="Provider reference" value={x.providerReference ?? 'none given'} />
          <Row label="Sent" value={x.sentAt === undefined ? 'not sent' : formatDateTime(x.sentAt)} />
          <Row label="Requeries" value={x.requeryAttempts} />
          <Row
            label="Next requery"
            value={x.nextRequeryAt === undefined ? undefined : formatDateTime(x.nextRequeryAt)}
          />
          <Row
            label="Settled"
            value={x.completedAt === undefined ? undefined : formatDateTime(x.completedAt)}
          />
          <Row label="Provider said" value={x.failureReason} />
          <Row label="Sent to the provider" value={JSON.stringify(x.request)} />
        </>
      ) : null}
    </dl>
  );
}

function Decide({ d }: { d: AdminDispute }) {
  const queries = useQueryClient();
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const resolve = useMutation({
    mutationFn: (decision: 'refund' | 'decline') => {
      const naira = amount.trim() === '' ? undefined : parseNaira(amount);
      return call('adminResolveDispute', {
        id: d.id,
        decision,
        reason: reason.trim(),
        ...(decision === 'refund' && naira !== undefined && naira !== null ? { amount: naira } : {}),
      });
    },
    onSuccess: () => queries.invalidateQueries({ queryKey: ['admin-disputes'] }),
  });
  const amountError =
    amount.trim() !== '' && parseNaira(amount) === null ? 'Naira, e.g. 1500 or 1500.50' : undefined;
  const refundable = d.refundable;
  return (
    <div className="flex flex-col gap-2">
      <p className="text-sm" data-testid="refundable">
        {refundable === null
          ? 'The purchase is still processing: requery it before refunding.'
          : `Refundable: ${formatNairaNumber(refundable)}`}
      </p>
      <Field
        label="Amount to refund (naira)"
        value={amount}
        onChange={setAmount}
        inputMode="decimal"
        hint="Leave empty to refund all that is refundable."
        error={amountError}
      />
      <LongField label="Reason (the person reads it)" value={reason} onChange={setReason} maxLength={1000} />
      <ErrorNote error={resolve.error as CallError | null} />
      <div className="flex gap-2">
        <Button
          busy={resolve.isPending}
          disabled={
            reason.trim() === '' || amountError !== undefined || refundable === null || refundable === 0
          }
          onClick={() => resolve.mutate('refund')}
        >
          Refund
        </Button>
        <Button
          variant="secondary"
          disabled={reason.trim() === '' || resolve.isPending}
          onClick={() => resolve.mutate('decline')}
        >
          Decline
        </Button>
      </div>
    </div>
  );
}

function Disputes() {
  const [status, setStatus] = useState<Status>('open');
  const [offset, setOffset] = useState(0);
  const disputes = useQuery({
    queryKey: ['admin-disputes', status, offset],
    queryFn: () => call('adminListDisputes', { status, limit: PAGE, offset }),
    placeholderData: keepPreviousData,
  });
  const page = disputes.data;
  return (
    <Screen title="Disputes">
      <Select
        label="Show"
        value={status}
        onChange={(value) => {
          setStatus(value as Status);
          setOffset(0);
        }}
        options={statuses}
      />
      {disputes.isPending ? <Waiting label="Loading the disputes" /> : null}
      <ErrorNote error={disputes.error as CallError | null} />
      {page?.items.length === 0 ? <p>Nothing here.</p> : null}
      <ul className="flex flex-col gap-3">
        {page?.items.map((d) => (
          <li
            key={d.id}
            className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3"
            data-testid="admin-dispute"
          >
            <p className="font-semibold">
              {reasonWords[d.reason]} · {formatDateTime(d.createdAt)}
            </p>
            <p>“{d.message}”</p>
            <p className="text-sm text-gray-700">Person: {d.phone}</p>
            <TransactionFacts d={d} />
            {d.status === 'open' ? (
              <Decide d={d} />
            ) : (
              <p className="text-sm">
                {d.status === 'refunded' ? `Refunded ${formatNairaNumber(d.refunded ?? 0)}` : 'Declined'}:{' '}
                {d.resolution}
              </p>
            )}
          </li>
        ))}
      </ul>
      <Pager offset={offset} pageSize={PAGE} total={page?.total ?? 0} onOffset={setOffset} />
    </Screen>
  );
}

export const Route = createFileRoute('/admin/disputes')({ beforeLoad: requireSignIn, component: Disputes });
