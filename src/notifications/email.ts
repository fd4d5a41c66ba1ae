import type { NotificationsDeps } from './deps.ts';
import { settingsOf, switchedOn } from './settings.ts';

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
 * entry gone. A failure to hand it to the mail server throws, and the job retries with backoff. The
 * inbox enqueues this job only for a verified address and a kind switched on; both are checked again
 * here, since either may have changed before the job ran.
 */
export async function emailNotification(
  deps: Pick<NotificationsDeps, 'db' | 'mailer' | 'verifiedEmailsOf'>,
  notificationId: string,
): Promise<'sent' | 'unverified' | 'switched_off' | 'unknown'> {
  const row = await deps.db
    .selectFrom('notifications')
    .select(['user_id', 'kind', 'title', 'body'])
    .where('id', '=', notificationId)
    .executeTakeFirst();
  if (row === undefined) return 'unknown';
  const email = (await deps.verifiedEmailsOf(deps.db, [row.user_id])).get(row.user_id);
  if (email === undefined) return 'unverified';
  if (!switchedOn(await settingsOf(deps.db, row.user_id), 'email', row.kind)) return 'switched_off';
  await deps.mailer.send({ to: email, ...renderEmail(row) });
  return 'sent';
}
