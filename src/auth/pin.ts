import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Batching } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { type HashKeys, sameDigest, verifyHash, versionedHash } from '../shared/keyed-hash.ts';
import {
  ATTEMPTS_LOCK_SECONDS,
  ATTEMPTS_MAX,
  lockedError,
  lockHolding,
  wrongAttempt,
} from './attempt-lock.ts';
import { consumeOtp } from './otp.ts';

// The transaction PIN. Five wrong in a row lock it for 30 minutes. The count lives on the user row,
// so the lock survives restarts, and every check of a user's PIN is decided on that row as read
// under its row lock: the checks of one user are decided, counted and answered in one order, the
// order in which they take the lock (decision 0018). A check that may write (a wrong PIN, a right
// one with failures to forget, a lock to see) takes the row FOR UPDATE in a transaction and commits
// its count before it lets go. A right PIN with nothing to forget writes nothing, but is judged on
// the row read under a shared lock (createSharedPinReads), which no check holding the row FOR UPDATE
// can share: it is decided after the wrong guesses that took the lock before it, or, when one holds
// the row now, in the transaction that waits for it; never on a read that missed them.

export const PIN_ATTEMPTS_MAX = ATTEMPTS_MAX;
export const PIN_LOCK_SECONDS = ATTEMPTS_LOCK_SECONDS;

/** `pepper`: SECRET_PEPPER, and the previous one while a rotation lasts (decision 0035). */
type Deps = { db: Kysely<DB>; clock: Clock; pepper: HashKeys; jobs?: JobQueue };

/**
 * Reads a user's PIN columns under a shared lock on the row, batched: the right PINs arriving
 * together share one statement, and so one lock record and one WAL flush (createSharedPinReads).
 */
export type SharedPinReads = (userId: string) => Promise<PinState | undefined>;

/** The hash a PIN is stored as, made with the current key; verified by verifyHash. */
const pinHash = (pepper: HashKeys, userId: string, pin: string) => versionedHash(pepper, 'pin', userId, pin);

export async function setTransactionPin(
  deps: Deps,
  user: { id: string; phone: string },
  pin: string,
  otpCode: string | undefined,
): Promise<void> {
  const current = await deps.db
    .selectFrom('users')
    .select('pin_hash')
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  if (current.pin_hash !== null) {
    if (otpCode === undefined) {
      throw new AppError('VALIDATION_ERROR', 'otpCode is required to change an existing PIN', {
        details: { issues: [{ path: ['data', 'otpCode'], message: 'required when a PIN is already set' }] },
      });
    }
    const check = await consumeOtp(deps, user.phone, otpCode);
    if (!check.ok) {
      throw new AppError('FORBIDDEN', 'the OTP code is wrong or expired', {
        details: { attemptsLeft: check.attemptsLeft },
      });
    }
  }
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({
        pin_hash: pinHash(deps.pepper, user.id, pin),
        pin_failed_count: 0,
        pin_locked_until: null,
        updated_at: now,
      })
      .where('id', '=', user.id)
      .execute();
    // A changed PIN (not the first) is security mail, whatever the user's switches say.
    if (current.pin_hash !== null && deps.jobs !== undefined) {
      await publishEvent(deps.jobs, trx, {
        type: 'auth.pin_changed',
        userId: user.id,
        occurredAt: now.toISOString(),
      });
    }
  });
}

type PinOutcome =
  | { kind: 'ok' }
  | { kind: 'not_set' }
  | { kind: 'locked'; until: Date }
  | { kind: 'wrong'; attemptsLeft: number };

/** The PIN columns of a user row. Read without a lock, they only choose how the check is made. */
export type PinState = { pin_hash: string | null; pin_failed_count: number; pin_locked_until: Date | null };

/**
 * What a purchase checks of its buyer before the debit: the approved tier and the PIN columns, and
 * the price level the purchase is priced at (null: the default prices).
 */
export type BuyerState = PinState & { kyc_tier: number; price_level: string | null };

/**
 * The tier and PIN state of many users, read without a lock by one statement (the purchases arriving
 * together share it: src/vtu/purchase-ops.ts); a user not found is absent from the map. The PIN
 * state is for verifyTransactionPin's `seen`, which only chooses the way the PIN is checked: every
 * check is decided on the row read again under its lock.
 */
export async function readBuyerStates(db: Kysely<DB>, userIds: string[]): Promise<Map<string, BuyerState>> {
  // Once per purchase: prepared once per connection (the ids go in as one array).
  const { rows } = await statement<BuyerState & { id: string }>('auth.buyer-states')`
          select id, kyc_tier, pin_hash, pin_failed_count, pin_locked_until, price_level from users
          where id = any(${userIds}::uuid[])`.execute(db);
  return new Map(rows.map(({ id, ...buyer }) => [id, buyer]));
}

/**
 * The PIN columns of many users read FOR SHARE by one statement. FOR SHARE conflicts with FOR UPDATE
 * (the checks that count) and with any update of the row, and reads the row's latest version: a row
 * it locks has no count in flight, and every count committed before is seen. SKIP LOCKED leaves out
 * the rows held by such a check rather than waiting for them (a user so left out reads as
 * undefined, and their check goes to the transaction, which waits): so one user's guess in flight
 * never holds up the others' purchases in the batch, and the statement can never be part of a
 * deadlock. Shared locks do not conflict: a user's right PINs do not wait for each other.
 */
export function createSharedPinReads(db: Kysely<DB>, batching: Batching): SharedPinReads {
  return batching.loader(
    async (userIds: string[]) => {
      const { rows } = await statement<PinState & { id: string }>('auth.pin-states-shared')`
          select id, pin_hash, pin_failed_count, pin_locked_until from users
          where id = any(${userIds}::uuid[]) for share skip locked`.execute(db);
      return new Map(rows.map(({ id, ...state }) => [id, state]));
    },
    { batchMax: 200, concurrency: 4 },
  );
}

/**
 * A right PIN with no failure to forget and no lock, stored with the current key: accepted without
 * writing anything. `hash` is the PIN's hash with the current key (pinHash); a PIN stored with another
 * key is never plainly right, so the transaction verifies it and stores it again with the current one.
 */
const plainRight = (state: PinState | undefined, hash: string): boolean =>
  state !== undefined &&
  state.pin_hash !== null &&
  state.pin_failed_count === 0 &&
  state.pin_locked_until === null &&
  sameDigest(state.pin_hash, hash);

/**
 * Throws PIN_NOT_SET, INVALID_PIN or PIN_LOCKED unless the PIN is right and not locked, decided on
 * the user row read under its lock. `seen`, the user's PIN columns as read without a lock (by the
 * purchases' batched read, or the transfer's read of its sender), only chooses how: when they show
 * a right PIN with nothing to forget, the row is read again under a shared lock (batched, changing
 * nothing; a row held FOR UPDATE by a check that is counting is left out), and the PIN accepted if
 * that read still shows it so. Anything else, and a right PIN that read does not confirm, is decided in a
 * transaction holding the row FOR UPDATE, which commits its count before answering. Never on `seen`
 * alone: a read that does not wait for the lock misses the wrong guesses being counted, and one
 * burst of guesses could then try every PIN the rate limit lets through instead of five.
 */
export async function verifyTransactionPin(
  deps: Deps & { sharedPinReads: SharedPinReads },
  userId: string,
  pin: string,
  seen?: PinState,
): Promise<void> {
  const now = deps.clock.now();
  const hash = pinHash(deps.pepper, userId, pin);
  // Judged on the row read under a shared lock, taken only once no check holds the row to count
  // (decision 0018); a row held by one is left to the transaction below, which waits for it.
  if (plainRight(seen, hash) && plainRight(await deps.sharedPinReads(userId), hash)) return;
  // Held until the count is committed: a check that comes after waits for it, and sees it.
  const outcome = await deps.db.transaction().execute(async (trx): Promise<PinOutcome> => {
    const user = await trx
      .selectFrom('users')
      .select(['pin_hash', 'pin_failed_count', 'pin_locked_until'])
      .where('id', '=', userId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (user.pin_hash === null) return { kind: 'not_set' };
    const lockedUntil = lockHolding(
      { failedCount: user.pin_failed_count, lockedUntil: user.pin_locked_until },
      now,
    );
    if (lockedUntil !== null) return { kind: 'locked', until: lockedUntil };
    const verdict = verifyHash(deps.pepper, user.pin_hash, 'pin', userId, pin);
    if (verdict !== 'mismatch') {
      // Right: the count forgotten, and a hash made with a previous key (or none named) made again
      // with the current one, under the row's lock, so that a rotation needs no other step.
      if (verdict === 'stale' || user.pin_failed_count !== 0 || user.pin_locked_until !== null) {
        await trx
          .updateTable('users')
          .set({
            pin_failed_count: 0,
            pin_locked_until: null,
            ...(verdict === 'stale' ? { pin_hash: hash } : {}),
          })
          .where('id', '=', userId)
          .execute();
      }
      return { kind: 'ok' };
    }
    const { store, ...wrong } = wrongAttempt(user.pin_failed_count, now);
    await trx
      .updateTable('users')
      .set({ pin_failed_count: store.failedCount, pin_locked_until: store.lockedUntil })
      .where('id', '=', userId)
      .execute();
    return wrong;
  });
  // Raised after commit, so the failed attempt is counted.
  switch (outcome.kind) {
    case 'ok':
      return;
    case 'not_set':
      throw new AppError('PIN_NOT_SET', 'set a transaction PIN first');
    case 'locked':
      throw lockedError(outcome.until, now, 'too many wrong PINs; try again later');
    case 'wrong':
      throw new AppError('INVALID_PIN', 'the transaction PIN is wrong', {
        details: { attemptsLeft: outcome.attemptsLeft },
      });
  }
}
