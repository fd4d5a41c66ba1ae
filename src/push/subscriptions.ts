import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import type { PushSubscriptionKeys } from '../providers/push/web-push-sender.ts';

// The users' push subscriptions: an upsert by endpoint (the browser's push service URL is unique to
// one browser profile, so a second save of it replaces the first, whoever saved it).

export async function saveSubscription(
  db: Kysely<DB>,
  userId: string,
  subscription: PushSubscriptionKeys,
  now: Date,
): Promise<void> {
  const row = { user_id: userId, p256dh: subscription.p256dh, auth: subscription.auth, updated_at: now };
  await db
    .insertInto('push_subscriptions')
    .values({ endpoint: subscription.endpoint, ...row, created_at: now })
    .onConflict((oc) => oc.column('endpoint').doUpdateSet(row))
    .execute();
}

/** Deletes the caller's subscription; another user's endpoint, or none, is 404. */
export async function deleteSubscription(db: Kysely<DB>, userId: string, endpoint: string): Promise<void> {
  const deleted = await db
    .deleteFrom('push_subscriptions')
    .where('endpoint', '=', endpoint)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (deleted.numDeletedRows === 0n) throw notFound('push subscription');
}

export async function subscriptionsOf(db: Kysely<DB>, userId: string): Promise<PushSubscriptionKeys[]> {
  return db
    .selectFrom('push_subscriptions')
    .select(['endpoint', 'p256dh', 'auth'])
    .where('user_id', '=', userId)
    .orderBy('endpoint')
    .execute();
}

/** Forgets a subscription its push service says is gone (404 or 410). */
export async function forgetSubscription(db: Kysely<DB>, endpoint: string): Promise<void> {
  await db.deleteFrom('push_subscriptions').where('endpoint', '=', endpoint).execute();
}
