import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// What a closing account asks of the savings (API.md 17.3, decision 0047): a lock still holds the
// person's money, so the account waits until it matures or is broken.

/**
 * How many of the user's locks are active, on the handle given: in the caller's transaction once
 * the wallet is locked, a lock made before it is counted (its posting took that wallet's lock).
 */
export async function activeLocksOf(db: Kysely<DB> | Transaction<DB>, userId: string): Promise<number> {
  const { count } = await db
    .selectFrom('savings_locks')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(count);
}
