import type { Kysely, Selectable } from 'kysely';
import type { Clock } from '../clock.ts';
import type { AdjustmentsTable, DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { LimitsApi } from '../limits/module.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import { newestFirstPage, type Page } from '../paging.ts';
import { adjustmentPostings } from './postings.ts';
import type { AdjustmentStatus, AdjustmentView, ProposeAdjustmentRequest } from './schemas.ts';

// Adjustments (API.md section 17.4): an operator's correction of a person's wallet, proposed by one
// operator and posted only once another approves it (decisions.ts). A proposal moves no money: it
// is a row, listed for the other operators to decide on.

export type AdjustmentDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  /** The person to adjust, by id (auth's api): a proposal for no one is 404. */
  findUserById: (userId: string) => Promise<object | undefined>;
  /** The phones of users by id (auth's api): whom the operators are correcting. */
  phonesOf: (db: Kysely<DB>, ids: readonly string[]) => Promise<Map<string, string>>;
  /** A credit split at the person's maximum balance, the part over it held (limits' api). */
  limits: Pick<LimitsApi, 'splitCredits' | 'creditEntries' | 'announceHeld'>;
};

export type AdjustmentRow = Selectable<AdjustmentsTable>;

/** The row as operators see it, with the person's phone. */
export function toView(row: AdjustmentRow, phone: string): AdjustmentView {
  return {
    id: row.id,
    userId: row.user_id,
    phone,
    direction: row.direction,
    amount: koboToNaira(row.amount),
    reason: row.reason,
    status: row.status,
    proposedBy: row.proposed_by,
    proposedAt: row.created_at.toISOString(),
    ...(row.decided_by === null ? {} : { decidedBy: row.decided_by }),
    ...(row.decided_at === null ? {} : { decidedAt: row.decided_at.toISOString() }),
    ...(row.reject_reason === null ? {} : { rejectReason: row.reject_reason }),
    ...(row.status === 'approved' ? { reference: adjustmentPostings.posting(row.id) } : {}),
  };
}

/** The rows as operators see them: the phones in one read. */
export async function viewsOf(
  deps: Pick<AdjustmentDeps, 'db' | 'phonesOf'>,
  rows: readonly AdjustmentRow[],
): Promise<AdjustmentView[]> {
  const phones = await deps.phonesOf(deps.db, [...new Set(rows.map((row) => row.user_id))]);
  return rows.map((row) => toView(row, phones.get(row.user_id) ?? ''));
}

/**
 * Records a proposal; nothing moves until another operator approves it. Its row commits with the
 * Idempotency-Key's answer, so a retry with the key never proposes it twice. An unknown person is 404.
 */
export async function proposeAdjustment(
  deps: AdjustmentDeps,
  withCommit: WithCommit | undefined,
  adminId: string,
  request: ProposeAdjustmentRequest,
): Promise<AdjustmentView> {
  if ((await deps.findUserById(request.userId)) === undefined) throw notFound('user');
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const row = await trx
      .insertInto('adjustments')
      .values({
        id: newId(),
        user_id: request.userId,
        direction: request.direction,
        amount: nairaToKobo(request.amount),
        reason: request.reason,
        status: 'proposed',
        proposed_by: adminId,
        created_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    // The answer is written with the row (the Idempotency-Key's), so it is made in the transaction.
    const [view] = await viewsOf({ db: trx, phonesOf: deps.phonesOf }, [row]);
    return view!;
  });
}

/** Every adjustment, or those of one status, newest proposal first. */
export async function listAdjustments(
  deps: Pick<AdjustmentDeps, 'db' | 'phonesOf'>,
  filter: { status?: AdjustmentStatus | undefined },
  page: Page,
): Promise<{ items: AdjustmentView[]; limit: number; offset: number; total: number }> {
  let query = deps.db.selectFrom('adjustments');
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  const { rows, total } = await newestFirstPage(query, page);
  return { items: await viewsOf(deps, rows), limit: page.limit, offset: page.offset, total };
}
