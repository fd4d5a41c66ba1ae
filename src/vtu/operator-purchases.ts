import type { Kysely } from 'kysely';
import type { z } from 'zod';
import { dateRangeOf } from '../date-filter.ts';
import type { DB } from '../db/schema.ts';
import type { DateRange } from '../lagos-time.ts';
import { koboToNaira } from '../money.ts';
import { defineOperation } from '../operation.ts';
import { newestFirstPage, type Page } from '../paging.ts';
import type { VtuTransaction } from './purchases.ts';
import * as s from './schemas.ts';

// The operators' view of everyone's purchases (issue 40: every incident without SQL): a page of
// them, newest first, and, over everything the filter matches, how many each provider settled of
// each status with each failure reason, which is what BillrailPurchasesFailing asks
// ("what is the provider refusing?").

type Output = z.input<typeof s.adminListPurchasesOutput>;

export type OperatorPurchaseFilter = {
  status?: 'processing' | 'success' | 'failed' | undefined;
  service?: string | undefined;
  provider?: string | undefined;
  userId?: string | undefined;
  /** When it was made (a date is a whole Lagos day). */
  range: DateRange;
};

const toView = (row: VtuTransaction): Output['items'][number] => ({
  id: row.id,
  reference: row.reference,
  userId: row.user_id,
  service: row.service,
  provider: row.provider,
  network: row.network,
  recipient: row.recipient,
  direction: row.direction,
  amount: koboToNaira(row.amount),
  status: row.status,
  failureReason: row.failure_reason,
  createdAt: row.created_at.toISOString(),
  completedAt: row.completed_at?.toISOString() ?? null,
});

/** A page of the purchases the filter matches, newest first, and the counts over all of them. */
export async function listPurchasesForOperators(
  db: Kysely<DB>,
  filter: OperatorPurchaseFilter,
  page: Page,
): Promise<Output> {
  let query = db.selectFrom('vtu_transactions');
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.service !== undefined) query = query.where('service', '=', filter.service);
  if (filter.provider !== undefined) query = query.where('provider', '=', filter.provider);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.range.from !== undefined) query = query.where('created_at', '>=', filter.range.from);
  if (filter.range.before !== undefined) query = query.where('created_at', '<', filter.range.before);
  const [{ rows, total }, counted] = await Promise.all([
    newestFirstPage(query, page),
    query
      .select((eb) => ['provider', 'status', 'failure_reason', eb.fn.countAll<string>().as('n')])
      .groupBy(['provider', 'status', 'failure_reason'])
      .execute(),
  ]);
  const counts = counted
    .map((c) => ({
      provider: c.provider,
      status: c.status,
      failureReason: c.failure_reason,
      count: Number(c.n),
    }))
    // The largest first; ties in one order, whatever the database returns them in.
    .sort(
      (a, b) =>
        b.count - a.count ||
        a.provider.localeCompare(b.provider) ||
        a.status.localeCompare(b.status) ||
        (a.failureReason ?? '').localeCompare(b.failureReason ?? ''),
    );
  return { items: rows.map(toView), limit: page.limit, offset: page.offset, total, counts };
}

export const operatorPurchaseOperations = (deps: { db: Kysely<DB> }) => [
  defineOperation({
    name: 'adminListPurchases',
    method: 'GET',
    auth: 'admin',
    summary: 'Everyone’s purchases, newest first, with their counts by provider, status and failure reason',
    description:
      'Everyone’s purchases, newest first, with their counts by provider, status and failure reason. Filtered by status, service, provider, person (`userId`) and when they were made (`from`/`to`: whole Africa/Lagos days when given as dates, or instants with their offset): reference, person, service, provider, amount, status, the reason the provider gave for a failure, and when it was made and settled. `counts` counts every purchase the filter matches, not only the page, by provider, status and failure reason, the largest first',
    tags: ['admin'],
    input: s.adminListPurchasesInput,
    output: s.adminListPurchasesOutput,
    errors: [],
    handler: ({ input }) =>
      listPurchasesForOperators(
        deps.db,
        {
          status: input.status,
          service: input.service,
          provider: input.provider,
          userId: input.userId,
          range: dateRangeOf(input),
        },
        { limit: input.limit, offset: input.offset },
      ),
  }),
];
