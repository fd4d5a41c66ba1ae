import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { PushSender, PushSubscriptionKeys } from '../providers/push/web-push-sender.ts';
import { forgetSubscription } from './subscriptions.ts';

// Sending one payload to devices. Notifications decides what is pushed and to whom (its inbox
// entries and broadcasts); this side owns the subscriptions. Pushes go out side by side, each with
// its own timeout, so that a slow push service holds up only its own. A 404 or 410 forgets the
// subscription; any other failure fails the caller's job, which retries (a device may then get a push
// twice: push is at least once).

/** Pushes in flight at once within one call. */
const pushesAtOnce = 50;
/** How long a push service keeps an undelivered push: a day. */
const ttlSeconds = 86_400;

export type PushDeliveryDeps = { db: Kysely<DB>; push: PushSender };

/** Sends the payload to each subscription, `pushesAtOnce` at a time; answers the counts, throws if any failed. */
export async function pushToDevices(
  deps: PushDeliveryDeps,
  subscriptions: readonly PushSubscriptionKeys[],
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
    throw new AggregateError(
      failures,
      `${failures.length} of ${subscriptions.length} pushes failed, the first: ${String(failures[0])}`,
    );
  return { delivered, gone };
}
