import { sql } from 'kysely';
import type { FundingDeps } from './service.ts';

// What operators watch of the payment provider's webhooks (/metrics, at each scrape): the stored
// events not processed yet and when the oldest arrived. Normally both are zero within milliseconds
// (the storing process drains its inbox after each commit); a backlog that grows or ages means the
// processing fails or no process drains it (the sweep job runs every minute).

export type PaymentInbox = {
  /** Stored events not processed yet. */
  backlog: number;
  /** When the oldest of them was received; null when there is none. */
  oldestReceivedAt: Date | null;
};

/** One statement over the partial index of unprocessed events (payment_events_unprocessed_idx). */
export async function paymentInbox(deps: Pick<FundingDeps, 'db'>): Promise<PaymentInbox> {
  const { rows } = await sql<{ backlog: string; oldest: Date | string | null }>`
    select count(*) as backlog, min(received_at) as oldest
    from payment_events where processed_at is null`.execute(deps.db);
  const row = rows[0];
  const oldest = row?.oldest ?? null;
  return {
    backlog: Number(row?.backlog ?? 0),
    oldestReceivedAt: oldest === null ? null : new Date(oldest),
  };
}
