import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// A closed account's devices are forgotten with it (API.md 17.3, decision 0047): nothing is pushed to
// a person who is gone.

/** Deletes every push subscription of the user, in the closing account's transaction; answers how many. */
export async function forgetDevicesOf(trx: Transaction<DB>, userId: string): Promise<number> {
  const deleted = await trx.deleteFrom('push_subscriptions').where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
