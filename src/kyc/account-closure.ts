import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DocumentStore } from '../providers/storage/document-store.ts';

// KYC's part in closing an account (API.md 17.3, decision 0047). The submissions and documents are
// the identity records the anti-money-laundering rule keeps for RETENTION_YEARS after the account
// closed, so closing keeps them, under the account's pseudonym; but the NIN must be free for a new
// account at once: the closed account's submissions are marked as no longer holding their identity,
// which takes them out of the one-NIN-one-account index (migration 2026-12-09T1100) and out of
// ninHeldElsewhere. Once retention has passed, the erasure deletes the documents' bytes, then the
// rows: submissions, documents and face checks.

/** Releases the NIN of every submission of the user, in the closing account's transaction. */
export async function releaseIdentityOf(trx: Transaction<DB>, userId: string, now: Date): Promise<void> {
  await trx
    .updateTable('kyc_submissions')
    .set({ identity_released_at: now })
    .where('user_id', '=', userId)
    .where('identity_released_at', 'is', null)
    .execute();
}

/**
 * Erases the user's KYC records: each document's bytes from the store first (outside any
 * transaction; deleting one already gone is no error), then in one transaction the submissions,
 * the documents they point at and the face checks. Safe to run again after a failure part way.
 */
export async function eraseRecordsOf(
  deps: { db: Kysely<DB>; store: DocumentStore },
  userId: string,
): Promise<{ documents: number; submissions: number }> {
  const documents = await deps.db
    .selectFrom('kyc_documents')
    .select('storage_key')
    .where('user_id', '=', userId)
    .execute();
  for (const document of documents) await deps.store.delete(document.storage_key);
  return deps.db.transaction().execute(async (trx) => {
    const submissions = await trx
      .deleteFrom('kyc_submissions')
      .where('user_id', '=', userId)
      .executeTakeFirst();
    await trx.deleteFrom('kyc_documents').where('user_id', '=', userId).execute();
    await trx.deleteFrom('kyc_liveness_checks').where('user_id', '=', userId).execute();
    return { documents: documents.length, submissions: Number(submissions.numDeletedRows) };
  });
}
