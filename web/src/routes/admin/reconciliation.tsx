import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { createFileRoute, Link, useNavigate } from '@tanstack/react-router';
import { type FormEvent, useState } from 'react';
import { type CallError, call, type Input, type Output } from '../../api/client.ts';
import { requireSignIn } from '../../auth-guard.ts';
import { Pager } from '../../components/pager.tsx';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Field, Screen, Waiting } from '../../components/ui.tsx';
import { lagosDay } from '../../reconciliation-csv.ts';
import { reconciliationKey } from './-reconciliation-item.tsx';
import { periodWords, RunPanel, runPollMs, sourceWords, statusWords } from './-reconciliation-run.tsx';

// Admin: reconciliation with the providers' own records (API.md 17.5). A run compares one source's
// records of a period with ours, as a job: it is started here (yesterday by default, as the morning's
// run does), listed newest first with its counts and asked again while it runs; a run opened shows
// its items side by side, where each is resolved, and downloads as a CSV file.

type Source = Input<'adminRunReconciliation'>['source'];
type RunSummary = Output<'adminListReconciliations'>['items'][number];

const PAGE = 20;
const sources = (['payments', 'data', 'bills', 'social'] as const).map((value) => ({
  value,
  label: sourceWords[value],
}));

const yesterday = () => lagosDay(new Date(Date.now() - 86_400_000));
const datePattern = /^\d{4}-\d{2}-\d{2}$/;

function StartRun() {
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [source, setSource] = useState<Source>('payments');
  const [from, setFrom] = useState(yesterday);
  const [to, setTo] = useState(yesterday);
  const ready = datePattern.test(from) && datePattern.test(to) && from <= to;
  const start = useMutation<Output<'adminRunReconciliation'>, CallError, Input<'adminRunReconciliation'>>({
    mutationFn: (input) => call('adminRunReconciliation', input),
    onSuccess: (run) => {
      void queries.invalidateQueries({ queryKey: reconciliationKey });
      void navigate({ to: '/admin/reconciliation', search: { run: run.id } });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (ready) start.mutate({ source, from, to });
  };
  return (
    <section aria-labelledby="start-title" className="flex flex-col gap-4">
      <h2 id="start-title" className="text-xl font-semibold">
        Start a run
      </h2>
      <form className="flex flex-col gap-4" onSubmit={submit} noValidate>
        <Select
          label="Source"
          value={source}
          options={sources}
          onChange={(value) => setSource(value as Source)}
        />
        <Field label="From (Lagos day)" type="date" value={from} onChange={setFrom} />
        <Field
          label="To (Lagos day, included)"
          type="date"
          value={to}
          onChange={setTo}
          error={ready || !datePattern.test(to) ? undefined : 'The last day is before the first.'}
          hint="At most 31 days."
        />
        <ErrorNote
          error={start.error}
          message={
            start.error?.code === 'VALIDATION_ERROR' ? `Check the days: ${start.error.message}.` : undefined
          }
        />
        <Button type="submit" busy={start.isPending} disabled={!ready}>
          Start
        </Button>
      </form>
    </section>
  );
}

function RunRow({ run }: { run: RunSummary }) {
  const c = run.counts;
  const unsettled = c.missingHere + c.missingThere + c.amountMismatch + c.statusMismatch;
  return (
    <li className="rounded-xl border border-gray-300 p-3" data-testid="reconciliation-run">
      <Link to="/admin/reconciliation" search={{ run: run.id }} className="flex flex-col gap-1 text-brand">
        <span className="flex flex-wrap justify-between gap-2 font-semibold">
          <span>
            {sourceWords[run.source]}, {periodWords(run)}
          </span>
          <span>{statusWords[run.status]}</span>
        </span>
        <span className="text-sm text-gray-700">
          {run.status === 'done'
            ? `${c.matched} matched, ${unsettled} to look at`
            : run.status === 'failed'
              ? (run.error ?? 'Failed')
              : 'Comparing…'}
        </span>
      </Link>
    </li>
  );
}

function Runs() {
  const [offset, setOffset] = useState(0);
  const list = useQuery({
    queryKey: [...reconciliationKey, 'list', offset],
    queryFn: () => call('adminListReconciliations', { limit: PAGE, offset }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) =>
      query.state.data?.items.some((r) => r.status === 'running') ? runPollMs : false,
  });
  const page = list.data;
  return (
    <section aria-labelledby="runs-title" className="flex flex-col gap-3">
      <h2 id="runs-title" className="text-xl font-semibold">
        Runs
      </h2>
      {list.isPending ? <Waiting label="Loading the runs" /> : null}
      <ErrorNote error={list.error as CallError | null} />
      {page?.items.length === 0 ? <p>No runs yet.</p> : null}
      <ul aria-label="Runs" className="flex flex-col gap-3">
        {page?.items.map((run) => (
          <RunRow key={run.id} run={run} />
        ))}
      </ul>
      <Pager
        offset={offset}
        pageSize={PAGE}
        total={page?.total ?? 0}
        busy={list.isFetching}
        onOffset={setOffset}
      />
    </section>
  );
}

function Reconciliation() {
  const { run } = Route.useSearch();
  return (
    <Screen title="Reconciliation">
      {run === undefined ? (
        <>
          <Link to="/admin" className="text-brand underline">
            Back to admin
          </Link>
          <p>
            Compare a provider's own records with ours. Nothing is credited or refunded by a run: each item
            that differs is resolved here, with a reason.
          </p>
          <StartRun />
          <Runs />
        </>
      ) : (
        <>
          <Link to="/admin/reconciliation" className="text-brand underline">
            Back to the runs
          </Link>
          <RunPanel key={run} id={run} />
        </>
      )}
    </Screen>
  );
}

export const Route = createFileRoute('/admin/reconciliation')({
  beforeLoad: requireSignIn,
  validateSearch: (search: Record<string, unknown>): { run?: string } =>
    typeof search.run === 'string' && search.run !== '' ? { run: search.run } : {},
  component: Reconciliation,
});
