import { AppError } from '../errors.ts';

// The rule every secret an account holder types is counted under: the transaction PIN (pin.ts) and
// an administrator's TOTP code (second-factor.ts). Five wrong in a row lock it for 30 minutes; a
// right one forgets the count. Each caller keeps the count and the lock on its own row, read and
// written under that row's lock, so that the checks of one account are counted in one order.

export const ATTEMPTS_MAX = 5;
export const ATTEMPTS_LOCK_SECONDS = 30 * 60;

/** The count and the lock as stored on the row. */
export type AttemptCount = { failedCount: number; lockedUntil: Date | null };

/** The lock's end, while it holds at `now`; null when nothing is locked. */
export const lockHolding = (count: AttemptCount, now: Date): Date | null =>
  count.lockedUntil !== null && count.lockedUntil > now ? count.lockedUntil : null;

/**
 * One more wrong attempt: the columns to store, and either the lock it reached (the count starts
 * again after it) or how many attempts are left.
 */
export function wrongAttempt(
  failedCount: number,
  now: Date,
): { store: AttemptCount } & ({ kind: 'locked'; until: Date } | { kind: 'wrong'; attemptsLeft: number }) {
  const failed = failedCount + 1;
  if (failed >= ATTEMPTS_MAX) {
    const until = new Date(now.getTime() + ATTEMPTS_LOCK_SECONDS * 1000);
    return { store: { failedCount: 0, lockedUntil: until }, kind: 'locked', until };
  }
  return {
    store: { failedCount: failed, lockedUntil: null },
    kind: 'wrong',
    attemptsLeft: ATTEMPTS_MAX - failed,
  };
}

/** 423 PIN_LOCKED with the seconds left (API.md section 2), raised once the count has committed. */
export function lockedError(until: Date, now: Date, message: string): AppError {
  const retryAfterSeconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
  return new AppError('PIN_LOCKED', message, { retryAfterSeconds, details: { retryAfterSeconds } });
}
