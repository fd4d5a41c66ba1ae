import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { createFileRoute, Link } from '@tanstack/react-router';
import { useState } from 'react';
import { type CallError, call, type OperationName, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Pager } from '../../components/pager.tsx';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';

// Admin: the audit log (API.md section 17.4), newest first: every admin operation, allowed or
// refused, with who, when, from where and what was sent (PINs, codes and secrets already redacted by
// the service). Filtered by admin, operation and whole Lagos days (the service reads a date so), a
// page at a time. Nothing here can change the log: the database refuses to.

type Entry = Output<'adminListAuditLog'>['items'][number];
type AdminOperation = Extract<OperationName, `admin${string}`>;

const PAGE = 20;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Every admin operation, by what it does: the log's `operation` is the operation's name. */
const operations: ReadonlyArray<{ value: AdminOperation; label: string }> = [
  { value: 'adminVerifyTotp', label: 'Second factor: verify' },
  { value: 'adminEnrolTotp', label: 'Second factor: enrol' },
  { value: 'adminConfirmTotp', label: 'Second factor: confirm' },
  { value: 'adminResetTotp', label: "Second factor: reset another admin's" },
  { value: 'adminGetUser', label: 'A person: look up' },
  { value: 'adminListPurchases', label: 'Purchases: read' },
  { value: 'adminListAuditLog', label: 'Audit log: read' },
  { value: 'adminFreezeUser', label: 'Freeze a user' },
  { value: 'adminUnfreezeUser', label: 'Unfreeze a user' },
  { value: 'adminRevokeSessions', label: 'Sign out sessions' },
  { value: 'adminProposeAdjustment', label: 'Adjustment: propose' },
  { value: 'adminApproveAdjustment', label: 'Adjustment: approve' },
  { value: 'adminRejectAdjustment', label: 'Adjustment: reject' },
  { value: 'adminListAdjustments', label: 'Adjustments: read' },
  { value: 'adminPauseService', label: 'Pause a service' },
  { value: 'adminResumeService', label: 'Resume a service' },
  { value: 'adminListPauses', label: 'Pauses: read' },
  { value: 'adminCreateBroadcast', label: 'Broadcast' },
  { value: 'adminReviewKyc', label: 'KYC: review' },
  { value: 'adminListKycReviews', label: 'KYC: read' },
  { value: 'adminResolveDispute', label: 'Dispute: resolve' },
  { value: 'adminListDisputes', label: 'Disputes: read' },
  { value: 'adminSetMarkup', label: 'Markup: set' },
  { value: 'adminSetUserPriceLevel', label: "A user's price level: set" },
  { value: 'adminListPriceLevels', label: 'Price levels: read' },
  { value: 'adminReconcile', label: 'Reconcile' },
  { value: 'adminLedgerCheck', label: 'Ledger check' },
  { value: 'adminListAlerts', label: 'Alerts: read' },
];

const isDay = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text);

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div className="contents">
      <dt className="text-gray-700">{label}</dt>
      <dd className="font-medium wrap-anywhere">{value}</dd>
    </div>
  );
}

function AuditEntry({ entry, onAdmin }: { entry: Entry; onAdmin: (adminId: string) => void }) {
  // `ok`, `replayed` (an Idempotency-Key answered again), or the code it was refused with.
  const allowed = entry.outcome === 'ok' || entry.outcome === 'replayed';
  const input = entry.input === null || entry.input === undefined ? '' : JSON.stringify(entry.input, null, 1);
  return (
    <li className="flex flex-col gap-2 rounded-xl border border-gray-300 p-3" data-testid="audit-entry">
      <p className="flex flex-wrap items-center justify-between gap-2">
        <span className="font-semibold wrap-anywhere">{entry.operation}</span>
        <span
          className={`rounded-full px-2 py-0.5 text-sm ${allowed ? 'bg-green-100 text-green-900' : 'bg-red-100 text-red-900'}`}
        >
          {allowed
            ? entry.outcome === 'ok'
              ? 'Allowed'
              : 'Allowed (repeated)'
            : `Refused: ${entry.outcome}`}
        </span>
      </p>
      <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
        <Fact label="When" value={formatDateTime(entry.at)} />
        <Fact label="Admin" value={entry.adminId} />
        <Fact label="From" value={entry.ip} />
        {input !== '' && input !== '{}' ? <Fact label="Input" value={input} /> : null}
      </dl>
      <button
        type="button"
        className="self-start text-sm text-brand underline"
        onClick={() => onAdmin(entry.adminId)}
      >
        Only this admin's
      </button>
    </li>
  );
}

function AuditLog() {
  const [adminId, setAdminId] = useState('');
  const [operation, setOperation] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [offset, setOffset] = useState(0);
  const admin = adminId.trim();
  const adminError = admin === '' || uuidPattern.test(admin) ? undefined : 'An admin id has 36 characters';
  const datesOk = !(isDay(from) && isDay(to) && from > to);
  const filters = {
    ...(admin !== '' && adminError === undefined ? { adminId: admin } : {}),
    ...(operation === '' ? {} : { operation }),
    ...(isDay(from) ? { from } : {}),
    ...(isDay(to) ? { to } : {}),
  };
  const log = useQuery({
    queryKey: ['admin-audit', filters, offset],
    queryFn: () => call('adminListAuditLog', { ...filters, limit: PAGE, offset }),
    enabled: datesOk,
    placeholderData: keepPreviousData,
  });
  // A filter changed: its first page.
  const refilter = (set: (value: string) => void) => (value: string) => {
    set(value);
    setOffset(0);
  };
  const page = log.data;
  const filtered = admin !== '' || operation !== '' || from !== '' || to !== '';

  return (
    <Screen title="Audit log">
      <Link to="/admin" className="text-brand underline">
        Back to admin
      </Link>
      <p>Every admin operation, allowed or refused, newest first. PINs, codes and secrets are never shown.</p>
      <fieldset className="flex flex-col gap-3">
        <legend className="sr-only">Filters</legend>
        <Field
          label="Admin id"
          value={adminId}
          onChange={refilter(setAdminId)}
          autoComplete="off"
          error={adminError}
        />
        <Select
          label="Operation"
          value={operation}
          onChange={refilter(setOperation)}
          options={[{ value: '', label: 'Every operation' }, ...operations]}
        />
        <div className="grid grid-cols-2 gap-3">
          <Field label="From" type="date" value={from} onChange={refilter(setFrom)} />
          <Field
            label="To"
            type="date"
            value={to}
            onChange={refilter(setTo)}
            error={datesOk ? undefined : 'This is before the From date.'}
          />
        </div>
        {filtered ? (
          <Button
            variant="secondary"
            onClick={() => {
              for (const clear of [setAdminId, setOperation, setFrom, setTo]) clear('');
              setOffset(0);
            }}
          >
            Clear filters
          </Button>
        ) : null}
      </fieldset>
      {log.isPending && datesOk ? <Waiting label="Reading the audit log" /> : null}
      <ErrorNote error={log.error as CallError | null} />
      {page ? (
        <p role="status" aria-live="polite" className="text-sm text-gray-700" data-testid="audit-count">
          {page.total === 0
            ? filtered
              ? 'Nothing matches these filters.'
              : 'Nothing recorded yet.'
            : `${offset + 1} to ${offset + page.items.length} of ${page.total}`}
        </p>
      ) : null}
      <ul aria-label="Audit entries" className="flex flex-col gap-3">
        {page?.items.map((entry) => (
          <AuditEntry key={entry.id} entry={entry} onAdmin={refilter(setAdminId)} />
        ))}
      </ul>
      <Pager offset={offset} pageSize={PAGE} total={page?.total ?? 0} onOffset={setOffset} />
    </Screen>
  );
}

export const Route = createFileRoute('/admin/audit')({ beforeLoad: requireSignIn, component: AuditLog });
