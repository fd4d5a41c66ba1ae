import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import { type HashKeys, verifyHash, versionedHash } from '../shared/keyed-hash.ts';
import { newOtpCode } from './secrets.ts';
import type { UserRow } from './users.ts';

// Email verification (API.md section 10): updateProfile with a new address stores it unverified and
// emails it a 6-digit code (15 minutes, 5 attempts); verifyEmail with the code marks it verified.
// Transactional email goes only to a verified address.

export type EmailVerificationDeps = { db: Kysely<DB>; clock: Clock; pepper: HashKeys };

export const EMAIL_CODE_TTL_SECONDS = 15 * 60;
export const EMAIL_CODE_ATTEMPTS_MAX = 5;

const codeHash = (pepper: HashKeys, userId: string, email: string, code: string) =>
  versionedHash(pepper, 'email-verification', `${userId}:${email}`, code);

/**
 * Sets the user's email. A new address (or one not yet verified) is stored unverified with a fresh
 * code, which the caller emails after this returns (`code`); the address already verified changes
 * nothing and needs no code.
 */
export async function setEmail(
  deps: EmailVerificationDeps,
  userId: string,
  email: string,
): Promise<{ user: UserRow | undefined; code: string | null }> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('users')
      .select(['email', 'email_verified_at'])
      .where('id', '=', userId)
      .forUpdate()
      .executeTakeFirst();
    if (current === undefined) return { user: undefined, code: null };
    if (current.email === email && current.email_verified_at !== null) {
      const user = await trx.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
      return { user, code: null };
    }
    const code = newOtpCode();
    const user = await trx
      .updateTable('users')
      .set({ email, email_verified_at: null, updated_at: now })
      .where('id', '=', userId)
      .returningAll()
      .executeTakeFirst();
    const row = {
      email,
      code_hash: codeHash(deps.pepper, userId, email, code),
      expires_at: new Date(now.getTime() + EMAIL_CODE_TTL_SECONDS * 1000),
      attempts: 0,
      sent_at: now,
    };
    await trx
      .insertInto('email_verifications')
      .values({ user_id: userId, ...row })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
      .execute();
    return { user, code };
  });
}

/** The email that carries the code: the code and nothing else secret. */
export async function sendVerificationCode(mailer: Mailer, email: string, code: string): Promise<void> {
  await mailer.send({
    to: email,
    subject: 'Your billrail verification code',
    text: `Your billrail email verification code is ${code}. It expires in 15 minutes. If you did not add this address to billrail, ignore this email.`,
    html: `<p>Your billrail email verification code is <strong>${code}</strong>.</p><p>It expires in 15 minutes. If you did not add this address to billrail, ignore this email.</p>`,
  });
}

/**
 * Checks the code sent to the user's pending address; five attempts, right or wrong, use it up. A
 * wrong, expired or used-up code is 400 VALIDATION_ERROR on `code` with the attempts left.
 */
export async function verifyEmail(deps: EmailVerificationDeps, userId: string, code: string): Promise<void> {
  const now = deps.clock.now();
  const refused = (attemptsLeft: number) =>
    new AppError('VALIDATION_ERROR', 'the code is wrong or expired', {
      details: { issues: [{ path: ['data', 'code'], message: 'wrong or expired code' }], attemptsLeft },
    });
  // Each attempt is counted by the UPDATE, also when attempts overlap.
  const pending = await deps.db
    .updateTable('email_verifications')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .where('attempts', '<', EMAIL_CODE_ATTEMPTS_MAX)
    .returning(['email', 'code_hash', 'attempts'])
    .executeTakeFirst();
  if (pending === undefined) throw refused(0);
  const subject = `${userId}:${pending.email}`;
  if (verifyHash(deps.pepper, pending.code_hash, 'email-verification', subject, code) === 'mismatch') {
    throw refused(EMAIL_CODE_ATTEMPTS_MAX - pending.attempts);
  }
  await deps.db.transaction().execute(async (trx) => {
    const used = await trx
      .deleteFrom('email_verifications')
      .where('user_id', '=', userId)
      .where('code_hash', '=', pending.code_hash)
      .executeTakeFirst();
    if (used.numDeletedRows !== 1n) throw refused(0);
    // Only the address the code was sent to: a newer address set meanwhile stays unverified.
    await trx
      .updateTable('users')
      .set({ email_verified_at: now, updated_at: now })
      .where('id', '=', userId)
      .where('email', '=', pending.email)
      .execute();
  });
}
