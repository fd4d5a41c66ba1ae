import type { NotificationsDeps } from './deps.ts';
import { broadcastPushJob } from './jobs.ts';
import { settingsOf, settingsOfUsers, switchedOn } from './settings.ts';

// What is pushed, and to whom, by jobs: one per inbox entry (to its user's devices, when the user
// has that kind switched on), and a broadcast's fan-out in pages of devices, each page a job that
// enqueues the next. The devices and the sending are push's (src/push/module.ts).

/** Devices a broadcast page pushes to at most. */
const broadcastPageSize = 500;

type PushesDeps = Pick<NotificationsDeps, 'db' | 'jobs' | 'push'>;

/**
 * Pushes one inbox entry to its user's devices, unless the user switched that kind off for push.
 * The inbox enqueues this job only for a user with a device and the kind on; both are checked again
 * here, since either may have changed before the job ran.
 */
export async function pushNotification(deps: PushesDeps, notificationId: string) {
  const n = await deps.db
    .selectFrom('notifications')
    .select(['id', 'user_id', 'kind', 'title', 'body'])
    .where('id', '=', notificationId)
    .executeTakeFirst();
  if (n === undefined) return { delivered: 0, gone: 0 };
  if (!switchedOn(await settingsOf(deps.db, n.user_id), 'push', n.kind)) return { delivered: 0, gone: 0 };
  const payload = JSON.stringify({ kind: n.kind, title: n.title, body: n.body, notificationId: n.id });
  return deps.push.pushTo(await deps.push.devicesOf(n.user_id), payload);
}

/**
 * Pushes a broadcast to one page of devices (those after `after`, by endpoint), skipping users who
 * switched broadcasts off, and enqueues the next page before sending this one, so the fan-out goes
 * on while this page is delivered and a retry of this page does not enqueue it again.
 */
export async function pushBroadcastPage(deps: PushesDeps, broadcastId: string, after: string | null) {
  const broadcast = await deps.db
    .selectFrom('broadcasts')
    .select(['id', 'title', 'body'])
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  if (broadcast === undefined) return { delivered: 0, gone: 0 };
  const page = await deps.push.devicePage(after, broadcastPageSize);
  if (page.length === broadcastPageSize) {
    await deps.jobs.send(
      broadcastPushJob,
      { broadcastId, after: page.at(-1)!.endpoint },
      { singletonKey: `${broadcastId}:${page.at(-1)!.endpoint}` },
    );
  }
  const settings = await settingsOfUsers(deps.db, [...new Set(page.map((device) => device.userId))]);
  const devices = page.filter((device) => switchedOn(settings.get(device.userId)!, 'push', 'broadcast'));
  const payload = JSON.stringify({
    kind: 'broadcast',
    title: broadcast.title,
    body: broadcast.body,
    broadcastId,
  });
  return deps.push.pushTo(devices, payload);
}
