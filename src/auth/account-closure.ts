import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// Closing an account, auth's part (API.md 17.3, decision 0047): the person can never sign in to it
// again, and what named them on it is replaced by a pseudonym. The row itself stays: the ledger's
// accounts, the purchases and the KYC submissions kept for RETENTION_YEARS point at its id.
//
// - Sessions are deleted (their access and refresh tokens with them, by the foreign keys' cascade),
//   with the devices the sign-in alerts knew, a pending email code and an administrator's TOTP.
// - The phone becomes `deleted:<uuid>`: the column is unique and not null, and the pseudonym can be
//   no Nigerian number, so the real phone is free at once. A sign-in with it finds no user and
//   makes a new one (verifyOtp), never this one.
// - Email and PIN are removed; the names become "Closed account", which is what a person who once
//   sent money to this one now sees in their history (publicName).

/** What a closed account's names read as, wherever another person saw them. */
export const closedAccountName = 'Closed account';

/** The pseudonym that takes a closed account's phone: unique, and never a phone. */
export const closedPhonePseudonym = () => `deleted:${randomUUID()}`;

/**
 * Ends every way into the account and replaces the phone, names and email by a pseudonym, in the
 * closing account's transaction. Answers the pseudonym; false when the user is not found or
 * already closed (nothing is changed then).
 */
export async function closeUser(
  trx: Transaction<DB>,
  userId: string,
  now: Date,
): Promise<{ pseudonym: string } | false> {
  const pseudonym = closedPhonePseudonym();
  const closed = await trx
    .updateTable('users')
    .set({
      phone: pseudonym,
      email: null,
      email_verified_at: null,
      first_name: closedAccountName,
      last_name: null,
      name_verified_at: null,
      pin_hash: null,
      pin_failed_count: 0,
      pin_locked_until: null,
      closed_at: now,
      updated_at: now,
    })
    .where('id', '=', userId)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (closed.numUpdatedRows === 0n) return false;
  await trx.deleteFrom('sessions').where('user_id', '=', userId).execute();
  await trx.deleteFrom('known_devices').where('user_id', '=', userId).execute();
  await trx.deleteFrom('email_verifications').where('user_id', '=', userId).execute();
  await trx.deleteFrom('admin_totp').where('user_id', '=', userId).execute();
  return { pseudonym };
}
