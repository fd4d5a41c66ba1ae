import { type Kysely, type Selectable, sql, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { DB, SchedulesTable } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { requireWithin } from '../limits.ts';
import { newestFirstPage } from '../paging.ts';
import type { VtuApi } from '../vtu/module.ts';
import { nextDueAfter } from './recurrence.ts';
import {
  type CreateScheduleRequest,
  type Frequency,
  openSchedulesPerUserMax,
  type ScheduleService,
  type ScheduleStatus,
  type ScheduleView,
  startAheadDaysMax,
} from './schemas.ts';

// Scheduled purchases (API.md section 16): a purchase approved once with the PIN and made by the
// service at its due times (runner.ts). Creating one runs the purchase's own checks now, through the
// vtu api, so that a wrong recipient, a plan that does not exist or a stale price is refused before
// anything is kept, in the words the buy operation would use.
//
// The number of open schedules (active or paused) per user is decided under a per-user advisory lock,
// as beneficiaries do: two creations at 49 would otherwise both count 49 and both insert.

export type ScheduleDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  logger: Logger;
  /** The purchases: the PIN's approval, a run's checks and price, and the one purchase pipeline. */
  vtu: Pick<
    VtuApi,
    'authorise' | 'requireOpen' | 'orderFor' | 'buyTogether' | 'chargeOf' | 'purchaseReference'
  >;
  config: {
    /** Runs the wallet could not cover in a row that pause a schedule (SCHEDULE_SKIPS_MAX). */
    skipsMax: number;
  };
};

export type ScheduleRow = Selectable<SchedulesTable>;

/** How far in the past a start may be (a form filled in a minute ago): it is then due at once. */
const startGraceMs = 5 * 60_000;

export function toView(row: ScheduleRow): ScheduleView {
  const order = typeof row.order_fields === 'string' ? JSON.parse(row.order_fields) : row.order_fields;
  return {
    id: row.id,
    service: row.service as ScheduleService,
    order: order as Record<string, unknown>,
    status: row.status,
    nextRunAt: new Date(row.next_run_at).toISOString(),
    ...(row.every === null ? {} : { every: row.every as Frequency }),
    ...(row.ends_at === null ? {} : { endsAt: new Date(row.ends_at).toISOString() }),
    ...(row.runs_max === null ? {} : { runsMax: row.runs_max }),
    priceTolerancePercent: row.price_tolerance_percent,
    runs: row.runs,
    skipsInRow: row.skips_in_row,
    ...(row.paused_reason === null ? {} : { pausedReason: row.paused_reason }),
    createdAt: new Date(row.created_at).toISOString(),
  };
}

function invalid(path: string, message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, {
    details: { issues: [{ path: ['data', path], message }] },
  });
}

/** Holds this user's schedule decisions one at a time until the transaction ends. */
async function lockUserSchedules(trx: Transaction<DB>, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`schedules:${userId}`}))`.execute(trx);
}

/**
 * Creates a schedule: the PIN approves it (Tier 1, the PIN with its lockout), then the order is
 * checked and priced as its buy operation would check it now, then it is kept, active, due at its
 * start.
 */
export async function createSchedule(
  deps: ScheduleDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  request: CreateScheduleRequest,
): Promise<ScheduleView> {
  const now = deps.clock.now();
  const startAt = new Date(request.startAt);
  if (startAt.getTime() < now.getTime() - startGraceMs) throw invalid('startAt', 'startAt is in the past');
  if (startAt.getTime() > now.getTime() + startAheadDaysMax * 86_400_000) {
    throw invalid('startAt', `startAt is more than ${startAheadDaysMax} days ahead`);
  }
  const endsAt = request.endsAt === undefined ? null : new Date(request.endsAt);
  if (endsAt !== null && endsAt.getTime() <= now.getTime()) throw invalid('endsAt', 'endsAt is in the past');

  await deps.vtu.authorise(userId, request.pin);
  // The purchase's own checks and price now (a refusal is the buy operation's own AppError).
  await deps.vtu.orderFor(userId, request.service, request.order as never);

  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    await lockUserSchedules(trx, userId);
    const { count } = await trx
      .selectFrom('schedules')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('user_id', '=', userId)
      .where('status', 'in', ['active', 'paused'])
      .executeTakeFirstOrThrow();
    requireWithin(
      Number(count) + 1,
      'number of open schedules',
      { min: 1, max: openSchedulesPerUserMax },
      'count',
    );
    const row = await trx
      .insertInto('schedules')
      .values({
        id: newId(),
        user_id: userId,
        service: request.service,
        order_fields: JSON.stringify(request.order),
        every: request.every ?? null,
        starts_at: startAt,
        ends_at: endsAt,
        runs_max: request.every === undefined ? 1 : (request.runsMax ?? null),
        price_tolerance_percent: request.priceTolerancePercent,
        status: 'active',
        next_run_at: startAt,
        runs: 0,
        skips_in_row: 0,
        paused_reason: null,
        created_at: now,
        updated_at: now,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toView(row);
  });
}

/** The caller's schedules, newest first, with the total. */
export async function listSchedules(
  db: Kysely<DB>,
  userId: string,
  status: ScheduleStatus | undefined,
  page: { limit: number; offset: number },
): Promise<{ items: ScheduleView[]; limit: number; offset: number; total: number }> {
  let query = db.selectFrom('schedules').where('user_id', '=', userId);
  if (status !== undefined) query = query.where('status', '=', status);
  const { rows, total } = await newestFirstPage(query, page);
  return { items: rows.map(toView), limit: page.limit, offset: page.offset, total };
}

/**
 * Changes a schedule's state under its row lock: `change` answers the columns to set, or throws a
 * 409 CONFLICT when the schedule's status does not allow it. Another user's id is 404.
 */
async function changeSchedule(
  deps: ScheduleDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  id: string,
  change: (row: ScheduleRow, now: Date) => Partial<Omit<ScheduleRow, 'id' | 'user_id'>>,
): Promise<ScheduleView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const row = await trx
      .selectFrom('schedules')
      .selectAll()
      .where('id', '=', id)
      .where('user_id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) throw notFound('schedule');
    const updated = await trx
      .updateTable('schedules')
      .set({ ...change(row, now), updated_at: now } as never)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toView(updated);
  });
}

const conflict = (row: ScheduleRow, action: string) =>
  new AppError('CONFLICT', `a schedule that is ${row.status} cannot be ${action}`, {
    details: { status: row.status },
  });

/** Pauses an active schedule: no run is made until it is resumed. Pausing a paused one is a no-op. */
export const pauseSchedule = (
  deps: ScheduleDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  id: string,
) =>
  changeSchedule(deps, withCommit, userId, id, (row) => {
    if (row.status === 'paused') return {};
    if (row.status !== 'active') throw conflict(row, 'paused');
    return { status: 'paused', paused_reason: 'paused by you' };
  });

/**
 * Resumes a paused schedule with a clean count of skips. A due time that passed while it was paused
 * is not made up: it is next due at its first due time from now (or ends, when none is left before
 * endsAt); a one-off is due at once.
 * Resuming an active one is a no-op.
 */
export const resumeSchedule = (
  deps: ScheduleDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  id: string,
) =>
  changeSchedule(deps, withCommit, userId, id, (row, now) => {
    if (row.status === 'active') return {};
    if (row.status !== 'paused') throw conflict(row, 'resumed');
    const due = new Date(row.next_run_at);
    let next = due;
    if (due.getTime() < now.getTime()) {
      // A one-off resumed after its time is what the person still wants now.
      if (row.every === null)
        return { status: 'active', paused_reason: null, skips_in_row: 0, next_run_at: now };
      next = nextDueAfter(new Date(row.starts_at), row.every as Frequency, due, now);
    }
    if (row.ends_at !== null && next.getTime() > new Date(row.ends_at).getTime()) {
      return { status: 'ended', paused_reason: null, skips_in_row: 0 };
    }
    return { status: 'active', paused_reason: null, skips_in_row: 0, next_run_at: next };
  });

/** Cancels a schedule for good: no run is made after it. Cancelling a cancelled one is a no-op. */
export const cancelSchedule = (
  deps: ScheduleDeps,
  withCommit: WithCommit | undefined,
  userId: string,
  id: string,
) =>
  changeSchedule(deps, withCommit, userId, id, (row) => {
    if (row.status === 'cancelled') return {};
    if (row.status === 'ended') throw conflict(row, 'cancelled');
    return { status: 'cancelled', paused_reason: null };
  });
