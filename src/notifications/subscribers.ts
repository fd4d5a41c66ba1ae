import type { Context } from '../context.ts';
import type { DomainEventType } from '../events/domain-events.ts';
import { deliverToInbox } from './inbox.ts';
import { JOB_NOTIFICATION_EMAIL, JOB_NOTIFICATION_PUSH } from './job-names.ts';
import { messageFor } from './messages.ts';

// Every platform event reaches its user's inbox (API.md section 10). Subscribers run in the
// domain-event job, which may run twice: the inbox takes each fact once.

/** Every event type, so that a new one must be named here (and given a message, or none). */
const everyEventType = {
  'auth.pin_changed': true,
  'auth.new_device_sign_in': true,
  'kyc.tier_approved': true,
  'kyc.tier_rejected': true,
  'funding.topup_credited': true,
  'funding.transfer_credited': true,
  'funding.transfer_settled': true,
  'funding.transfer_failed': true,
  'vtu.purchase_succeeded': true,
  'vtu.purchase_failed': true,
  'wallet.transfer_received': true,
  'savings.lock_created': true,
  'savings.lock_matured': true,
  'savings.lock_broken': true,
  'growth.checkin_claimed': true,
  'growth.milestone_reached': true,
  'growth.referral_qualified': true,
} satisfies Record<DomainEventType, true>;

export function subscribeNotificationsToEvents(ctx: Context): void {
  for (const type of Object.keys(everyEventType) as DomainEventType[]) {
    ctx.events.subscribe(type, async (event) => {
      const message = messageFor(event);
      if (message === null) return;
      // The entry and its email's and push's jobs commit together: a job that runs again finds the entry made
      // and sends nothing twice. Dated when the fact happened, not when the job ran: the inbox reads
      // in the order of events.
      await ctx.db.transaction().execute(async (trx) => {
        const id = await deliverToInbox(trx, message, new Date(event.occurredAt));
        if (id === null) return;
        await ctx.jobs.send(JOB_NOTIFICATION_EMAIL, { notificationId: id }, { db: trx });
        await ctx.jobs.send(JOB_NOTIFICATION_PUSH, { notificationId: id }, { db: trx });
      });
    });
  }
}
