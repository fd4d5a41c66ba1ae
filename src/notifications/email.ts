import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import { type NotificationKind, securityKinds } from './messages.ts';
import { settingsOf } from './settings.ts';

// Transactional email (SPEC.md item 9, API.md section 10): the email of one inbox entry, sent by a
// job enqueued with the entry (so exactly when it was made), only to the user's verified address
// and only while the user has that kind switched on. No operation sends arbitrary email.

const escapeHtml = (value: string) =>
  value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

export function renderEmail(n: { title: string; body: string }): {
  subject: string;
  text: string;
  html: string;
} {
  return {
    subject: n.title,
    text: `${n.body}\n\nbillrail: you get this email because it is switched on in your notification settings.`,
    html: `<!doctype html><html><body style="font-family:sans-serif"><h1 style="font-size:18px">${escapeHtml(
      n.title,
    )}</h1><p>${escapeHtml(n.body)}</p><p style="color:#666;font-size:12px">billrail: you get this email because it is switched on in your notification settings.</p></body></html>`,
  };
}

/**
 * Sends one notification's email, or nothing: no verified address, the kind switched off, or the
 * entry gone. A failure to hand it to the mail server throws, and the job retries with backoff.
 */
export async function emailNotification(
  deps: { db: Kysely<DB>; mailer: Mailer },
  notificationId: string,
): Promise<'sent' | 'unverified' | 'switched_off' | 'unknown'> {
  const row = await deps.db
    .selectFrom('notifications as n')
    .innerJoin('users as u', 'u.id', 'n.user_id')
    .select(['n.user_id', 'n.kind', 'n.title', 'n.body', 'u.email', 'u.email_verified_at'])
    .where('n.id', '=', notificationId)
    .executeTakeFirst();
  if (row === undefined) return 'unknown';
  if (row.email === null || row.email_verified_at === null) return 'unverified';
  const settings = await settingsOf(deps.db, row.user_id);
  const kind = row.kind as NotificationKind;
  if (!securityKinds.includes(kind) && settings.email[kind] === false) return 'switched_off';
  await deps.mailer.send({ to: row.email, ...renderEmail(row) });
  return 'sent';
}
