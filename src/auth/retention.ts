import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

// Auth's part of retention.purge (decision 0054): the sign-in and email codes nobody can use any
// more, a batch at a time, each batch one statement. Sessions and their tokens have their own purge
// (sessions.ts, auth.purge-expired-sessions).

const DAY_MS = 86_400_000;

/**
 * Deletes up to batchMax sign-in codes that expired and whose phone's 24 h request window (otp.ts's
 * daily cap, counted on the row) has ended too: a row deleted sooner would hand its phone a fresh
 * day of requests. Answers how many.
 */
export async function purgeExpiredSignInCodes(db: Kysely<DB>, now: Date, batchMax: number): Promise<number> {
  const dayBefore = new Date(now.getTime() - DAY_MS);
  const result = await db
    .deleteFrom('otp_codes')
    .where(
      'phone',
      'in',
      db
        .selectFrom('otp_codes')
        .select('phone')
        .where('expires_at', '<=', now)
        .where('day_started_at', '<=', dayBefore)
        .limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Deletes up to batchMax email codes past their 15 minutes. Answers how many. */
export async function purgeExpiredEmailCodes(db: Kysely<DB>, now: Date, batchMax: number): Promise<number> {
  const result = await db
    .deleteFrom('email_verifications')
    .where(
      'user_id',
      'in',
      db.selectFrom('email_verifications').select('user_id').where('expires_at', '<=', now).limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
