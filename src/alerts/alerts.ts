import type { Kysely, Transaction } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { newId } from '../ids.ts';
import { defineJob } from '../jobs/job.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { newestFirstPage } from '../paging.ts';
import type { Mailer } from '../providers/email/mailer.ts';

// Operations alerts: things a person must look at (a charge that paid another amount than its
// intent, failed float top-ups of a provider, transfer events we never asked for, stuck purchases, ledger
// imbalances). Raised inside the transaction that found the problem, so an alert exists exactly when
// its cause committed. Its email to OPS_EMAIL is a job enqueued in the same transaction (no outside
// I/O inside it): sent after commit, retried with backoff, and never sent for an alert whose
// transaction rolled back.
//
// Funding, vtu (settlement's stuck purchases) and soon savings raise them, so they belong to none of
// those domains: each calls raiseAlert, and only this module touches ops_alerts.

/** The job that emails one alert to OPS_EMAIL. */
export const alertEmailJob = defineJob('ops.alert-email', z.object({ alertId: z.uuid() }));

export type AlertKind =
  | 'topup_amount_mismatch'
  | 'topup_currency_mismatch'
  /** A float top-up of a VTU provider failed, or was reversed before it counted. */
  | 'provider_funding_failed'
  /** A float top-up that had settled was reversed: the money is back in the pool. */
  | 'provider_funding_reversed'
  /**
   * Signed news of a float top-up's transfer that contradicts what we recorded. The transfer_* kinds
   * keep the payment provider's word for what its transfer.* webhooks tell, and are stored in
   * ops_alerts (decision 0038).
   */
  | 'transfer_conflicting_event'
  | 'transfer_amount_mismatch'
  /** A purchase still processing after the configured window: never refunded blindly, a person looks. */
  | 'vtu_purchase_stuck'
  /** A purchase succeeded without its token or pins and they have not come since: still requeried. */
  | 'vtu_delivery_awaited'
  /** The airtime-to-cash provider confirmed more airtime than the user declared: paid on the declared. */
  | 'airtime_cash_over_confirmed'
  /**
   * A validly signed transfer.* event for a reference this service never sent: someone else holds
   * the provider secret (SPEC.md "Events"). One per reference and event kind.
   */
  | 'transfer_unknown_reference'
  /**
   * Money reached a closed account (a bank transfer into its dedicated account, a checkout paid after
   * it closed): it cannot be refused, and an operator returns it (decision 0047).
   */
  | 'credit_to_closed_account'
  /**
   * The morning's reconciliation of a source found records that do not agree with the provider's
   * (API.md 17.5): one per source and day, naming the counts of each bucket.
   */
  | 'reconciliation_mismatch';

/**
 * Stores an alert and enqueues its email, in the caller's transaction. With a `dedupeKey`, the alert
 * is raised once per key, whoever raises it and however many at once (a unique constraint, so a
 * concurrent transaction waits for ours and then stores nothing); returns false when it was raised
 * before, and then no second email is sent either.
 */
export async function raiseAlert(
  db: Kysely<DB> | Transaction<DB>,
  alert: {
    kind: AlertKind;
    message: string;
    details: Record<string, string | number | boolean | null>;
    dedupeKey?: string;
  },
  now: Date,
  jobs: Pick<JobQueue, 'send'>,
): Promise<boolean> {
  const id = newId();
  const inserted = await db
    .insertInto('ops_alerts')
    .values({
      id,
      kind: alert.kind,
      message: alert.message,
      details: JSON.stringify(alert.details),
      created_at: now,
      dedupe_key: alert.dedupeKey ?? null,
    })
    .onConflict((oc) => oc.column('dedupe_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (inserted === undefined) return false;
  await jobs.send(alertEmailJob, { alertId: id }, { db });
  return true;
}

export type StoredAlert = { id: string; kind: string; message: string; createdAt: Date };

/** One stored alert, or undefined. */
export async function findAlert(db: Kysely<DB>, alertId: string): Promise<StoredAlert | undefined> {
  const row = await db
    .selectFrom('ops_alerts')
    .select(['id', 'kind', 'message', 'created_at'])
    .where('id', '=', alertId)
    .executeTakeFirst();
  return row === undefined
    ? undefined
    : { id: row.id, kind: row.kind, message: row.message, createdAt: row.created_at };
}

/**
 * Emails one stored alert to the operations address, if one is configured: its kind, message and
 * details. Delivery is at least once: a retry after a send whose answer was lost sends it again.
 */
export async function emailAlert(
  deps: { db: Kysely<DB>; mailer: Mailer; opsEmail: string | undefined },
  alertId: string,
): Promise<'sent' | 'no_ops_email' | 'unknown_alert'> {
  if (deps.opsEmail === undefined) return 'no_ops_email';
  const alert = await deps.db
    .selectFrom('ops_alerts')
    .selectAll()
    .where('id', '=', alertId)
    .executeTakeFirst();
  if (alert === undefined) return 'unknown_alert';
  const details = (typeof alert.details === 'string' ? JSON.parse(alert.details) : alert.details) as Record<
    string,
    unknown
  >;
  const lines = Object.entries(details).map(([key, value]) => `  ${key}: ${String(value)}`);
  await deps.mailer.send({
    to: deps.opsEmail,
    subject: `[billrail alert] ${alert.kind}`,
    text: [
      `Kind: ${alert.kind}`,
      `Raised at: ${alert.created_at.toISOString()}`,
      `Alert id: ${alert.id}`,
      '',
      alert.message,
      '',
      'Details:',
      ...(lines.length > 0 ? lines : ['  (none)']),
      '',
    ].join('\n'),
  });
  return 'sent';
}

export type AlertView = {
  id: string;
  kind: string;
  message: string;
  details: Record<string, unknown>;
  createdAt: string;
};

/** Newest first; ids are UUIDv7, so they break ties between alerts of the same instant. */
export async function listAlerts(
  db: Kysely<DB>,
  page: { limit: number; offset: number },
): Promise<{ items: AlertView[]; total: number }> {
  const { rows, total } = await newestFirstPage(db.selectFrom('ops_alerts'), page);
  return {
    items: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      message: r.message,
      details: (typeof r.details === 'string' ? JSON.parse(r.details) : r.details) as Record<string, unknown>,
      createdAt: r.created_at.toISOString(),
    })),
    total,
  };
}
