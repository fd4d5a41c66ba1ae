import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// A person's purchases whose outcome is not known yet: a closing account waits for them (API.md
// 17.3, decision 0047), since each still settles, or refunds, or credits (airtime-to-cash) its wallet.

/**
 * How many of the user's purchases are still processing, read on the handle given: in the caller's
 * transaction once the wallet is locked, a purchase accepted before it is counted (it is recorded
 * in its debit's transaction) and one after it waits.
 */
export async function processingPurchasesOf(
  db: Kysely<DB> | Transaction<DB>,
  userId: string,
): Promise<number> {
  const { count } = await db
    .selectFrom('vtu_transactions')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .where('status', '=', 'processing')
    .executeTakeFirstOrThrow();
  return Number(count);
}
