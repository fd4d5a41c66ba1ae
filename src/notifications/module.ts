import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import { everyRow } from '../paging.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import type { PushApi } from '../push/module.ts';
import { forgetInboxOf } from './account-closure.ts';
import { emailNotification } from './email.ts';
import { deliverAlertToAdmins, listInbox, type NotificationView } from './inbox.ts';
import { broadcastPushJob, notificationEmailJob, notificationPushJob } from './jobs.ts';
import { notificationOperations } from './ops.ts';
import { pushBroadcastPage, pushNotification } from './pushes.ts';
import { purgeOldNotifications } from './retention.ts';
import { type NotificationSettings, settingsOf } from './settings.ts';
import { inboxSubscriptions } from './subscribers.ts';

// Notifications (SPEC.md item 9, API.md sections 10 and 11): the inbox (every domain event, once),
// broadcasts and polls, the per-kind switches, and the delivery of entries and broadcasts by email
// and push. The users' addresses are auth's and their devices push's: both come in through deps.

/**
 * Everything notifications is given (createModules). Its files take the part they need
 * (NotificationsDeps in deps.ts), which the compiler checks these satisfy.
 */
export type NotificationsModuleDeps = {
  /** The database: this module's tables (the inbox, the switches, broadcasts and polls). */
  db: Kysely<DB>;
  /** The service clock: when an entry is read, a broadcast made or a vote cast; which broadcasts are open. */
  clock: Clock;
  /** The job queue the email and push of an entry, and a broadcast's pages, go through. */
  jobs: JobQueue;
  /** Transactional email: an inbox entry's email to the user's verified address. */
  mailer: Mailer;
  /** Operations alerts go to the inboxes of the users with these phones (E.164, ADMIN_PHONES). */
  adminPhones: ReadonlySet<string>;
  /**
   * Auth's api: the verified email address of each of these users that has one, read on the handle
   * given (the inbox decides whom to email in its own transaction).
   */
  verifiedEmailsOf: AuthApi['verifiedEmailsOf'];
  /** Push's api: who has a device, the devices, and sending to them. */
  push: PushApi;
  /** Auth's api: the administrators' user ids, from ADMIN_PHONES, whose inboxes an alert goes to. */
  findUserIdsByPhones: AuthApi['findUserIdsByPhones'];
};

export type NotificationsModule = DomainModule & {
  api: {
    /**
     * Puts an operations alert in every administrator's inbox (the users whose phone is in
     * ADMIN_PHONES and who have signed in), once per alert and administrator; answers how many new.
     */
    deliverAlertToAdmins(alert: { id: string; kind: string; message: string }): Promise<number>;
    /** The person's whole inbox, newest first, and their email and push switches (their data export). */
    personalDataOf(userId: string): Promise<{ inbox: NotificationView[]; settings: NotificationSettings }>;
    /** Deletes the person's inbox and switches, in the closing account's transaction (decision 0047). */
    forgetInboxOf: typeof forgetInboxOf;
    /** Retention (decision 0054): one batch of the read notifications before readBefore and all before `before`. */
    purgeOldNotifications(cutoffs: { readBefore: Date; before: Date }, batchMax: number): Promise<number>;
  };
};

export function createNotificationsModule(deps: NotificationsModuleDeps): NotificationsModule {
  return {
    operations: notificationOperations(deps),
    jobs: [
      jobDefinition(notificationEmailJob, {
        // The email of one inbox entry (email.ts), enqueued with the entry. Retried with backoff
        // while the mail server is down; sends nothing to an unverified address or a kind the user
        // switched off.
        batchSize: 20,
        retryLimit: 8,
        retryDelaySeconds: 30,
        expireInSeconds: 120,
        handler: async ({ notificationId }) => {
          await emailNotification(deps, notificationId);
        },
      }),
      jobDefinition(notificationPushJob, {
        // The push of one inbox entry to its user's devices (pushes.ts), enqueued with the entry.
        batchSize: 20,
        retryLimit: 5,
        retryDelaySeconds: 30,
        expireInSeconds: 120,
        handler: async ({ notificationId }) => {
          await pushNotification(deps, notificationId);
        },
      }),
      jobDefinition(broadcastPushJob, {
        // One page of a broadcast's push fan-out (pushes.ts); each page enqueues the next.
        retryLimit: 5,
        retryDelaySeconds: 30,
        expireInSeconds: 300,
        handler: async ({ broadcastId, after }) => {
          await pushBroadcastPage(deps, broadcastId, after);
        },
      }),
    ],
    subscribers: inboxSubscriptions(deps),
    api: {
      deliverAlertToAdmins: (alert) => deliverAlertToAdmins(deps, alert, deps.clock.now()),
      personalDataOf: async (userId) => {
        const [{ items }, settings] = await Promise.all([
          listInbox(deps.db, userId, everyRow),
          settingsOf(deps.db, userId),
        ]);
        return { inbox: items, settings };
      },
      forgetInboxOf,
      purgeOldNotifications: (cutoffs, batchMax) => purgeOldNotifications(deps.db, cutoffs, batchMax),
    },
  };
}
