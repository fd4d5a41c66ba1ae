import { publishEvent } from '../events/domain-events.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import type { AccountClosureModuleDeps } from './deps.ts';
import { lockedReasons } from './reasons.ts';

// The closing job (API.md 17.3, decision 0047): every request whose effective time has come is
// decided again, each in a transaction of its own that takes the person's wallet lock first (as the
// request did, reasons.ts), then the request's row. If a reason applies now (money came in, a
// purchase is processing, a schedule was made meanwhile), the account is not closed: the request is
// cancelled by the service, and the person is told why (the `account_closure.cancelled` event, which
// the notifications module puts in their inbox, email and push). Otherwise, in that one transaction:
// sessions, push subscriptions, beneficiaries, schedules and the inbox are deleted, the phone,
// names and email become a pseudonym (auth's closeUser), and the KYC submissions let go of their
// NIN. The ledger, the purchases, the transfers and the KYC records stay, under the pseudonym, for
// RETENTION_YEARS (retention.ts).

export const accountClosingJob = defineJob('account-closure.close-due', noPayload);

/** Requests decided per run at most; a run that finds more leaves them to the next, a minute later. */
export const closingsPerRunMax = 100;

export type ClosingDeps = Pick<
  AccountClosureModuleDeps,
  | 'db'
  | 'clock'
  | 'jobs'
  | 'processingPurchasesOf'
  | 'openDisputesOf'
  | 'activeLocksOf'
  | 'openSchedulesOf'
  | 'closeUser'
  | 'deleteSchedulesOf'
  | 'deleteBeneficiariesOf'
  | 'forgetDevicesOf'
  | 'forgetInboxOf'
  | 'releaseIdentityOf'
>;

/**
 * Decides the requests due now. Safe to run twice, and on several workers at once: each request is
 * decided under its row lock, and one already decided is left be.
 */
export async function closeDueAccounts(deps: ClosingDeps): Promise<{ closed: number; cancelled: number }> {
  const due = await deps.db
    .selectFrom('account_closures')
    .select(['id', 'user_id'])
    .where('status', '=', 'pending')
    .where('effective_at', '<=', deps.clock.now())
    .orderBy('effective_at')
    .limit(closingsPerRunMax)
    .execute();
  const counts = { closed: 0, cancelled: 0 };
  for (const request of due) {
    const outcome = await decideClosing(deps, request.id, request.user_id);
    if (outcome !== 'gone') counts[outcome]++;
  }
  return counts;
}

async function decideClosing(
  deps: ClosingDeps,
  requestId: string,
  userId: string,
): Promise<'closed' | 'cancelled' | 'gone'> {
  return deps.db.transaction().execute(async (trx) => {
    // The wallet's lock first, as every request, purchase and credit of this person takes it.
    const reasons = await lockedReasons(deps, trx, userId);
    const now = deps.clock.now();
    const request = await trx
      .selectFrom('account_closures')
      .select('id')
      .where('id', '=', requestId)
      .where('status', '=', 'pending')
      .where('effective_at', '<=', now)
      .forUpdate()
      .executeTakeFirst();
    // Decided by another run, or cancelled by the person, meanwhile.
    if (request === undefined) return 'gone';
    if (reasons.length > 0) {
      await trx
        .updateTable('account_closures')
        .set({
          status: 'cancelled',
          cancelled_at: now,
          cancelled_by: 'service',
          cancel_reasons: JSON.stringify(reasons),
        })
        .where('id', '=', requestId)
        .execute();
      await publishEvent(deps.jobs, trx, {
        type: 'account_closure.cancelled',
        userId,
        requestId,
        by: 'service',
        reasons,
        occurredAt: now.toISOString(),
      });
      return 'cancelled';
    }
    await deps.closeUser(trx, userId, now);
    await deps.forgetDevicesOf(trx, userId);
    await deps.forgetInboxOf(trx, userId);
    await deps.deleteBeneficiariesOf(trx, userId);
    await deps.deleteSchedulesOf(trx, userId);
    await deps.releaseIdentityOf(trx, userId, now);
    await trx
      .updateTable('account_closures')
      .set({ status: 'closed', closed_at: now })
      .where('id', '=', requestId)
      .execute();
    return 'closed';
  });
}
