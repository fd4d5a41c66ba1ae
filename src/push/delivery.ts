import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { JOB_BROADCAST_PUSH } from '../notifications/job-names.ts';
import type { NotificationKind } from '../notifications/messages.ts';
import { settingsOf } from '../notifications/settings.ts';
import type { PushSender, PushSubscriptionKeys } from '../providers/push/web-push-sender.ts';
import { forgetSubscription, subscriptionsOf } from './subscriptions.ts';

// Web Push delivery, by jobs: one per inbox entry (to its user's devices, when the user has that
// kind switched on), and a broadcast's fan-out in pages of subscriptions, each page a job that
// enqueues the next. Pushes of a page go out side by side, each with its own timeout, so that a
// slow push service holds up only its own. A 404 or 410 forgets the subscription; any other
// failure fails the job, which retries (a device may then get a push twice: push is at least once).

/** Subscriptions a broadcast page pushes to. */
export const broadcastPageSize = 500;
/** Pushes in flight at once within one job. */
const pushesAtOnce = 50;
/** How long a push service keeps an undelivered push: a day. */
const ttlSeconds = 86_400;

export type PushDeps = { db: Kysely<DB>; jobs: JobQueue; push: PushSender };

/** Sends the payload to each subscription, `pushesAtOnce` at a time; answers the counts, throws if any failed. */
async function pushAll(
  deps: PushDeps,
  subscriptions: PushSubscriptionKeys[],
  payload: string,
): Promise<{ delivered: number; gone: number }> {
  let delivered = 0;
  let gone = 0;
  const failures: unknown[] = [];
  let next = 0;
  const worker = async () => {
    while (next < subscriptions.length) {
      const subscription = subscriptions[next++]!;
      try {
        if ((await deps.push.send(subscription, payload, ttlSeconds)) === 'gone') {
          await forgetSubscription(deps.db, subscription.endpoint);
          gone += 1;
        } else delivered += 1;
      } catch (error) {
        failures.push(error);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(pushesAtOnce, subscriptions.length) }, worker));
  if (failures.length > 0)
    throw new AggregateError(failures, `${failures.length} of ${subscriptions.length} pushes failed`);
  return { delivered, gone };
}

/** Pushes one inbox entry to its user's devices, unless the user switched that kind off for push. */
export async function pushNotification(deps: PushDeps, notificationId: string) {
  const n = await deps.db
    .selectFrom('notifications')
    .select(['id', 'user_id', 'kind', 'title', 'body', 'data'])
    .where('id', '=', notificationId)
    .executeTakeFirst();
  if (n === undefined) return { delivered: 0, gone: 0 };
  const settings = await settingsOf(deps.db, n.user_id);
  if (settings.push[n.kind as NotificationKind] === false) return { delivered: 0, gone: 0 };
  const payload = JSON.stringify({ kind: n.kind, title: n.title, body: n.body, notificationId: n.id });
  return pushAll(deps, await subscriptionsOf(deps.db, n.user_id), payload);
}

/**
 * Pushes a broadcast to one page of subscriptions (those after `after`, by endpoint), skipping users
 * who switched broadcasts off, and enqueues the next page before sending this one, so the fan-out
 * goes on while this page is delivered and a retry of this page does not enqueue it again.
 */
export async function pushBroadcastPage(deps: PushDeps, broadcastId: string, after: string | null) {
  const broadcast = await deps.db
    .selectFrom('broadcasts')
    .select(['id', 'title', 'body'])
    .where('id', '=', broadcastId)
    .executeTakeFirst();
  if (broadcast === undefined) return { delivered: 0, gone: 0 };
  const page = await deps.db
    .selectFrom('push_subscriptions as s')
    .leftJoin('notification_settings as n', 'n.user_id', 's.user_id')
    .select(['s.endpoint', 's.p256dh', 's.auth'])
    .where((eb) =>
      eb.or([eb('n.user_id', 'is', null), sql<boolean>`coalesce(n.push->>'broadcast', 'true') <> 'false'`]),
    )
    .$if(after !== null, (q) => q.where('s.endpoint', '>', after!))
    .orderBy('s.endpoint')
    .limit(broadcastPageSize)
    .execute();
  if (page.length === broadcastPageSize) {
    await deps.jobs.send(
      JOB_BROADCAST_PUSH,
      { broadcastId, after: page.at(-1)!.endpoint },
      { singletonKey: `${broadcastId}:${page.at(-1)!.endpoint}` },
    );
  }
  const payload = JSON.stringify({
    kind: 'broadcast',
    title: broadcast.title,
    body: broadcast.body,
    broadcastId,
  });
  return pushAll(deps, page, payload);
}
