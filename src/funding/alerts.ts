import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { newId } from '../ids.ts';

// Operations alerts: things a person must look at (a charge that paid another amount than its
// intent, and later failed provider funding, stuck purchases, ledger imbalances). Raised inside the
// transaction that found the problem, so an alert exists exactly when its cause committed. Alert
// emails will read from here when they arrive.

export type AlertKind = 'topup_amount_mismatch' | 'topup_currency_mismatch';

export async function raiseAlert(
  db: Kysely<DB> | Transaction<DB>,
  alert: { kind: AlertKind; message: string; details: Record<string, string | number | boolean | null> },
  now: Date,
): Promise<void> {
  await db
    .insertInto('ops_alerts')
    .values({
      id: newId(),
      kind: alert.kind,
      message: alert.message,
      details: JSON.stringify(alert.details),
      created_at: now,
    })
    .execute();
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
  const rows = await db
    .selectFrom('ops_alerts')
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const counted = await db
    .selectFrom('ops_alerts')
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return {
    items: rows.map((r) => ({
      id: r.id,
      kind: r.kind,
      message: r.message,
      details: (typeof r.details === 'string' ? JSON.parse(r.details) : r.details) as Record<string, unknown>,
      createdAt: r.created_at.toISOString(),
    })),
    total: Number(counted.n),
  };
}
