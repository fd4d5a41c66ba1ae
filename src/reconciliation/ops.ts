import { dateRangeOf } from '../date-filter.ts';
import { AppError } from '../errors.ts';
import { defineOperation } from '../operation.ts';
import { type ResolveDeps, resolveItem } from './resolve.ts';
import { getRun, itemView, listRuns, type RunDeps, runItems, runView, startRun } from './runs.ts';
import * as s from './schemas.ts';

const tags = ['admin', 'reconciliation'];

/** The reconciliation operations, closed over the module's deps. */
export const reconciliationOperations = (
  deps: Pick<RunDeps, 'db' | 'clock' | 'jobs'>,
  resolve: ResolveDeps,
) => [
  defineOperation({
    name: 'adminRunReconciliation',
    method: 'POST',
    auth: 'admin',
    summary:
      "Compare one source's own records of a period with ours, as a job: answers at once with status running; adminGetReconciliation shows the counts and items once done. A date-only from/to is a whole Lagos day; at most 31 days",
    tags,
    input: s.runReconciliationInput,
    output: s.reconciliationRun,
    errors: [],
    handler: async ({ caller, input }) => {
      const { from, before } = dateRangeOf(input);
      const period = { from: from!, to: before! };
      if (period.to.getTime() - period.from.getTime() > s.periodDaysMax * 86_400_000) {
        throw new AppError('VALIDATION_ERROR', `a run compares at most ${s.periodDaysMax} days`, {
          details: { field: 'to', limit: s.periodDaysMax },
        });
      }
      const run = await startRun(deps, { source: input.source, ...period, requestedBy: caller.userId });
      return runView(run!);
    },
  }),
  defineOperation({
    name: 'adminGetReconciliation',
    method: 'GET',
    auth: 'admin',
    summary:
      'One run: its counts and its items, the worst buckets first (statusMismatch, amountMismatch, missingHere, missingThere, matched), each with our record and theirs side by side and its resolution',
    tags,
    input: s.getReconciliationInput,
    output: s.reconciliationWithItems,
    errors: ['NOT_FOUND'],
    handler: async ({ input }) => {
      const run = await getRun(deps.db, input.id);
      const { items, total } = await runItems(
        deps.db,
        run.id,
        { bucket: input.bucket },
        { limit: input.limit, offset: input.offset },
      );
      return { ...runView(run), items: items.map((item) => itemView(item, run.source)), itemCount: total };
    },
  }),
  defineOperation({
    name: 'adminListReconciliations',
    method: 'GET',
    auth: 'admin',
    summary: 'Reconciliation runs, newest first (of one source when asked), with their counts',
    tags,
    input: s.listReconciliationsInput,
    output: s.listReconciliationsOutput,
    errors: [],
    handler: async ({ input }) => {
      const page = { limit: input.limit, offset: input.offset };
      const { items, total } = await listRuns(deps.db, { source: input.source }, page);
      return { items: items.map(runView), ...page, total };
    },
  }),
  defineOperation({
    name: 'adminResolveReconciliationItem',
    method: 'POST',
    auth: 'admin',
    summary:
      "Resolve one item, once, with the reason: credit (a payment the provider took and we never credited, through the verified top-up's once-only path), requery (ask the VTU provider again), ignore. One already resolved, or an action that does not fit it, is 409 CONFLICT with details.reason",
    tags,
    input: s.resolveItemInput,
    output: s.reconciliationItem,
    errors: ['NOT_FOUND', 'CONFLICT', 'UPSTREAM_UNAVAILABLE'],
    handler: ({ caller, input }) => resolveItem(resolve, caller.userId, input),
  }),
];
