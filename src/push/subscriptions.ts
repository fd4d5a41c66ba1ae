import type { Kysely, Transaction } from 'kysely';
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

/**
 * Of these users, those with at least one subscription: one statement for a whole batch, on the
 * caller's handle so that it can decide in the caller's transaction.
 */
export async function usersWithDevices(
  db: Kysely<DB> | Transaction<DB>,
  userIds: readonly string[],
): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('push_subscriptions')
    .select('user_id')
    .distinct()
    .where('user_id', 'in', [...userIds])
    .execute();
  return new Set(rows.map((row) => row.user_id));
}

export type Device = PushSubscriptionKeys & { userId: string };

/** Every subscription in pages, ordered by endpoint: the `limit` after `after` (from the start for null). */
export async function subscriptionPage(
  db: Kysely<DB>,
  after: string | null,
  limit: number,
): Promise<Device[]> {
  const rows = await db
    .selectFrom('push_subscriptions')
    .select(['endpoint', 'p256dh', 'auth', 'user_id'])
    .$if(after !== null, (q) => q.where('endpoint', '>', after!))
    .orderBy('endpoint')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ endpoint: r.endpoint, p256dh: r.p256dh, auth: r.auth, userId: r.user_id }));
}

/** Forgets a subscription its push service says is gone (404 or 410). */
export async function forgetSubscription(db: Kysely<DB>, endpoint: string): Promise<void> {
  await db.deleteFrom('push_subscriptions').where('endpoint', '=', endpoint).execute();
}
