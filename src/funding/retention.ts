import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';

/**
 * Deletes up to batchMax payment provider messages (the webhook inbox) processed and received before
 * `before`, oldest first, in one statement: retention.purge's batch (decision 0054). One not processed
 * yet is never deleted, whatever its age. The money they moved stays in topup_intents and the ledger;
 * a redelivery after its message is gone is stored again and finds its top-up already credited.
 */
export async function purgeProcessedPaymentEvents(
  db: Kysely<DB>,
  before: Date,
  batchMax: number,
): Promise<number> {
  const result = await db
    .deleteFrom('payment_events')
    .where(
      'id',
      'in',
      db
        .selectFrom('payment_events')
        .select('id')
        .where('processed_at', 'is not', null)
        .where('received_at', '<', before)
        .orderBy('received_at')
        .limit(batchMax),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
