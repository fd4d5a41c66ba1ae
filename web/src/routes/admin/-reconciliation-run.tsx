import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { type CallError, call, type Output } from '../../api/client.ts';
import { useMe } from '../../api/queries.ts';
import { Pager } from '../../components/pager.tsx';
import { Select } from '../../components/select.tsx';
import { Button, ErrorNote, Waiting } from '../../components/ui.tsx';
import { formatDateTime } from '../../format.ts';
import { download } from '../../receipt-files.ts';
import { lagosDay, reconciliationCsv, reconciliationFileName } from '../../reconciliation-csv.ts';
import {
  bucketWords,
  type Item,
  ReconciliationItem,
  type Run,
  reconciliationKey,
} from './-reconciliation-item.tsx';

// One reconciliation run (API.md 17.5): its period and status (asked again while it runs), the count
// of each bucket, its items grouped by bucket, the worst first as the service orders them, a page at
// a time, and the whole run as a CSV file.

type RunSummary = Output<'adminListReconciliations'>['items'][number];
type Bucket = Item['bucket'];

const PAGE = 50;
/** The most items one call may ask for (adminGetReconciliation's limit): the CSV is read in pages of it. */
const csvPage = 5000;
export const runPollMs = 2_000;

export const sourceWords: Record<RunSummary['source'], string> = {
  payments: 'Payments',
  data: 'Data provider',
  bills: 'Bills provider',
  social: 'Social provider',
};

export const statusWords: Record<RunSummary['status'], string> = {
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

/** The run's days in Lagos, both included: its `to` is the first instant past the period. */
export function periodWords(run: Pick<RunSummary, 'from' | 'to'>): string {
  const first = lagosDay(new Date(run.from));
  const last = lagosDay(new Date(new Date(run.to).getTime() - 1));
  return first === last ? first : `${first} to ${last}`;
}

/** The worst first, as the service orders the items. */
const bucketOrder: Bucket[] = ['statusMismatch', 'amountMismatch', 'missingHere', 'missingThere', 'matched'];

/** Consecutive items of one bucket together: the service sends them bucket by bucket. */
function groups(items: readonly Item[]): Array<{ bucket: Bucket; items: Item[] }> {
  const grouped: Array<{ bucket: Bucket; items: Item[] }> = [];
  for (const item of items) {
    const last = grouped.at(-1);
    if (last?.bucket === item.bucket) last.items.push(item);
    else grouped.push({ bucket: item.bucket, items: [item] });
  }
  return grouped;
}

/** Every item of the run, read a page of the largest size at a time until the count is reached. */
async function everyItem(id: string): Promise<Item[]> {
  const items: Item[] = [];
  for (;;) {
    const page = await call('adminGetReconciliation', { id, limit: csvPage, offset: items.length });
    items.push(...page.items);
    if (page.items.length === 0 || items.length >= page.itemCount) return items;
  }
}

function Counts({ run }: { run: RunSummary }) {
  return (
    <dl className="grid grid-cols-[minmax(0,1fr)_auto] gap-x-3 gap-y-1" aria-label="Items per bucket">
      {bucketOrder.map((bucket) => (
        <div key={bucket} className="contents">
          <dt>{bucketWords[bucket]}</dt>
          <dd className="text-right font-semibold" data-testid={`count-${bucket}`}>
            {run.counts[bucket]}
          </dd>
        </div>
      ))}
    </dl>
  );
}

function DownloadCsv({ run }: { run: Run }) {
  const csv = useMutation<void, CallError>({
    mutationFn: async () => {
      const items = await everyItem(run.id);
      download(
        new Blob([reconciliationCsv(items)], { type: 'text/csv;charset=utf-8' }),
        reconciliationFileName(run),
      );
    },
  });
  return (
    <div className="flex flex-col gap-2">
      <Button variant="secondary" busy={csv.isPending} onClick={() => csv.mutate()}>
        Download CSV
      </Button>
      <ErrorNote error={csv.error} />
    </div>
  );
}

export function RunPanel({ id }: { id: string }) {
  const me = useMe();
  const [bucket, setBucket] = useState<Bucket | ''>('');
  const [offset, setOffset] = useState(0);
  const run = useQuery({
    queryKey: [...reconciliationKey, 'run', id, bucket, offset],
    queryFn: () =>
      call('adminGetReconciliation', { id, ...(bucket === '' ? {} : { bucket }), limit: PAGE, offset }),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.status === 'running' ? runPollMs : false),
  });
  const r = run.data;
  return (
    <section aria-labelledby="run-title" className="flex flex-col gap-3">
      <h2 id="run-title" className="text-xl font-semibold">
        {r === undefined ? 'Run' : `${sourceWords[r.source]}, ${periodWords(r)}`}
      </h2>
      {run.isPending ? <Waiting label="Loading the run" /> : null}
      <ErrorNote
        error={run.error as CallError | null}
        message={(run.error as CallError | null)?.code === 'NOT_FOUND' ? 'There is no such run.' : undefined}
      />
      {r !== undefined ? (
        <>
          <p role="status" aria-live="polite" className="text-lg font-semibold" data-testid="run-status">
            {statusWords[r.status]}
            {r.finishedAt === undefined ? '' : `, ${formatDateTime(r.finishedAt)}`}
          </p>
          {r.error === undefined ? null : <p className="rounded-lg bg-red-100 p-3 text-red-900">{r.error}</p>}
          {r.providerList ? null : (
            <p className="rounded-lg bg-amber-100 p-3 text-amber-900">
              This provider keeps no list we can read: only purchases made here were compared, so nothing can
              be missing here.
            </p>
          )}
          {r.status === 'done' ? (
            <>
              <Counts run={r} />
              <DownloadCsv run={r} />
              <Select
                label="Show"
                value={bucket}
                onChange={(value) => {
                  setBucket(value as Bucket | '');
                  setOffset(0);
                }}
                options={[
                  { value: '', label: 'Every bucket' },
                  ...bucketOrder.map((b) => ({ value: b, label: bucketWords[b] })),
                ]}
              />
              {r.items.length === 0 ? <p>No items.</p> : null}
              {groups(r.items).map((group) => (
                <section
                  key={`${group.bucket}-${group.items[0]!.id}`}
                  aria-label={bucketWords[group.bucket]}
                  className="flex flex-col gap-2"
                >
                  <h3 className="text-lg font-semibold">{bucketWords[group.bucket]}</h3>
                  <ul className="flex flex-col gap-3">
                    {group.items.map((item) => (
                      <ReconciliationItem key={item.id} item={item} me={me.data?.id} />
                    ))}
                  </ul>
                </section>
              ))}
              <Pager
                offset={offset}
                pageSize={PAGE}
                total={r.itemCount}
                busy={run.isFetching}
                onOffset={setOffset}
              />
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
