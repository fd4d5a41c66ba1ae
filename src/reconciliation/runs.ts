import { type Kysely, type Selectable, sql } from 'kysely';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AlertsModule } from '../alerts/module.ts';
import type { Clock } from '../clock.ts';
import type { DB, ReconciliationItemsTable, ReconciliationRunsTable } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import { defineJob } from '../jobs/job.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { koboToNaira } from '../money.ts';
import { newestFirstPage, type Page } from '../paging.ts';
import { comparePayments, type PaymentsSideDeps } from './payments-side.ts';
import { comparePurchases, type PurchasesSideDeps } from './purchases-side.ts';
import type { ComparedItem, StoredRecord } from './records.ts';
import type {
  Bucket,
  ReconciliationItemView,
  ReconciliationRunView,
  RecordView,
  ResolutionAction,
  Source,
} from './schemas.ts';

// A reconciliation run (API.md 17.5, decision 0049): asked for by an operator or by the morning's
// job, it is a row first and its comparison a job, never work inside a request. The job reads both
// sides, then writes every item and the counts in one transaction, so a run is either running, done
// with all its items, or failed with the reason; running it again (a retry) starts from nothing.

export const reconciliationRunJob = defineJob('reconciliation.run', z.object({ runId: z.uuid() }));

export type RunDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  logger: Logger;
  raiseAlert: AlertsModule['api']['raiseAlert'];
  /** The payments' side: the provider's list and our records (funding's api). */
  payments: PaymentsSideDeps;
  /** Each VTU provider's side: its requery (and list), and our purchases routed to it (vtu's api). */
  purchasesOf(source: Exclude<Source, 'payments'>): PurchasesSideDeps;
};

type RunRow = Selectable<ReconciliationRunsTable>;
type ItemRow = Selectable<ReconciliationItemsTable>;

const countColumns: Record<
  Bucket,
  'matched' | 'missing_here' | 'missing_there' | 'amount_mismatch' | 'status_mismatch'
> = {
  matched: 'matched',
  missingHere: 'missing_here',
  missingThere: 'missing_there',
  amountMismatch: 'amount_mismatch',
  statusMismatch: 'status_mismatch',
};

export function runView(row: RunRow): ReconciliationRunView {
  return {
    id: row.id,
    source: row.source,
    from: row.period_from.toISOString(),
    to: row.period_to.toISOString(),
    status: row.status,
    counts: {
      matched: row.matched,
      missingHere: row.missing_here,
      missingThere: row.missing_there,
      amountMismatch: row.amount_mismatch,
      statusMismatch: row.status_mismatch,
    },
    providerList: row.provider_list,
    ...(row.requested_by === null ? {} : { requestedBy: row.requested_by }),
    ...(row.error === null ? {} : { error: row.error }),
    createdAt: row.created_at.toISOString(),
    ...(row.finished_at === null ? {} : { finishedAt: row.finished_at.toISOString() }),
  };
}

function recordView(json: unknown): RecordView | undefined {
  if (json === null || json === undefined) return undefined;
  const record = json as StoredRecord;
  return {
    status: record.status,
    ...(record.amountKobo === undefined ? {} : { amount: koboToNaira(BigInt(record.amountKobo)) }),
    ...(record.at === undefined ? {} : { at: record.at }),
    ...(record.userId === undefined ? {} : { userId: record.userId }),
    ...(record.kind === undefined ? {} : { kind: record.kind }),
    ...(record.providerReference === undefined ? {} : { providerReference: record.providerReference }),
    ...(record.recipient === undefined ? {} : { recipient: record.recipient }),
    ...(record.note === undefined ? {} : { note: record.note }),
  };
}

/**
 * What an operator may still do with an item: the one rule adminResolveReconciliationItem refuses by
 * and the report offers buttons by. Credit: a payment the provider reports a success of that we never
 * credited; requery: a purchase; ignore: anything; nothing once resolved.
 */
export function actionsFor(
  source: Source,
  row: Pick<ItemRow, 'bucket' | 'ours' | 'theirs' | 'resolution_action'>,
): ResolutionAction[] {
  if (row.resolution_action !== null) return [];
  const ours = row.ours as StoredRecord | null;
  const theirs = row.theirs as StoredRecord | null;
  const creditable =
    source === 'payments' &&
    theirs?.status === 'success' &&
    (row.bucket === 'missingHere' || row.bucket === 'statusMismatch') &&
    ours?.status !== 'credited';
  return [
    ...(creditable ? (['credit'] as const) : []),
    ...(source === 'payments' ? [] : (['requery'] as const)),
    'ignore',
  ];
}

export function itemView(row: ItemRow, source: Source): ReconciliationItemView {
  const ours = recordView(row.ours);
  const theirs = recordView(row.theirs);
  return {
    id: row.id,
    bucket: row.bucket,
    reference: row.reference,
    actions: actionsFor(source, row),
    ...(ours === undefined ? {} : { ours }),
    ...(theirs === undefined ? {} : { theirs }),
    ...(row.resolution_action === null
      ? {}
      : {
          resolution: {
            action: row.resolution_action,
            reason: row.resolution_reason ?? '',
            outcome: row.resolution_outcome ?? '',
            by: row.resolved_by ?? '',
            at: row.resolved_at?.toISOString() ?? '',
          },
        }),
  };
}

/** Records a run and enqueues its comparison in the same commit. */
export async function startRun(
  deps: Pick<RunDeps, 'db' | 'clock' | 'jobs'>,
  request: { source: Source; from: Date; to: Date; requestedBy: string | null; dailyKey?: string },
): Promise<RunRow | undefined> {
  return deps.db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('reconciliation_runs')
      .values({
        id: newId(),
        source: request.source,
        period_from: request.from,
        period_to: request.to,
        status: 'running',
        requested_by: request.requestedBy,
        daily_key: request.dailyKey ?? null,
        error: null,
        created_at: deps.clock.now(),
        finished_at: null,
      })
      .onConflict((oc) => oc.column('daily_key').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) await deps.jobs.send(reconciliationRunJob, { runId: row.id }, { db: trx });
    return row;
  });
}

/** Items written per statement. */
const itemsPerInsert = 500;

/** The comparison of one run: both sides read, then every item and the counts in one commit. */
export async function executeRun(deps: RunDeps, runId: string): Promise<void> {
  const run = await deps.db
    .selectFrom('reconciliation_runs')
    .selectAll()
    .where('id', '=', runId)
    .executeTakeFirst();
  if (run === undefined || run.status !== 'running') return;
  const started = performance.now();
  let items: ComparedItem[];
  let providerList = true;
  try {
    if (run.source === 'payments') {
      items = await comparePayments(deps.payments, run.period_from, run.period_to);
    } else {
      ({ items, providerList } = await comparePurchases(
        deps.purchasesOf(run.source),
        run.period_from,
        run.period_to,
      ));
    }
  } catch (error) {
    // A provider that could not be read: the run says why, and an operator runs it again.
    deps.logger.warn({ err: error, runId, source: run.source }, 'reconciliation run failed');
    await deps.db
      .updateTable('reconciliation_runs')
      .set({
        status: 'failed',
        error: String((error as Error).message ?? error).slice(0, 500),
        finished_at: deps.clock.now(),
      })
      .where('id', '=', runId)
      .where('status', '=', 'running')
      .execute();
    return;
  }
  const counts = { matched: 0, missing_here: 0, missing_there: 0, amount_mismatch: 0, status_mismatch: 0 };
  for (const item of items) counts[countColumns[item.bucket]] += 1;
  const now = deps.clock.now();
  const finished = await deps.db.transaction().execute(async (trx) => {
    const locked = await trx
      .selectFrom('reconciliation_runs')
      .select('status')
      .where('id', '=', runId)
      .forUpdate()
      .executeTakeFirst();
    if (locked?.status !== 'running') return false;
    for (let i = 0; i < items.length; i += itemsPerInsert) {
      await trx
        .insertInto('reconciliation_items')
        .values(
          items.slice(i, i + itemsPerInsert).map((item) => ({
            id: newId(),
            run_id: runId,
            bucket: item.bucket,
            reference: item.reference,
            ours: item.ours === null ? null : JSON.stringify(item.ours),
            theirs: item.theirs === null ? null : JSON.stringify(item.theirs),
            resolution_action: null,
            resolution_reason: null,
            resolution_outcome: null,
            resolved_by: null,
            resolved_at: null,
          })),
        )
        .execute();
    }
    await trx
      .updateTable('reconciliation_runs')
      .set({ ...counts, status: 'done', provider_list: providerList, finished_at: now })
      .where('id', '=', runId)
      .execute();
    const unmatched = items.length - counts.matched;
    // The morning's run tells the operators when anything does not agree; one alert per source and day.
    if (run.daily_key !== null && unmatched > 0) {
      await deps.raiseAlert(
        trx,
        {
          kind: 'reconciliation_mismatch',
          dedupeKey: `reconciliation:${run.daily_key}`,
          message: `${run.source} reconciliation of ${run.daily_key.split(':')[1]}: ${counts.missing_here} missing here, ${counts.missing_there} missing there, ${counts.amount_mismatch} amount and ${counts.status_mismatch} status mismatches`,
          details: {
            runId,
            source: run.source,
            missingHere: counts.missing_here,
            missingThere: counts.missing_there,
            amountMismatch: counts.amount_mismatch,
            statusMismatch: counts.status_mismatch,
          },
        },
        now,
        deps.jobs,
      );
    }
    return true;
  });
  if (finished) {
    deps.logger.info(
      { runId, source: run.source, items: items.length, ms: Math.round(performance.now() - started) },
      'reconciliation run done',
    );
  }
}

export async function getRun(db: Kysely<DB>, id: string): Promise<RunRow> {
  const run = await db.selectFrom('reconciliation_runs').selectAll().where('id', '=', id).executeTakeFirst();
  if (run === undefined) throw notFound('reconciliation');
  return run;
}

/** The worst buckets first, so the first page of a large run is what needs looking at. */
const bucketOrder = sql<number>`case bucket when 'statusMismatch' then 0 when 'amountMismatch' then 1
  when 'missingHere' then 2 when 'missingThere' then 3 else 4 end`;

export async function runItems(
  db: Kysely<DB>,
  runId: string,
  filter: { bucket?: Bucket | undefined },
  page: Page,
): Promise<{ items: ItemRow[]; total: number }> {
  let query = db.selectFrom('reconciliation_items').where('run_id', '=', runId);
  if (filter.bucket !== undefined) query = query.where('bucket', '=', filter.bucket);
  const items = await query
    .selectAll()
    .orderBy(bucketOrder)
    .orderBy('reference')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const { n } = await query.select(sql<string>`count(*)::text`.as('n')).executeTakeFirstOrThrow();
  return { items, total: Number(n) };
}

export async function listRuns(
  db: Kysely<DB>,
  filter: { source?: Source | undefined },
  page: Page,
): Promise<{ items: RunRow[]; total: number }> {
  let query = db.selectFrom('reconciliation_runs');
  if (filter.source !== undefined) query = query.where('source', '=', filter.source);
  const { rows, total } = await newestFirstPage(query, page);
  return { items: rows, total };
}
