import { type Kysely, sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import type { SmsSender } from '../providers/sms/sms-gateway.ts';
import { type HashKeys, verifyHash, versionedHash } from '../shared/keyed-hash.ts';
import { newOtpCode } from './secrets.ts';

export const OTP_TTL_SECONDS = 5 * 60;
export const OTP_RESEND_INTERVAL_SECONDS = 60;
export const OTP_ATTEMPTS_MAX = 5;
/**
 * Codes per phone per 24 h. Each code allows 5 guesses, so this caps guessing at 50 a day (a 1 in
 * 20,000 chance against a 6-digit code) and caps the SMS spend one phone can cause.
 */
export const OTP_REQUESTS_PER_DAY_MAX = 10;
const DAY_MS = 24 * 60 * 60 * 1000;

type OtpDeps = { db: Kysely<DB>; clock: Clock; pepper: HashKeys; sms: SmsSender };

const otpHash = (pepper: HashKeys, phone: string, code: string) => versionedHash(pepper, 'otp', phone, code);

/** Issues a fresh code for the phone and sends it by SMS; at most one per phone per 60 s. */
export async function requestOtp(deps: OtpDeps, phone: string): Promise<{ expiresInSeconds: number }> {
  const now = deps.clock.now();
  const code = newOtpCode();
  const codeHash = otpHash(deps.pepper, phone, code);
  const resendBefore = new Date(now.getTime() - OTP_RESEND_INTERVAL_SECONDS * 1000);
  const dayBefore = new Date(now.getTime() - DAY_MS);
  // One statement decides both limits, so concurrent requests for one phone send one SMS.
  const issued = await deps.db
    .insertInto('otp_codes')
    .values({
      phone,
      code_hash: codeHash,
      expires_at: new Date(now.getTime() + OTP_TTL_SECONDS * 1000),
      attempts: 0,
      sent_at: now,
      day_started_at: now,
      day_requests: 1,
    })
    .onConflict((oc) =>
      oc
        .column('phone')
        .doUpdateSet((eb) => ({
          code_hash: eb.ref('excluded.code_hash'),
          expires_at: eb.ref('excluded.expires_at'),
          attempts: 0,
          sent_at: eb.ref('excluded.sent_at'),
          day_started_at: sql<Date>`case when otp_codes.day_started_at <= ${dayBefore} then ${now} else otp_codes.day_started_at end`,
          day_requests: sql<number>`case when otp_codes.day_started_at <= ${dayBefore} then 1 else otp_codes.day_requests + 1 end`,
        }))
        .where('otp_codes.sent_at', '<=', resendBefore)
        .where((eb) =>
          eb.or([
            eb('otp_codes.day_started_at', '<=', dayBefore),
            eb('otp_codes.day_requests', '<', OTP_REQUESTS_PER_DAY_MAX),
          ]),
        ),
    )
    .returning('phone')
    .executeTakeFirst();
  if (issued === undefined) {
    const row = await deps.db
      .selectFrom('otp_codes')
      .select(['sent_at', 'day_started_at', 'day_requests'])
      .where('phone', '=', phone)
      .executeTakeFirst();
    const resendAt =
      row === undefined ? now.getTime() : row.sent_at.getTime() + OTP_RESEND_INTERVAL_SECONDS * 1000;
    const dayFull =
      row !== undefined && row.day_requests >= OTP_REQUESTS_PER_DAY_MAX && row.day_started_at > dayBefore;
    const allowedAt = dayFull ? Math.max(resendAt, row.day_started_at.getTime() + DAY_MS) : resendAt;
    const retryAfterSeconds = Math.max(1, Math.ceil((allowedAt - now.getTime()) / 1000));
    throw new AppError(
      'RATE_LIMITED',
      dayFull
        ? 'too many codes were sent to this phone today'
        : 'a code was sent to this phone less than a minute ago',
      { retryAfterSeconds, details: { retryAfterSeconds } },
    );
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
  // A code lives 5 minutes: one made with the previous key is used up, never stored again.
  if (verifyHash(deps.pepper, row.code_hash, 'otp', phone, code) !== 'mismatch') {
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
