import assert from 'node:assert/strict';
import { sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { CommitWriter, WithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import { type DomainEvent, publishEvents } from '../events/domain-events.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { formatNaira, nairaToKobo } from '../money.ts';
import type { PurchaseFields, PurchaseOrder, VtuTransactionView } from '../vtu/module.ts';
import { nextDueAfter, referenceFresh, runReference } from './recurrence.ts';
import type { Frequency, ScheduleService } from './schemas.ts';
import type { ScheduleDeps, ScheduleRow } from './service.ts';

// The runner: every minute (and whenever the sandbox clock moves), the active schedules that are due
// are run in batches. Each run is an ordinary purchase through the vtu api, the one pipeline, under a
// reference derived from the schedule and the due time (recurrence.ts).
//
// A run happens at most once, across restarts and any number of workers:
// 1. A runner claims a batch of due schedules in one short transaction (FOR UPDATE SKIP LOCKED: two
//    runners never claim the same row), writing the due time, the run's reference and a lease.
// 2. It runs them outside any transaction of its own. The purchase's acceptance transaction also
//    records the purchase on the schedule (a unit-of-work write, recordRunPurchases), fenced on the
//    reference: a runner whose claim was taken over cannot commit a purchase, and a purchase that
//    committed is known to whoever takes the run up next.
// 3. It finishes them in one transaction, fenced the same way: the schedule moves to its next due
//    time (or ends, or pauses), and a skip or a pause is published for the person's inbox.
// A runner that dies leaves its claims to lapse; the next runner takes the run up under the same
// reference (and finds its purchase, if it was made), or, once that reference is too old for the
// provider to take, under a new one, which is safe because the old one can no longer commit.

export const schedulesRunDueJob = defineJob('schedules-run-due', noPayload);

/** Schedules claimed, run side by side and finished together. */
export const claimBatchMax = 100;
/** How long a claim holds a run before another runner may take it up. */
const claimLeaseMs = 60_000;
/** Batches one pass runs at most, so one job's run is bounded (the next minute's takes the rest). */
const batchesPerPassMax = 200;

type Claimed = {
  row: ScheduleRow;
  dueAt: Date;
  reference: string;
  claimedAt: Date;
  /** The purchase of this due time was already made (by a runner that died before finishing). */
  bought: boolean;
};

type Outcome =
  | { kind: 'ran' }
  /**
   * Not made this time. Without a reason, the wallet did not cover it (counted toward
   * SCHEDULE_SKIPS_MAX); with one, something the person's wallet is not to blame for (a frozen
   * account): not counted, and the schedule goes on to its next run.
   */
  | { kind: 'skipped'; amountKobo: bigint; reason?: string }
  | { kind: 'paused'; reason: string }
  /** Not decided (the provider's catalogue unreachable, the database): the claim lapses and it runs again. */
  | { kind: 'retry' };

export type RunCounts = { claimed: number; ran: number; skipped: number; paused: number; retried: number };

/** Runs every due schedule, a batch at a time, until none is left due (or the pass's bound). */
export async function runDueSchedules(deps: ScheduleDeps): Promise<RunCounts> {
  const counts: RunCounts = { claimed: 0, ran: 0, skipped: 0, paused: 0, retried: 0 };
  for (let batch = 0; batch < batchesPerPassMax; batch++) {
    const claimed = await claimDueRuns(deps, deps.clock.now());
    if (claimed.length === 0) break;
    counts.claimed += claimed.length;
    const outcomes = await Promise.all(claimed.map((run) => runClaimed(deps, run)));
    await finishRuns(deps, claimed, outcomes);
    for (const outcome of outcomes) {
      if (outcome.kind === 'ran') counts.ran++;
      else if (outcome.kind === 'skipped') counts.skipped++;
      else if (outcome.kind === 'paused') counts.paused++;
      else counts.retried++;
    }
  }
  return counts;
}

/** Claims a batch of due, unclaimed (or lapsed) active schedules for this runner. */
async function claimDueRuns(deps: ScheduleDeps, now: Date): Promise<Claimed[]> {
  return deps.db.transaction().execute(async (trx) => {
    const rows = await trx
      .selectFrom('schedules')
      .selectAll()
      .where('status', '=', 'active')
      .where('next_run_at', '<=', now)
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<=', now)]))
      .orderBy('next_run_at')
      .limit(claimBatchMax)
      .forUpdate()
      .skipLocked()
      .execute();
    if (rows.length === 0) return [];
    const claimed = rows.map((row): Claimed => {
      const dueAt = new Date(row.next_run_at);
      const sameRun =
        row.run_due_at !== null &&
        row.run_reference !== null &&
        row.run_claimed_at !== null &&
        new Date(row.run_due_at).getTime() === dueAt.getTime();
      const bought = sameRun && row.run_purchase_id !== null;
      // The run taken up again keeps its reference while the provider would still take it.
      if (sameRun && (bought || referenceFresh(new Date(row.run_claimed_at!), now))) {
        return {
          row,
          dueAt,
          reference: row.run_reference!,
          claimedAt: new Date(row.run_claimed_at!),
          bought,
        };
      }
      return {
        row,
        dueAt,
        reference: runReference(deps.vtu, row.id, dueAt, now),
        claimedAt: now,
        bought: false,
      };
    });
    const column = <T>(pick: (run: Claimed) => T) => claimed.map(pick);
    await sql`
      update schedules s
      set run_due_at = c.due_at, run_reference = c.reference, run_claimed_at = c.claimed_at,
        run_purchase_id = case when c.bought then s.run_purchase_id else null end,
        claimed_until = ${new Date(now.getTime() + claimLeaseMs)}::timestamptz
      from unnest(${column((run) => run.row.id)}::uuid[], ${column((run) => run.dueAt)}::timestamptz[],
        ${column((run) => run.reference)}::text[], ${column((run) => run.claimedAt)}::timestamptz[],
        ${column((run) => run.bought)}::boolean[]) as c(id, due_at, reference, claimed_at, bought)
      where s.id = c.id`.execute(trx);
    return claimed;
  });
}

type RunPurchase = { id: string; reference: string; purchaseId: string };

/**
 * Written by the acceptance's own transaction (the vtu module's group commit, for all the runs it
 * accepts at once): the purchase of each claimed run, only where the claim still holds that reference.
 * A claim taken over, or a schedule paused or cancelled while its run was in hand, throws, and the
 * acceptance rolls back: that purchase is never made.
 */
const recordRunPurchases: CommitWriter<RunPurchase> = async (trx: Transaction<DB>, runs) => {
  const updated = await sql<{ id: string }>`
    update schedules s set run_purchase_id = r.purchase_id
    from unnest(${runs.map((run) => run.id)}::uuid[], ${runs.map((run) => run.reference)}::text[],
      ${runs.map((run) => run.purchaseId)}::uuid[]) as r(id, reference, purchase_id)
    where s.id = r.id and s.run_reference = r.reference and s.status = 'active'
    returning s.id`.execute(trx);
  if (updated.rows.length !== runs.length) {
    throw new Error('a scheduled run’s claim was taken over by another runner; its purchase is not made');
  }
};

/** The unit-of-work write a run's purchase commits with: it records the purchase on its claim. */
export const runCommit = (scheduleId: string, reference: string): WithCommit => ({
  writeFor: (result) => ({
    writer: recordRunPurchases as CommitWriter<never>,
    row: { id: scheduleId, reference, purchaseId: (result as VtuTransactionView[])[0]!.id },
  }),
  committed: () => {},
});

const orderOf = (row: ScheduleRow): Record<string, unknown> =>
  (typeof row.order_fields === 'string' ? JSON.parse(row.order_fields) : row.order_fields) as Record<
    string,
    unknown
  >;

/** What the person approved a run at (the stored order's amount, naira), in kobo. */
const approvedKobo = (row: ScheduleRow): bigint => {
  const { amount } = orderOf(row);
  return typeof amount === 'number' ? nairaToKobo(amount) : 0n;
};

/**
 * The run's order as the buy operation would check and price it now. A plan or bouquet whose price
 * moved (409 PRICE_CHANGED with the price now) runs at the price now when it is within the schedule's
 * tolerance of the approved one (the stored order's amount), and pauses the schedule otherwise.
 */
async function orderNow(deps: ScheduleDeps, run: Claimed): Promise<PurchaseOrder | { paused: string }> {
  const { row } = run;
  const service = row.service as ScheduleService;
  const fields = orderOf(row);
  const orderFor = (given: Record<string, unknown>) =>
    deps.vtu.orderFor(row.user_id, service, given as PurchaseFields[typeof service]);
  try {
    return await orderFor(fields);
  } catch (error) {
    const price =
      error instanceof AppError && error.code === 'PRICE_CHANGED' ? error.details?.amount : undefined;
    if (typeof price !== 'number' || typeof fields.amount !== 'number') throw error;
    const approvedKobo = nairaToKobo(fields.amount);
    const nowKobo = nairaToKobo(price);
    const tolerance = BigInt(row.price_tolerance_percent);
    if (nowKobo * 100n > approvedKobo * (100n + tolerance)) {
      return {
        paused: `the price rose from ${formatNaira(approvedKobo)} to ${formatNaira(nowKobo)}, more than the ${row.price_tolerance_percent}% you allowed`,
      };
    }
    return orderFor({ ...fields, amount: price });
  }
}

/** One claimed run: its purchase, or why it was skipped or paused, or that it must run again. */
async function runClaimed(deps: ScheduleDeps, run: Claimed): Promise<Outcome> {
  if (run.bought) return { kind: 'ran' };
  let order: PurchaseOrder | undefined;
  try {
    // An operator's pause of the service (or its provider) skips the run before it is priced.
    await deps.vtu.requireOpen(run.row.service as ScheduleService);
    const now = await orderNow(deps, run);
    if ('paused' in now) return { kind: 'paused', reason: now.paused };
    order = now;
    // A group of one, in a transaction of its own: should the claim have been taken over, its
    // unit of work refuses this run alone, not the strangers' purchases of a shared batch.
    await deps.vtu.buyTogether(run.row.user_id, [order], runCommit(run.row.id, run.reference), [
      run.reference,
    ]);
    return { kind: 'ran' };
  } catch (error) {
    if (!(error instanceof AppError)) {
      // The database, a claim taken over, a bug: nothing is decided; the run is taken up again.
      deps.logger.warn({ err: error, scheduleId: run.row.id }, 'scheduled run failed; it runs again');
      return { kind: 'retry' };
    }
    switch (error.code) {
      case 'INSUFFICIENT_FUNDS':
        assert.ok(order !== undefined, 'only the debit refuses for funds');
        return { kind: 'skipped', amountKobo: deps.vtu.chargeOf(order) };
      case 'ACCOUNT_FROZEN':
        // An operator froze the account (decided under the wallet's lock, as any debit): this run is
        // skipped, and the next ones run once it is unfrozen, without the person resuming anything.
        assert.ok(order !== undefined, 'only the debit refuses a frozen account');
        return {
          kind: 'skipped',
          amountKobo: deps.vtu.chargeOf(order),
          reason: 'your account is frozen; contact support',
        };
      case 'LIMIT_EXCEEDED':
        // The day's debit limit (API.md 17.2, judged under the wallet's lock): this run is skipped
        // with what remains today, and the next runs come as due, on their own days.
        assert.ok(order !== undefined, 'only the debit judges the daily limit');
        return { kind: 'skipped', amountKobo: deps.vtu.chargeOf(order), reason: error.message };
      case 'SERVICE_PAUSED':
        // An operator paused the service (decision 0042): this run is skipped with the operator's
        // reason, not counted against the person, and the next run comes as due. Refused before its
        // order was priced, it names the amount the person approved.
        return {
          kind: 'skipped',
          amountKobo: order === undefined ? approvedKobo(run.row) : deps.vtu.chargeOf(order),
          reason: error.message,
        };
      case 'UPSTREAM_UNAVAILABLE':
      case 'RATE_LIMITED':
        return { kind: 'retry' };
      default:
        // KYC tier lost, a plan withdrawn, a number moved network, ...: the person has to look.
        return { kind: 'paused', reason: error.message };
    }
  }
}

type Finish = {
  id: string;
  reference: string;
  status: 'active' | 'paused' | 'ended';
  reason: string | null;
  nextRunAt: Date;
  runsAdded: number;
  skipsInRow: number;
  event: DomainEvent | null;
};

/** What a decided run does to its schedule: the next due time, or the end, or a pause. */
function finishOf(
  deps: ScheduleDeps,
  run: Claimed,
  outcome: Exclude<Outcome, { kind: 'retry' }>,
  now: Date,
): Finish {
  const { row, dueAt } = run;
  const base = { id: row.id, reference: run.reference, runsAdded: 0, skipsInRow: row.skips_in_row };
  const eventBase = {
    userId: row.user_id,
    scheduleId: row.id,
    service: row.service,
    dueAt: dueAt.toISOString(),
    occurredAt: now.toISOString(),
  };
  if (outcome.kind === 'paused') {
    // Due where it stopped: resuming moves it on from there (service.ts).
    return {
      ...base,
      status: 'paused',
      reason: outcome.reason,
      nextRunAt: dueAt,
      event: { type: 'schedule.paused', ...eventBase, reason: outcome.reason },
    };
  }
  const runs = row.runs + (outcome.kind === 'ran' ? 1 : 0);
  const next =
    row.every === null || (row.runs_max !== null && runs >= row.runs_max)
      ? null
      : nextDueAfter(new Date(row.starts_at), row.every as Frequency, dueAt, now);
  const ended = next === null || (row.ends_at !== null && next.getTime() > new Date(row.ends_at).getTime());
  if (outcome.kind === 'ran') {
    return {
      ...base,
      runsAdded: 1,
      skipsInRow: 0,
      status: ended ? 'ended' : 'active',
      reason: null,
      nextRunAt: ended ? dueAt : next,
      event: null,
    };
  }
  // A skip with a reason is not the wallet's: it neither counts toward the pause nor resets the count.
  const skipsInRow = outcome.reason === undefined ? row.skips_in_row + 1 : row.skips_in_row;
  const paused = outcome.reason === undefined && skipsInRow >= deps.config.skipsMax;
  return {
    ...base,
    skipsInRow,
    status: paused ? 'paused' : ended ? 'ended' : 'active',
    reason: paused ? `your wallet could not cover ${skipsInRow} runs in a row` : null,
    nextRunAt: ended || paused ? (next ?? dueAt) : next,
    event: {
      type: 'schedule.run_skipped',
      ...eventBase,
      amountKobo: outcome.amountKobo.toString(),
      skipsInRow,
      paused,
      ended: ended && !paused,
      ...(outcome.reason === undefined ? {} : { reason: outcome.reason }),
    },
  };
}

/**
 * Moves the decided runs' schedules on, in one transaction with their events, fenced on the claim's
 * reference. A schedule the person paused or cancelled meanwhile keeps that status (its run counts).
 * Runs to retry keep their claim until it lapses.
 */
async function finishRuns(deps: ScheduleDeps, claimed: Claimed[], outcomes: Outcome[]): Promise<void> {
  const now = deps.clock.now();
  const finishes: Finish[] = [];
  claimed.forEach((run, i) => {
    const outcome = outcomes[i]!;
    if (outcome.kind !== 'retry') finishes.push(finishOf(deps, run, outcome, now));
  });
  if (finishes.length === 0) return;
  const column = <T>(pick: (finish: Finish) => T) => finishes.map(pick);
  await deps.db.transaction().execute(async (trx) => {
    const updated = await sql<{ id: string }>`
      update schedules s
      set status = case when s.status = 'active' then f.status else s.status end,
        paused_reason = case when s.status = 'active' then f.reason else s.paused_reason end,
        next_run_at = f.next_run_at, runs = s.runs + f.runs_added, skips_in_row = f.skips_in_row,
        run_due_at = null, run_reference = null, run_claimed_at = null, run_purchase_id = null,
        claimed_until = null, updated_at = ${now}::timestamptz
      from unnest(${column((f) => f.id)}::uuid[], ${column((f) => f.reference)}::text[],
        ${column((f) => f.status)}::text[], ${column((f) => f.reason)}::text[],
        ${column((f) => f.nextRunAt)}::timestamptz[], ${column((f) => f.runsAdded)}::integer[],
        ${column((f) => f.skipsInRow)}::integer[])
        as f(id, reference, status, reason, next_run_at, runs_added, skips_in_row)
      where s.id = f.id and s.run_reference = f.reference
      returning s.id`.execute(trx);
    const finished = new Set(updated.rows.map((row) => row.id));
    const events = finishes.flatMap((f) => (f.event !== null && finished.has(f.id) ? [f.event] : []));
    await publishEvents(deps.jobs, trx, events);
  });
}
