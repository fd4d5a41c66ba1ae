import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// A closed account's saved recipients are deleted with it (API.md 17.3, decision 0047): they are the
// person's address book, not a record any law asks to keep.

/** Deletes every beneficiary of the user, in the closing account's transaction; answers how many. */
export async function deleteBeneficiariesOf(trx: Transaction<DB>, userId: string): Promise<number> {
  const deleted = await trx.deleteFrom('beneficiaries').where('user_id', '=', userId).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
