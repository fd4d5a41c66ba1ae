import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { SmsSender } from '../providers/sms/sms-gateway.ts';
import { hmacSecret, newOtpCode, sameDigest } from './secrets.ts';

export const OTP_TTL_SECONDS = 5 * 60;
export const OTP_RESEND_INTERVAL_SECONDS = 60;
export const OTP_ATTEMPTS_MAX = 5;

type OtpDeps = { db: Kysely<DB>; clock: Clock; pepper: string; sms: SmsSender };

const otpHash = (pepper: string, phone: string, code: string) => hmacSecret(pepper, 'otp', phone, code);

/** Issues a fresh code for the phone and sends it by SMS; at most one per phone per 60 s. */
export async function requestOtp(deps: OtpDeps, phone: string): Promise<{ expiresInSeconds: number }> {
  const now = deps.clock.now();
  const code = newOtpCode();
  const codeHash = otpHash(deps.pepper, phone, code);
  const resendBefore = new Date(now.getTime() - OTP_RESEND_INTERVAL_SECONDS * 1000);
  // One statement decides the rate limit, so concurrent requests for one phone send one SMS.
  const issued = await deps.db
    .insertInto('otp_codes')
    .values({
      phone,
      code_hash: codeHash,
      expires_at: new Date(now.getTime() + OTP_TTL_SECONDS * 1000),
      attempts: 0,
      sent_at: now,
    })
    .onConflict((oc) =>
      oc
        .column('phone')
        .doUpdateSet((eb) => ({
          code_hash: eb.ref('excluded.code_hash'),
          expires_at: eb.ref('excluded.expires_at'),
          attempts: 0,
          sent_at: eb.ref('excluded.sent_at'),
        }))
        .where('otp_codes.sent_at', '<=', resendBefore),
    )
    .returning('phone')
    .executeTakeFirst();
  if (issued === undefined) {
    const row = await deps.db
      .selectFrom('otp_codes')
      .select('sent_at')
      .where('phone', '=', phone)
      .executeTakeFirst();
    const waitMs =
      row === undefined ? 1000 : row.sent_at.getTime() + OTP_RESEND_INTERVAL_SECONDS * 1000 - now.getTime();
    const retryAfterSeconds = Math.max(1, Math.ceil(waitMs / 1000));
    throw new AppError('RATE_LIMITED', 'a code was sent to this phone less than a minute ago', {
      retryAfterSeconds,
      details: { retryAfterSeconds },
    });
  }
  try {
    await deps.sms.send(phone, `Your billrail code is ${code}. It expires in 5 minutes. Never share it.`);
  } catch {
    // Undo the rate-limit slot so the user can ask again at once; only our own code is removed.
    await deps.db
      .deleteFrom('otp_codes')
      .where('phone', '=', phone)
      .where('code_hash', '=', codeHash)
      .execute();
    throw new AppError('UPSTREAM_UNAVAILABLE', 'the SMS could not be sent; try again');
  }
  return { expiresInSeconds: OTP_TTL_SECONDS };
}

export type OtpCheck = { ok: true } | { ok: false; attemptsLeft: number };

/**
 * Consumes one attempt of the phone's current code. A right code is used up at once; five
 * attempts, right or wrong, use up the code. Safe under concurrent attempts: each one is counted
 * by the UPDATE.
 */
export async function consumeOtp(deps: Omit<OtpDeps, 'sms'>, phone: string, code: string): Promise<OtpCheck> {
  const now = deps.clock.now();
  const row = await deps.db
    .updateTable('otp_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('phone', '=', phone)
    .where('expires_at', '>', now)
    .where('attempts', '<', OTP_ATTEMPTS_MAX)
    .returning(['code_hash', 'attempts'])
    .executeTakeFirst();
  if (row === undefined) return { ok: false, attemptsLeft: 0 };
  if (sameDigest(row.code_hash, otpHash(deps.pepper, phone, code))) {
    // Used up, not deleted: the row still holds sent_at, so the 60 s resend window stays closed
    // after a sign-in too. Only one of two concurrent right attempts can use it.
    const consumed = await deps.db
      .updateTable('otp_codes')
      .set({ code_hash: 'used', attempts: OTP_ATTEMPTS_MAX, expires_at: now })
      .where('phone', '=', phone)
      .where('code_hash', '=', row.code_hash)
      .executeTakeFirst();
    if (consumed.numUpdatedRows === 1n) return { ok: true };
    return { ok: false, attemptsLeft: 0 };
  }
  return { ok: false, attemptsLeft: OTP_ATTEMPTS_MAX - row.attempts };
}
