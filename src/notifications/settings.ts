import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { type NotificationKind, notificationKinds, securityKinds } from './messages.ts';

// Each user's switches for email and push, per notification kind (API.md section 10). Stored are
// the kinds switched off; every kind is on until its user says otherwise.

export type Channel = 'email' | 'push';
export type ChannelSettings = Record<NotificationKind, boolean>;
export type NotificationSettings = Record<Channel, ChannelSettings>;

const parse = (value: unknown): Record<string, boolean> =>
  (typeof value === 'string' ? JSON.parse(value) : (value ?? {})) as Record<string, boolean>;

const complete = (stored: Record<string, boolean>): ChannelSettings =>
  Object.fromEntries(notificationKinds.map((kind) => [kind, stored[kind] !== false])) as ChannelSettings;

/** The settings a stored row says (none stored: every kind on); security mail is always on. */
const settingsFrom = (row: { email: unknown; push: unknown } | undefined): NotificationSettings => {
  const email = complete(parse(row?.email));
  for (const kind of securityKinds) email[kind] = true;
  return { email, push: complete(parse(row?.push)) };
};

export async function settingsOf(
  db: Kysely<DB> | Transaction<DB>,
  userId: string,
): Promise<NotificationSettings> {
  const row = await db
    .selectFrom('notification_settings')
    .select(['email', 'push'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return settingsFrom(row);
}

/** The settings of each of these users, with one statement: every id given has an entry. */
export async function settingsOfUsers(
  db: Kysely<DB> | Transaction<DB>,
  userIds: readonly string[],
): Promise<Map<string, NotificationSettings>> {
  const rows =
    userIds.length === 0
      ? []
      : await db
          .selectFrom('notification_settings')
          .select(['user_id', 'email', 'push'])
          .where('user_id', 'in', [...userIds])
          .execute();
  const stored = new Map(rows.map((row) => [row.user_id, row]));
  return new Map(userIds.map((id) => [id, settingsFrom(stored.get(id))]));
}

/** Whether the user gets this kind on this channel (security mail always). */
export const switchedOn = (settings: NotificationSettings, channel: Channel, kind: string): boolean =>
  (channel === 'email' && securityKinds.includes(kind as NotificationKind)) ||
  settings[channel][kind as NotificationKind] !== false;

/** Applies the switches given, keeps the others, and answers the whole settings. */
export async function updateSettings(
  db: Kysely<DB>,
  userId: string,
  change: { [C in Channel]?: { [kind: string]: boolean | undefined } | undefined },
  now: Date,
): Promise<NotificationSettings> {
  return db.transaction().execute(async (trx) => {
    const current = await settingsOf(trx, userId);
    // The schema admits only known kinds; a switch left out keeps its value.
    const apply = (was: ChannelSettings, given: { [kind: string]: boolean | undefined } | undefined) =>
      Object.fromEntries(
        notificationKinds.map((kind) => [kind, given?.[kind] ?? was[kind]]),
      ) as ChannelSettings;
    const next: NotificationSettings = {
      email: apply(current.email, change.email),
      push: apply(current.push, change.push),
    };
    const row = { email: JSON.stringify(next.email), push: JSON.stringify(next.push), updated_at: now };
    await trx
      .insertInto('notification_settings')
      .values({ user_id: userId, ...row })
      .onConflict((oc) => oc.column('user_id').doUpdateSet(row))
      .execute();
    return next;
  });
}
