import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

// What push keeps about a person, for their data export (API.md 17.3): each device subscribed, by
// its push service and dates. Not the endpoint's full address nor its keys: with them anyone could
// push to the device, and the file is a copy that travels.

export type PushDevice = { pushService: string; subscribedAt: string; updatedAt: string };

export async function pushDevicesOf(db: Kysely<DB>, userId: string): Promise<PushDevice[]> {
  const rows = await db
    .selectFrom('push_subscriptions')
    .select(['endpoint', 'created_at', 'updated_at'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return rows.map((row) => ({
    pushService: new URL(row.endpoint).host,
    subscribedAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  }));
}
