import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// A closed account's inbox and switches are deleted with it (API.md 17.3, decision 0047): copies of
// facts the ledger and the transaction records keep, addressed to a person who is gone.

/** Deletes the user's inbox entries and notification switches, in the closing account's transaction. */
export async function forgetInboxOf(trx: Transaction<DB>, userId: string): Promise<number> {
  const deleted = await trx.deleteFrom('notifications').where('user_id', '=', userId).executeTakeFirst();
  await trx.deleteFrom('notification_settings').where('user_id', '=', userId).execute();
  return Number(deleted.numDeletedRows);
}
