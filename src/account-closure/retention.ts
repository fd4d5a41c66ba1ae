import { defineJob, noPayload } from '../jobs/job.ts';
import type { AccountClosureModuleDeps } from './deps.ts';

// The end of retention (API.md 17.3, docs/privacy.md): RETENTION_YEARS after an account closed, its
// KYC documents and submissions are erased (kyc's eraseRecordsOf: the documents' bytes, then the
// rows). The ledger's entries and the transaction records stay: the books must still add up, and
// under the pseudonym they name no one.

export const retentionErasureJob = defineJob('account-closure.erase-past-retention', noPayload);

/** Accounts erased per run at most; more wait for the next day's run. */
export const erasuresPerRunMax = 100;

export type RetentionDeps = Pick<AccountClosureModuleDeps, 'db' | 'clock' | 'config' | 'eraseKycRecordsOf'>;

/** The instant `years` calendar years before `now` (29 February counts back to 1 March). */
export function yearsBefore(now: Date, years: number): Date {
  const then = new Date(now.getTime());
  then.setUTCFullYear(then.getUTCFullYear() - years);
  return then;
}

/**
 * Erases the KYC records of the accounts closed RETENTION_YEARS ago or more, once each. Safe to run
 * twice: an erasure that failed part way is done again, and erased_at is set only after it.
 */
export async function eraseRecordsPastRetention(deps: RetentionDeps): Promise<{ erased: number }> {
  const now = deps.clock.now();
  const due = await deps.db
    .selectFrom('account_closures')
    .select(['id', 'user_id'])
    .where('status', '=', 'closed')
    .where('erased_at', 'is', null)
    .where('closed_at', '<=', yearsBefore(now, deps.config.retentionYears))
    .orderBy('closed_at')
    .limit(erasuresPerRunMax)
    .execute();
  for (const closure of due) {
    await deps.eraseKycRecordsOf(closure.user_id);
    await deps.db
      .updateTable('account_closures')
      .set({ erased_at: now })
      .where('id', '=', closure.id)
      .where('erased_at', 'is', null)
      .execute();
  }
  return { erased: due.length };
}
