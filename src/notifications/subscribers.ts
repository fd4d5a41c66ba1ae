import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DomainEvent, DomainEventType } from '../events/domain-events.ts';
import { onBatch, type Subscription } from '../module.ts';
import type { NotificationsDeps } from './deps.ts';
import { deliverAllToInbox, type NewEntry } from './inbox.ts';
import { notificationEmailJob, notificationPushJob } from './jobs.ts';
import { messageFor } from './messages.ts';
import { settingsOfUsers, switchedOn } from './settings.ts';

// Every platform event reaches its user's inbox (API.md section 10). The subscriber runs in the
// domain-event job, which may run twice: the inbox takes each fact once.
//
// It takes a job's events at once: a settled batch of purchases publishes one job of many events,
// and its entries are written by one statement in one transaction, with their delivery jobs
// enqueued by one statement per kind of job. A delivery job is enqueued only where there is
// something to deliver to: an email job for a user with a verified address and the kind switched
// on, a push job for a user with a device and the kind switched on (most buyers have neither, and
// a job costs a row to insert, fetch, complete and purge). The jobs check both again when they run.

/** Every event type, so that a new one must be named here (and given a message, or none). */
const everyEventType = {
  'auth.pin_changed': true,
  'auth.new_device_sign_in': true,
  'auth.account_frozen': true,
  'auth.account_unfrozen': true,
  'auth.second_factor_reset': true,
  'kyc.tier_approved': true,
  'kyc.tier_rejected': true,
  'funding.topup_credited': true,
  'funding.bank_deposit_credited': true,
  'funding.float_top_up_settled': true,
  'funding.float_top_up_failed': true,
  'vtu.purchase_succeeded': true,
  'vtu.purchase_failed': true,
  'vtu.delivery_arrived': true,
  'wallet.transfer_received': true,
  'savings.lock_created': true,
  'savings.lock_matured': true,
  'savings.lock_broken': true,
  'disputes.resolved': true,
  'adjustments.approved': true,
  'limits.balance_held': true,
  'limits.held_released': true,
  'account_closure.requested': true,
  'account_closure.cancelled': true,
  'growth.checkin_claimed': true,
  'growth.milestone_reached': true,
  'growth.referral_qualified': true,
  'schedule.run_skipped': true,
  'schedule.paused': true,
  'data_export.ready': true,
} satisfies Record<DomainEventType, true>;

/** The inbox's subscription: every event type, a job's events at once. */
export const inboxSubscriptions = (deps: NotificationsDeps): Subscription[] =>
  onBatch(Object.keys(everyEventType) as DomainEventType[], async (events) => {
    await deliverEvents(deps, events);
  });

/**
 * Puts these events' messages in their users' inboxes, and enqueues the email and push jobs of the
 * entries it made, all in one transaction: a job that runs again finds the entries made and sends
 * nothing twice. Entries are dated when the fact happened, not when the job ran: the inbox reads in
 * the order of events. Answers the counts of what it made.
 */
async function deliverEvents(
  deps: NotificationsDeps,
  events: readonly DomainEvent[],
): Promise<{ entries: number; emails: number; pushes: number }> {
  const messages = events.flatMap((event) => {
    const message = messageFor(event);
    return message === null ? [] : [{ ...message, createdAt: new Date(event.occurredAt) }];
  });
  if (messages.length === 0) return { entries: 0, emails: 0, pushes: 0 };
  return deps.db.transaction().execute(async (trx) => {
    const entries = await deliverAllToInbox(trx, messages);
    const { emails, pushes } = await deliveryJobs(deps, trx, entries);
    await deps.jobs.insert(notificationEmailJob, emails, { db: trx });
    await deps.jobs.insert(notificationPushJob, pushes, { db: trx });
    return { entries: entries.length, emails: emails.length, pushes: pushes.length };
  });
}

type DeliveryJob = { data: { notificationId: string } };

/**
 * The email and push jobs of these new entries, decided in the inbox's transaction by one query per
 * question over the batch's users: who has a verified address (auth), who has a device (push), and,
 * of those, what they switched off.
 */
async function deliveryJobs(
  deps: NotificationsDeps,
  trx: Transaction<DB>,
  entries: readonly NewEntry[],
): Promise<{ emails: DeliveryJob[]; pushes: DeliveryJob[] }> {
  if (entries.length === 0) return { emails: [], pushes: [] };
  const userIds = [...new Set(entries.map((entry) => entry.userId))];
  const addressed = await deps.verifiedEmailsOf(trx, userIds);
  const withDevices = await deps.push.usersWithDevices(trx, userIds);
  const reachable = userIds.filter((id) => addressed.has(id) || withDevices.has(id));
  const settings = await settingsOfUsers(trx, reachable);
  const emails: DeliveryJob[] = [];
  const pushes: DeliveryJob[] = [];
  for (const entry of entries) {
    const job = { data: { notificationId: entry.id } };
    if (addressed.has(entry.userId) && switchedOn(settings.get(entry.userId)!, 'email', entry.kind))
      emails.push(job);
    if (withDevices.has(entry.userId) && switchedOn(settings.get(entry.userId)!, 'push', entry.kind))
      pushes.push(job);
  }
  return { emails, pushes };
}
