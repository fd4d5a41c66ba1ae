import type { KeyObject } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { Secret, TOTP } from 'otpauth';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvent } from '../events/domain-events.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Caller } from '../operation.ts';
import { open, seal } from '../shared/sealed-box.ts';
import { type AttemptCount, lockedError, lockHolding, wrongAttempt } from './attempt-lock.ts';
import { revokeSessions } from './sessions.ts';
import { rolesOf } from './users.ts';

// An administrator's second factor (API.md section 17.4, decision 0039): TOTP per RFC 6238, 6 digits
// every 30 s, SHA-1 (what every authenticator app reads from an otpauth:// URL). The secret is stored
// sealed under ADMIN_TOTP_KEY and shown once, at enrolment. Wrong codes are counted as wrong PINs are
// (attempt-lock.ts), on the admin_totp row under its lock; a code is accepted once: the time step it
// was accepted for is kept, and no code of that step or an earlier one is accepted again.

/** How long a right code opens admin operations to the session. */
export const SECOND_FACTOR_TTL_SECONDS = 15 * 60;
const PERIOD_SECONDS = 30;
const DIGITS = 6;
/** Codes one step either side of now are accepted: a phone's clock may be a little off. */
const WINDOW_STEPS = 1;
const ISSUER = 'billrail';

export type SecondFactorDeps = {
  db: Kysely<DB>;
  clock: Clock;
  /** The key the secrets are sealed under (from ADMIN_TOTP_KEY, sealed-box.ts's sealingKey). */
  sealingKey: KeyObject;
  /** Phones (E.164) whose users are administrators (ADMIN_PHONES): only theirs may be reset. */
  adminPhones: ReadonlySet<string>;
  /** Enqueues the reset's event (the administrator is told) in its transaction. */
  jobs: JobQueue;
};

const totpOf = (secret: Secret, label: string) =>
  new TOTP({ issuer: ISSUER, label, algorithm: 'SHA1', digits: DIGITS, period: PERIOD_SECONDS, secret });

/**
 * A new secret for the caller, replacing one not yet confirmed; 409 CONFLICT once one is confirmed
 * (a confirmed secret is never handed out again, nor replaced by whoever holds the session alone).
 */
export async function enrolTotp(
  deps: SecondFactorDeps,
  caller: Caller,
): Promise<{ secret: string; otpauthUrl: string }> {
  const now = deps.clock.now();
  const secret = new Secret({ size: 20 });
  const sealed = seal(deps.sealingKey, secret.base32);
  await deps.db.transaction().execute(async (trx) => {
    const row = await lockedRow(trx, caller.userId);
    if (row?.confirmed_at != null)
      throw new AppError('CONFLICT', 'a second factor is already confirmed for this administrator');
    // The count and the lock stay as they are: enrolling again does not wipe out wrong codes.
    await trx
      .insertInto('admin_totp')
      .values({ user_id: caller.userId, secret_sealed: sealed, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ secret_sealed: sealed, updated_at: now }))
      .execute();
  });
  return { secret: secret.base32, otpauthUrl: totpOf(secret, caller.phone).toString() };
}

/** Whether the user has confirmed a second factor (the router says so when refusing). */
export async function totpEnrolled(db: Kysely<DB>, userId: string): Promise<boolean> {
  const row = await db
    .selectFrom('admin_totp')
    .select('confirmed_at')
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.confirmed_at != null;
}

/**
 * The first code of the enrolled secret: confirms it, and verifies the session as adminVerifyTotp
 * does (the code proves the same thing, and could not be used again to verify).
 */
export function confirmTotp(deps: SecondFactorDeps, caller: Caller, code: string) {
  return checkCode(deps, caller, code, 'confirm');
}

/** A code of the confirmed secret: the session may run admin operations for 15 minutes. */
export function verifyTotp(deps: SecondFactorDeps, caller: Caller, code: string) {
  return checkCode(deps, caller, code, 'verify');
}

type CodeOutcome =
  | { kind: 'ok'; verifiedUntil: Date }
  | { kind: 'conflict'; message: string; enrolled: boolean }
  | { kind: 'locked'; until: Date }
  | { kind: 'wrong'; attemptsLeft: number };

async function checkCode(
  deps: SecondFactorDeps,
  caller: Caller,
  code: string,
  purpose: 'confirm' | 'verify',
): Promise<{ verifiedUntil: string }> {
  const now = deps.clock.now();
  // Held until the count is committed: a code checked after waits for it, and sees it.
  const outcome = await deps.db.transaction().execute(async (trx): Promise<CodeOutcome> => {
    const row = await lockedRow(trx, caller.userId);
    if (row === undefined)
      return { kind: 'conflict', message: 'enrol a second factor first (adminEnrolTotp)', enrolled: false };
    if (purpose === 'confirm' && row.confirmed_at !== null)
      return { kind: 'conflict', message: 'the second factor is already confirmed', enrolled: true };
    if (purpose === 'verify' && row.confirmed_at === null)
      return {
        kind: 'conflict',
        message: 'confirm the second factor first (adminConfirmTotp)',
        enrolled: false,
      };
    const count: AttemptCount = { failedCount: row.failed_count, lockedUntil: row.locked_until };
    const lockedUntil = lockHolding(count, now);
    if (lockedUntil !== null) return { kind: 'locked', until: lockedUntil };
    const step = acceptedStep(open(deps.sealingKey, row.secret_sealed), code, now);
    // A code of a step already used (the same code again, or an older one) is a replay: wrong.
    if (step === null || (row.last_used_step !== null && step <= BigInt(row.last_used_step))) {
      const { store, ...wrong } = wrongAttempt(row.failed_count, now);
      await trx
        .updateTable('admin_totp')
        .set({ failed_count: store.failedCount, locked_until: store.lockedUntil, updated_at: now })
        .where('user_id', '=', caller.userId)
        .execute();
      return wrong;
    }
    const verifiedUntil = new Date(now.getTime() + SECOND_FACTOR_TTL_SECONDS * 1000);
    await trx
      .updateTable('admin_totp')
      .set({
        failed_count: 0,
        locked_until: null,
        last_used_step: step,
        updated_at: now,
        ...(purpose === 'confirm' ? { confirmed_at: now } : {}),
      })
      .where('user_id', '=', caller.userId)
      .execute();
    await trx
      .updateTable('sessions')
      .set({ second_factor_until: verifiedUntil })
      .where('id', '=', caller.sessionId)
      .execute();
    return { kind: 'ok', verifiedUntil };
  });
  // Raised after commit, so the wrong code is counted.
  switch (outcome.kind) {
    case 'ok':
      return { verifiedUntil: outcome.verifiedUntil.toISOString() };
    case 'conflict':
      throw new AppError('CONFLICT', outcome.message, { details: { enrolled: outcome.enrolled } });
    case 'locked':
      throw lockedError(outcome.until, now, 'too many wrong codes; try again later');
    case 'wrong':
      throw new AppError('FORBIDDEN', 'the code is wrong, expired or already used', {
        details: { reason: 'wrong_code', attemptsLeft: outcome.attemptsLeft },
      });
  }
}

/** The time step the code belongs to, within the window around now; null when it is no code of it. */
function acceptedStep(secretBase32: string, code: string, now: Date): bigint | null {
  const delta = TOTP.validate({
    token: code,
    secret: Secret.fromBase32(secretBase32),
    algorithm: 'SHA1',
    digits: DIGITS,
    period: PERIOD_SECONDS,
    timestamp: now.getTime(),
    window: WINDOW_STEPS,
  });
  if (delta === null) return null;
  return BigInt(Math.floor(now.getTime() / 1000 / PERIOD_SECONDS) + delta);
}

function lockedRow(trx: Transaction<DB>, userId: string) {
  return trx
    .selectFrom('admin_totp')
    .selectAll()
    .where('user_id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Another administrator's lost authenticator (decision 0039), four eyes: removes the named
 * administrator's enrolment, confirmed or not, and ends every session of theirs (whoever lost the
 * authenticator may have lost the phone too, and sign-in needs only an SMS to it), so that their
 * admin operations answer SECOND_FACTOR_REQUIRED (enrolled: false) until they enrol again. The
 * caller's own is refused (403 FORBIDDEN, four_eyes); anyone not an administrator, or with no
 * enrolment, is 404. In the caller's unit of work, so the router's audit row commits with it.
 *
 * Both enrolments, the caller's and the target's, are locked in user id order: of two administrators
 * resetting each other at once, the second finds its own session ended and is refused (401), rather
 * than both ending up without a factor (and the order keeps the two from deadlocking).
 */
export async function resetTotp(
  deps: SecondFactorDeps,
  withCommit: WithCommit | undefined,
  caller: Caller,
  adminId: string,
): Promise<{ adminId: string; revoked: number }> {
  if (adminId === caller.userId)
    throw new AppError('FORBIDDEN', 'another administrator must reset your second factor', {
      details: { reason: 'four_eyes' },
    });
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const target = await trx
      .selectFrom('users')
      .select(['id', 'phone'])
      .where('id', '=', adminId)
      .executeTakeFirst();
    if (target === undefined || !rolesOf(target.phone, deps.adminPhones).includes('admin'))
      throw notFound('administrator');
    const rows = await trx
      .selectFrom('admin_totp')
      .select(['user_id', 'confirmed_at'])
      .where('user_id', 'in', [caller.userId, adminId])
      .orderBy('user_id')
      .forUpdate()
      .execute();
    // Read again under the locks: the router let this session in before a reset of the caller (by
    // the administrator named here) committed and ended it.
    const session = await trx
      .selectFrom('sessions')
      .select('revoked_at')
      .where('id', '=', caller.sessionId)
      .executeTakeFirst();
    if (session === undefined || session.revoked_at !== null)
      throw new AppError('UNAUTHENTICATED', 'this session was ended while the request ran');
    if (!rows.some((row) => row.user_id === adminId)) throw notFound('second factor');
    await trx.deleteFrom('admin_totp').where('user_id', '=', adminId).execute();
    const revoked = await revokeSessions(trx, { userId: adminId }, now);
    await publishEvent(deps.jobs, trx, {
      type: 'auth.second_factor_reset',
      userId: adminId,
      occurredAt: now.toISOString(),
    });
    return { adminId, revoked };
  });
}
