import type { DomainModule } from '../module.ts';
import type { NotificationsDeps } from './deps.ts';
import { emailNotification } from './email.ts';
import { deliverAlertToAdmins } from './inbox.ts';
import { JOB_BROADCAST_PUSH, JOB_NOTIFICATION_EMAIL, JOB_NOTIFICATION_PUSH } from './job-names.ts';
import { notificationOperations } from './ops.ts';
import { pushBroadcastPage, pushNotification } from './pushes.ts';
import { inboxSubscriptions } from './subscribers.ts';

// Notifications (SPEC.md item 9, API.md sections 10 and 11): the inbox (every domain event, once),
// broadcasts and polls, the per-kind switches, and the delivery of entries and broadcasts by email
// and push. The users' addresses are auth's and their devices push's: both come in through deps.

export type NotificationsModuleDeps = NotificationsDeps;

export type NotificationsModule = DomainModule & {
  api: {
    /**
     * Puts an operations alert in every administrator's inbox (the users whose phone is in
     * ADMIN_PHONES and who have signed in), once per alert and administrator; answers how many new.
     */
    deliverAlertToAdmins(alert: { id: string; kind: string; message: string }): Promise<number>;
  };
};

export function createNotificationsModule(deps: NotificationsModuleDeps): NotificationsModule {
  return {
    operations: notificationOperations(deps),
    jobs: [
      {
        // The email of one inbox entry (email.ts), enqueued with the entry. Retried with backoff
        // while the mail server is down; sends nothing to an unverified address or a kind the user
        // switched off.
        name: JOB_NOTIFICATION_EMAIL,
        batchSize: 20,
        retryLimit: 8,
        retryDelaySeconds: 30,
        expireInSeconds: 120,
        handler: async (data) => {
          const { notificationId } = data as { notificationId: string };
          await emailNotification(deps, notificationId);
        },
      },
      {
        // The push of one inbox entry to its user's devices (pushes.ts), enqueued with the entry.
        name: JOB_NOTIFICATION_PUSH,
        batchSize: 20,
        retryLimit: 5,
        retryDelaySeconds: 30,
        expireInSeconds: 120,
        handler: async (data) => {
          const { notificationId } = data as { notificationId: string };
          await pushNotification(deps, notificationId);
        },
      },
      {
        // One page of a broadcast's push fan-out (pushes.ts); each page enqueues the next.
        name: JOB_BROADCAST_PUSH,
        retryLimit: 5,
        retryDelaySeconds: 30,
        expireInSeconds: 300,
        handler: async (data) => {
          const { broadcastId, after } = data as { broadcastId: string; after: string | null };
          await pushBroadcastPage(deps, broadcastId, after);
        },
      },
    ],
    subscribers: inboxSubscriptions(deps),
    api: {
      deliverAlertToAdmins: (alert) =>
        deliverAlertToAdmins(deps.db, deps.adminPhones, alert, deps.clock.now()),
    },
  };
}
