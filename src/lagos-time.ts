// Lagos wall-clock time (Africa/Lagos, UTC+1 all year), as the providers and the sandbox's
// simulators read it: VTpass wants every request id to open with the Lagos minute (YYYYMMDDHHmm),
// and its simulator checks that minute against its own clock.

/** Africa/Lagos keeps UTC+1 all year (West Africa Time, no summer time since 1919). */
const LAGOS_OFFSET_MS = 3_600_000;

/** YYYYMMDDHHmm of the instant in Africa/Lagos. */
export function lagosMinute(now: Date): string {
  // Arithmetic on the fixed offset rather than Intl's time-zone formatting, which was 1% of the
  // service's CPU under purchase load once nothing cached it; nothing is kept between calls.
  const iso = new Date(now.getTime() + LAGOS_OFFSET_MS).toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/** The Lagos wall clock at `now`, to the minute, as if it were UTC (for comparing wall clocks). */
export function lagosWallClock(now: Date): number {
  const minute = lagosMinute(now);
  const at = (from: number, to: number) => Number(minute.slice(from, to));
  return Date.UTC(at(0, 4), at(4, 6) - 1, at(6, 8), at(8, 10), at(10, 12));
}

/** The Africa/Lagos calendar day of the instant, YYYY-MM-DD: "today" for the daily check-in. */
export function lagosDate(now: Date): string {
  const minute = lagosMinute(now);
  return `${minute.slice(0, 4)}-${minute.slice(4, 6)}-${minute.slice(6, 8)}`;
}

/** The instant the next Africa/Lagos calendar day begins (its 00:00), after `now`. */
export function nextLagosMidnight(now: Date): Date {
  const wall = lagosWallClock(now);
  // The zone's offset now: the wall clock's minute less the UTC minute (whole minutes in every zone).
  const offsetMs = wall - Math.floor(now.getTime() / 60_000) * 60_000;
  const wallDay = new Date(wall);
  const nextWallMidnight = Date.UTC(
    wallDay.getUTCFullYear(),
    wallDay.getUTCMonth(),
    wallDay.getUTCDate() + 1,
  );
  return new Date(nextWallMidnight - offsetMs);
}

/** The instant the Africa/Lagos calendar day of `now` began (its 00:00; Lagos keeps no summer time). */
export function lagosDayStart(now: Date): Date {
  return new Date(nextLagosMidnight(now).getTime() - 86_400_000);
}

/** The instant the Africa/Lagos calendar day `YYYY-MM-DD` begins (its 00:00). */
export function lagosDayStartOn(day: string): Date {
  // Noon UTC of that date is in the same Lagos calendar day (Lagos is UTC+1, with no summer time).
  return lagosDayStart(new Date(`${day}T12:00:00Z`));
}

/**
 * The bounds of a date filter (API.md section 5): a date-only `from`/`to` is a whole Africa/Lagos
 * calendar day, both ends included, so `from=D&to=D` is that day; a full instant is taken as given.
 * `to` is kept as the first instant past the range, so a day ends before the next one begins.
 */
export type DateRange = { from?: Date; before?: Date };

const dateOnly = /^\d{4}-\d{2}-\d{2}$/;

/** Where a `from` filter starts: the first moment of its Lagos day, or the instant itself. */
export const rangeStart = (text: string): Date =>
  dateOnly.test(text) ? lagosDayStartOn(text) : new Date(text);

/** The first instant past a `to` filter: the next Lagos midnight, or a millisecond past the instant. */
export const rangeEnd = (text: string): Date =>
  dateOnly.test(text)
    ? nextLagosMidnight(lagosDayStartOn(text))
    : // Stored times are whole milliseconds (they come from the clock), so this leaves none out.
      new Date(new Date(text).getTime() + 1);
