import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { consumeOtp } from './otp.ts';
import { hmacSecret, sameDigest } from './secrets.ts';

// The transaction PIN. Five wrong in a row lock it for 30 minutes. The count lives on the user row
// and each check takes that row FOR UPDATE, so concurrent guesses are counted one by one and the
// lock survives restarts.

export const PIN_ATTEMPTS_MAX = 5;
export const PIN_LOCK_SECONDS = 30 * 60;

type Deps = { db: Kysely<DB>; clock: Clock; pepper: string; jobs?: JobQueue };

const pinHash = (pepper: string, userId: string, pin: string) => hmacSecret(pepper, 'pin', userId, pin);

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

/** The PIN columns of a user row, as read without a lock. */
export type PinState = { pin_hash: string | null; pin_failed_count: number; pin_locked_until: Date | null };

/** What a purchase checks of its buyer before the debit: the approved tier and the PIN columns. */
export type BuyerState = PinState & { kyc_tier: number };

/**
 * The tier and PIN state of many users, read without a lock by one statement (the purchases arriving
 * together share it: src/vtu/purchase-reads.ts); a user not found is absent from the map. The PIN
 * state is for verifyTransactionPin's `seen`, which decides anything but a plain right PIN under
 * the row's lock.
 */
export async function readBuyerStates(db: Kysely<DB>, userIds: string[]): Promise<Map<string, BuyerState>> {
  // Once per purchase: prepared once per connection (the ids go in as one array).
  const { rows } = await statement<BuyerState & { id: string }>('auth.buyer-states')`
          select id, kyc_tier, pin_hash, pin_failed_count, pin_locked_until from users
          where id = any(${userIds}::uuid[])`.execute(db);
  return new Map(rows.map(({ id, ...buyer }) => [id, buyer]));
}

/**
 * Throws PIN_NOT_SET, INVALID_PIN or PIN_LOCKED unless the PIN is right and not locked. Given the
 * user's PIN columns as just read (`seen`), a right PIN with no failure to forget is accepted without
 * a transaction: nothing is written, so nothing can be counted twice. Anything else is decided under
 * the user row's lock.
 */
export async function verifyTransactionPin(
  deps: Deps,
  userId: string,
  pin: string,
  seen?: PinState,
): Promise<void> {
  const now = deps.clock.now();
  if (
    seen !== undefined &&
    seen.pin_hash !== null &&
    seen.pin_failed_count === 0 &&
    seen.pin_locked_until === null &&
    sameDigest(seen.pin_hash, pinHash(deps.pepper, userId, pin))
  )
    return;
  const outcome = await deps.db.transaction().execute(async (trx): Promise<PinOutcome> => {
    const user = await trx
      .selectFrom('users')
      .select(['pin_hash', 'pin_failed_count', 'pin_locked_until'])
      .where('id', '=', userId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (user.pin_hash === null) return { kind: 'not_set' };
    if (user.pin_locked_until !== null && user.pin_locked_until > now)
      return { kind: 'locked', until: user.pin_locked_until };
    if (sameDigest(user.pin_hash, pinHash(deps.pepper, userId, pin))) {
      if (user.pin_failed_count !== 0 || user.pin_locked_until !== null) {
        await trx
          .updateTable('users')
          .set({ pin_failed_count: 0, pin_locked_until: null })
          .where('id', '=', userId)
          .execute();
      }
      return { kind: 'ok' };
    }
    const failed = user.pin_failed_count + 1;
    if (failed >= PIN_ATTEMPTS_MAX) {
      const until = new Date(now.getTime() + PIN_LOCK_SECONDS * 1000);
      await trx
        .updateTable('users')
        .set({ pin_failed_count: 0, pin_locked_until: until })
        .where('id', '=', userId)
        .execute();
      return { kind: 'locked', until };
    }
    await trx
      .updateTable('users')
      .set({ pin_failed_count: failed, pin_locked_until: null })
      .where('id', '=', userId)
      .execute();
    return { kind: 'wrong', attemptsLeft: PIN_ATTEMPTS_MAX - failed };
  });
  // Raised after commit, so the failed attempt is counted.
  switch (outcome.kind) {
    case 'ok':
      return;
    case 'not_set':
      throw new AppError('PIN_NOT_SET', 'set a transaction PIN first');
    case 'locked': {
      const retryAfterSeconds = Math.max(1, Math.ceil((outcome.until.getTime() - now.getTime()) / 1000));
      throw new AppError('PIN_LOCKED', 'too many wrong PINs; try again later', {
        retryAfterSeconds,
        details: { retryAfterSeconds },
      });
    }
    case 'wrong':
      throw new AppError('INVALID_PIN', 'the transaction PIN is wrong', {
        details: { attemptsLeft: outcome.attemptsLeft },
      });
  }
}
