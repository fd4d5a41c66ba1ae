import type { VtuApi } from '../vtu/module.ts';
import type { Frequency } from './schemas.ts';

// When a schedule's runs are due, and the reference each run's purchase takes.
//
// Due times are counted from the start, in Africa/Lagos wall-clock time (UTC+1 all year, so a day is
// always 24 hours): the k-th run of a monthly schedule that started on the 31st is due on the 31st,
// or on the last day of a shorter month, and the month after is the 31st again, never drifting to
// the 28th. A run the service could not make at its time (the service was down for days) is made
// once, late, and the schedule then moves to its first due time after now: a person who asked for
// airtime every day gets one top-up, not three at once.

const LAGOS_OFFSET_MS = 3_600_000;
const DAY_MS = 86_400_000;

/** The k-th due time (k = 0 is the start). */
export function occurrence(startAt: Date, every: Frequency, k: number): Date {
  switch (every) {
    case 'day':
      return new Date(startAt.getTime() + k * DAY_MS);
    case 'week':
      return new Date(startAt.getTime() + k * 7 * DAY_MS);
    case 'month': {
      // The start's Lagos wall clock as if it were UTC, moved by whole months, the day clamped.
      const wall = new Date(startAt.getTime() + LAGOS_OFFSET_MS);
      const year = wall.getUTCFullYear();
      const month = wall.getUTCMonth() + k;
      const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
      const day = Math.min(wall.getUTCDate(), lastDay);
      const moved = Date.UTC(
        year,
        month,
        day,
        wall.getUTCHours(),
        wall.getUTCMinutes(),
        wall.getUTCSeconds(),
        wall.getUTCMilliseconds(),
      );
      return new Date(moved - LAGOS_OFFSET_MS);
    }
    default: {
      const never: never = every;
      throw new Error(`unknown frequency ${String(never)}`);
    }
  }
}

/** The first due time after both `after` (the run just made) and `now`. */
export function nextDueAfter(startAt: Date, every: Frequency, after: Date, now: Date): Date {
  const threshold = Math.max(after.getTime(), now.getTime());
  const periodMs = every === 'day' ? DAY_MS : every === 'week' ? 7 * DAY_MS : 28 * DAY_MS;
  // A lower bound on k from the shortest period, then forward to the first due time past the threshold.
  let k = Math.max(
    1,
    Math.floor((threshold - startAt.getTime()) / (every === 'month' ? 31 * DAY_MS : periodMs)),
  );
  while (occurrence(startAt, every, k).getTime() <= threshold) k++;
  return occurrence(startAt, every, k);
}

/**
 * A run's purchase reference: VTpass's request_id form (vtu's purchaseReference), the Lagos minute the run was
 * first claimed, then a suffix that is the schedule's id and the run's due minute, so that it is
 * unique per schedule and due time and the same for every attempt at that run. The date part is the
 * claim's, not the due time's: VTpass refuses (085) a request_id dated more than a few minutes from
 * its own clock, and a run due at 09:00 may be made at 09:01 or, after an outage, days later. A
 * runner that takes up a run another left keeps the reference (runner.ts), so the purchase is made
 * once; only a reference grown too old to be sent, whose purchase was never accepted, is replaced.
 */
export function runReference(
  vtu: Pick<VtuApi, 'purchaseReference'>,
  scheduleId: string,
  dueAt: Date,
  claimedAt: Date,
): string {
  const dueMinute = Math.floor(dueAt.getTime() / 60_000)
    .toString(36)
    .padStart(6, '0');
  // 32 hex digits of the id and 6 of the due minute: the 38 letters and digits a suffix may have.
  return vtu.purchaseReference(claimedAt, `${scheduleId.replaceAll('-', '')}${dueMinute}`);
}

/** How long a claimed run's reference stays fresh enough to send (VTpass allows 5 minutes either way). */
export const referenceFreshMs = 4 * 60_000;

/** Whether a reference made at `claimedAt` may still be sent at `now`. */
export const referenceFresh = (claimedAt: Date, now: Date): boolean =>
  now.getTime() - claimedAt.getTime() < referenceFreshMs;
