import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB, DisputesTable } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { koboToNaira } from '../money.ts';
import { newestFirstPage, type Page } from '../paging.ts';
import { findMovement, type PurchaseRecordOf } from './movements.ts';
import type { AdminDisputeView, DisputeStatus, DisputeView, ReportProblemRequest } from './schemas.ts';

// Disputes (API.md section 16): a person reports a problem with a movement of their wallet, within
// DISPUTE_WINDOW_DAYS of it; one dispute per person and movement is open at a time. The partial
// unique index on (user_id, reference) where open decides that, in the statement that opens it:
// two reports racing (two devices, two processes) both try the insert, and the index lets one in.

export type DisputeDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  /** How many days after a movement it may still be reported. */
  windowDays: number;
  /** What the purchases keep about one of a user's purchases (the vtu module's api). */
  purchaseRecord: PurchaseRecordOf;
  /** The phones of users by id (the auth module's api): whom an operator would call. */
  phonesOf: (db: Kysely<DB>, ids: readonly string[]) => Promise<Map<string, string>>;
};

export type DisputeRow = Selectable<DisputesTable>;

const dayMs = 86_400_000;

export function toView(row: DisputeRow): DisputeView {
  return {
    id: row.id,
    reference: row.reference,
    reason: row.reason,
    message: row.message,
    status: row.status,
    ...(row.resolution === null ? {} : { resolution: row.resolution }),
    ...(row.status === 'refunded' ? { refunded: koboToNaira(row.refunded) } : {}),
    createdAt: row.created_at.toISOString(),
    ...(row.resolved_at === null ? {} : { resolvedAt: row.resolved_at.toISOString() }),
  };
}

/**
 * Opens a dispute on one of the caller's movements. A reference that names none of theirs is 404
 * (another person's movement looks like no movement at all); a movement older than the window is
 * 422 ABOVE_MAXIMUM (details.limit in days); a dispute already open on it is 409 CONFLICT.
 */
export async function reportProblem(
  deps: DisputeDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  request: ReportProblemRequest,
): Promise<DisputeView> {
  const movement = await findMovement(deps.db, deps.purchaseRecord, userId, request.reference);
  if (movement === undefined) throw notFound('transaction');
  const now = deps.clock.now();
  if (now.getTime() - movement.createdAt.getTime() > deps.windowDays * dayMs) {
    throw new AppError(
      'ABOVE_MAXIMUM',
      `a problem can be reported within ${deps.windowDays} days of the transaction`,
      { details: { limit: deps.windowDays, unit: 'days' } },
    );
  }
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const opened = await trx
      .insertInto('disputes')
      .values({
        id: newId(),
        user_id: userId,
        reference: movement.reference,
        movement: movement.kind,
        purchase_id: movement.kind === 'purchase' ? movement.purchase.view.id : null,
        description: movement.description,
        charged: movement.chargedKobo,
        movement_at: movement.createdAt,
        reason: request.reason,
        message: request.message,
        status: 'open',
        created_at: now,
      })
      .onConflict((oc) => oc.columns(['user_id', 'reference']).where('status', '=', 'open').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (opened === undefined) {
      throw new AppError('CONFLICT', `a problem with ${movement.reference} is already reported and open`);
    }
    return toView(opened);
  });
}

const disputesQuery = (db: Kysely<DB>) => db.selectFrom('disputes');
type DisputesQuery = ReturnType<typeof disputesQuery>;

/** The caller's disputes, newest first; of one movement when a reference names one of theirs. */
export async function listMyDisputes(
  deps: Pick<DisputeDeps, 'db' | 'purchaseRecord'>,
  userId: string,
  filter: { status?: DisputeStatus | undefined; reference?: string | undefined },
  page: Page,
): Promise<{ items: DisputeView[]; limit: number; offset: number; total: number }> {
  let query = disputesQuery(deps.db).where('user_id', '=', userId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.reference !== undefined) {
    // Disputes are kept under the movement's own reference: a purchase's wallet movements name it.
    const movement = await findMovement(deps.db, deps.purchaseRecord, userId, filter.reference);
    query = query.where('reference', '=', movement?.reference ?? filter.reference);
  }
  return paged(query, page, toView);
}

async function paged<T>(
  query: DisputesQuery,
  page: Page,
  view: (row: DisputeRow) => T | Promise<T>,
): Promise<{ items: T[]; limit: number; offset: number; total: number }> {
  const { rows, total } = await newestFirstPage(query, page);
  return { items: await Promise.all(rows.map(view)), limit: page.limit, offset: page.offset, total };
}

/**
 * Every dispute, or those of one status, newest first, each with its movement: for a purchase, the
 * purchase as its buyer sees it and what the purchases keep of the exchange with the provider and
 * the requery; and what a refund may still give back.
 */
export async function adminListDisputes(
  deps: Pick<DisputeDeps, 'db' | 'purchaseRecord' | 'phonesOf'>,
  filter: { status?: DisputeStatus | undefined },
  page: Page,
): Promise<{ items: AdminDisputeView[]; limit: number; offset: number; total: number }> {
  let query = disputesQuery(deps.db);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  const listed = await paged(query, page, async (row) => {
    const purchase =
      row.purchase_id === null
        ? undefined
        : await deps.purchaseRecord(deps.db, row.user_id, { id: row.purchase_id });
    const refundable = await refundableKobo(deps.db, row, purchase?.stillChargedKobo);
    return {
      ...toView(row),
      userId: row.user_id,
      transaction: {
        kind: row.movement,
        reference: row.reference,
        description: row.description,
        charged: koboToNaira(row.charged),
        createdAt: row.movement_at.toISOString(),
        ...(purchase === undefined
          ? {}
          : {
              purchase: {
                id: purchase.view.id,
                status: purchase.view.status,
                service: purchase.view.service,
                provider: purchase.view.provider,
                ...(purchase.view.network === undefined ? {} : { network: purchase.view.network }),
                recipient: purchase.view.recipient,
                amount: purchase.view.amount,
                direction: purchase.view.direction,
                ...(purchase.view.refunded === undefined ? {} : { refunded: purchase.view.refunded }),
                ...(purchase.view.token === undefined ? {} : { token: purchase.view.token }),
                ...(purchase.view.pins === undefined ? {} : { pins: purchase.view.pins }),
                ...(purchase.view.failureReason === undefined
                  ? {}
                  : { failureReason: purchase.view.failureReason }),
              },
              exchange: purchase.exchange,
            }),
      },
      refundable: refundable === null ? null : koboToNaira(refundable),
    };
  });
  const phones = await deps.phonesOf(deps.db, [...new Set(listed.items.map((d) => d.userId))]);
  return {
    ...listed,
    items: listed.items.map((d) => ({ ...d, phone: phones.get(d.userId) ?? '' })),
  };
}

/**
 * Kobo a refund of this dispute may still give back: what the movement still takes from the person
 * (for a purchase, what it charged less what its failure or part delivery refunded; null while it is
 * processing, whose outcome may yet refund it), less what the disputes of the same movement gave
 * back, this one's included: a dispute already refunded is not shown its own refund as still to give.
 * At most one is open at a time (an open one gave back nothing yet), so nothing changes that sum while
 * one is resolved; the purchase's part is final once it left processing.
 */
export async function refundableKobo(
  db: Kysely<DB> | Transaction<DB>,
  row: DisputeRow,
  purchaseStillCharged: bigint | null | undefined,
): Promise<bigint | null> {
  const stillCharged = row.movement === 'purchase' ? purchaseStillCharged : row.charged;
  if (stillCharged === null || stillCharged === undefined) return null;
  const given = await db
    .selectFrom('disputes')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<bigint>('refunded'), eb.lit(0)).as('total'))
    .where('user_id', '=', row.user_id)
    .where('reference', '=', row.reference)
    .executeTakeFirstOrThrow();
  const left = stillCharged - BigInt(given.total);
  return left > 0n ? left : 0n;
}
