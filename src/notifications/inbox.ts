import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { NotificationsDeps } from './deps.ts';
import type { NotificationMessage } from './messages.ts';

// The in-app inbox (API.md section 10): one row per user and fact, newest first.

export type NotificationView = {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: Record<string, unknown>;
  readAt: string | null;
  createdAt: string;
};

/**
 * Puts the message in its user's inbox once: a second delivery of the same fact (the event job
 * running twice, or two workers at once) inserts nothing. Answers the new entry's id, or null when
 * it was there already.
 */
export async function deliverToInbox(
  db: Kysely<DB> | Transaction<DB>,
  message: NotificationMessage,
  now: Date,
): Promise<string | null> {
  const inserted = await db
    .insertInto('notifications')
    .values(inboxRow(message, now))
    .onConflict((oc) => oc.columns(['user_id', 'source']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted?.id ?? null;
}

/** The inbox row of a message, with a new id, dated `createdAt`. */
function inboxRow(message: NotificationMessage, createdAt: Date) {
  return {
    id: newId(),
    user_id: message.userId,
    kind: message.kind,
    title: message.title,
    body: message.body,
    data: JSON.stringify(message.data),
    source: message.source,
    created_at: createdAt,
  };
}

/** Inbox rows written by one statement at most; a larger batch takes several. */
const inboxRowsPerStatementMax = 1_000;

export type NewEntry = { id: string; userId: string; kind: string };

/**
 * Puts each message in its user's inbox once, dated when its fact happened: the messages of one
 * batch of events (a settled batch of purchases, say) in one statement. A fact already there (the
 * event job running twice, or two workers at once) inserts nothing. Answers the entries it made.
 */
export async function deliverAllToInbox(
  trx: Transaction<DB>,
  messages: ReadonlyArray<NotificationMessage & { createdAt: Date }>,
): Promise<NewEntry[]> {
  // Ids in the order of the events, so that entries of one instant read in that order; rows in
  // the order of the unique key, so that two batches holding the same facts cannot deadlock.
  const seen = new Set<string>();
  const rows = messages
    .map((message) => inboxRow(message, message.createdAt))
    .filter((row) => {
      const key = `${row.user_id}\u0000${row.source}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .sort((a, b) =>
      a.user_id === b.user_id ? (a.source < b.source ? -1 : 1) : a.user_id < b.user_id ? -1 : 1,
    );
  const made: NewEntry[] = [];
  for (let at = 0; at < rows.length; at += inboxRowsPerStatementMax) {
    const inserted = await trx
      .insertInto('notifications')
      .values(rows.slice(at, at + inboxRowsPerStatementMax))
      .onConflict((oc) => oc.columns(['user_id', 'source']).doNothing())
      .returning(['id', 'user_id', 'kind'])
      .execute();
    for (const row of inserted) made.push({ id: row.id, userId: row.user_id, kind: row.kind });
  }
  return made;
}

const toView = (row: {
  id: string;
  kind: string;
  title: string;
  body: string;
  data: unknown;
  read_at: Date | null;
  created_at: Date;
}): NotificationView => ({
  id: row.id,
  kind: row.kind,
  title: row.title,
  body: row.body,
  data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
  readAt: row.read_at?.toISOString() ?? null,
  createdAt: row.created_at.toISOString(),
});

export async function listInbox(
  db: Kysely<DB>,
  userId: string,
  page: { limit: number; offset: number },
): Promise<{ items: NotificationView[]; total: number; unread: number }> {
  const rows = await db
    .selectFrom('notifications')
    .select(['id', 'kind', 'title', 'body', 'data', 'read_at', 'created_at'])
    .where('user_id', '=', userId)
    // Ids are UUIDv7: they order the entries of one instant too.
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const counts = await db
    .selectFrom('notifications')
    .select((eb) => [
      eb.fn.countAll<string | number | bigint>().as('total'),
      eb.fn.count<string | number | bigint>('id').filterWhere('read_at', 'is', null).as('unread'),
    ])
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  return { items: rows.map(toView), total: Number(counts.total), unread: Number(counts.unread) };
}

/** Marks one of the user's notifications read (once: a later call keeps the first readAt). */
export async function markRead(
  db: Kysely<DB>,
  userId: string,
  id: string,
  now: Date,
): Promise<NotificationView> {
  await db
    .updateTable('notifications')
    .set({ read_at: now })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .execute();
  const row = await db
    .selectFrom('notifications')
    .select(['id', 'kind', 'title', 'body', 'data', 'read_at', 'created_at'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (row === undefined) throw notFound('notification');
  return toView(row);
}

export async function markAllRead(db: Kysely<DB>, userId: string, now: Date): Promise<{ marked: number }> {
  const result = await db
    .updateTable('notifications')
    .set({ read_at: now })
    .where('user_id', '=', userId)
    .where('read_at', 'is', null)
    .executeTakeFirst();
  return { marked: Number(result.numUpdatedRows) };
}

/**
 * Puts an operations alert in every administrator's inbox (the users whose phone is in
 * ADMIN_PHONES and who have signed in), once per alert and administrator.
 */
export async function deliverAlertToAdmins(
  {
    db,
    adminPhones,
    findUserIdsByPhones,
  }: Pick<NotificationsDeps, 'db' | 'adminPhones' | 'findUserIdsByPhones'>,
  alert: { id: string; kind: string; message: string },
  now: Date,
): Promise<number> {
  if (adminPhones.size === 0) return 0;
  const admins = await findUserIdsByPhones([...adminPhones]);
  let delivered = 0;
  for (const userId of admins) {
    const put = await deliverToInbox(
      db,
      {
        userId,
        kind: 'ops_alert',
        title: `Operations alert: ${alert.kind}`,
        body: alert.message,
        data: { alertId: alert.id, alertKind: alert.kind },
        source: `alert:${alert.id}`,
      },
      now,
    );
    if (put !== null) delivered += 1;
  }
  return delivered;
}
