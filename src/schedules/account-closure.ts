import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// What a closing account asks of the schedules (API.md 17.3, decision 0047): an open schedule (active,
// or paused and able to resume) would buy again, so the person cancels it first; when the account
// closes, every schedule of it, ended or cancelled, is deleted.

/** How many of the user's schedules are open (active or paused), on the handle given. */
export async function openSchedulesOf(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<number> {
  const { count } = await db
    .selectFrom('schedules')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', 'in', ['active', 'paused'])
    .executeTakeFirstOrThrow();
  return Number(count);
}

/** Deletes every schedule of the user, in the closing account's transaction; answers how many. */
export async function deleteSchedulesOf(trx: Transaction<DB>, userId: string): Promise<number> {
  const deleted = await trx.deleteFrom('schedules').where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
