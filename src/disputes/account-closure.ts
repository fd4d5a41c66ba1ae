import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// What a closing account asks of the disputes (API.md 17.3, decision 0047): an open dispute may
// still refund the person, so the account waits until it is resolved.

/** How many of the user's disputes are open, on the handle given (the caller's transaction, if in one). */
export async function openDisputesOf(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<number> {
  const { count } = await db
    .selectFrom('disputes')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', '=', 'open')
    .executeTakeFirstOrThrow();
  return Number(count);
}
