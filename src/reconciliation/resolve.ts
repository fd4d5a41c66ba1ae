import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import type { FundingApi } from '../funding/module.ts';
import { type PaymentProvider, PaymentProviderError } from '../providers/payments/payment-provider.ts';
import type { VtuProvider, VtuService } from '../providers/vtu/vtu-provider.ts';
import type { VtuApi } from '../vtu/module.ts';
import type { StoredRecord } from './records.ts';
import { actionsFor, itemView } from './runs.ts';
import type { ReconciliationItemView, ResolutionAction, Source } from './schemas.ts';

// An operator's resolution of one item (API.md 17.5), once: the item's row is locked and its
// resolution written in the same commit as what the action did. Nothing is ever refunded or
// credited by a run itself; `credit` goes through funding's once-only path of a verified top-up or
// bank deposit, so 20 operators pressing it at once, a late webhook or verifyTopup credit once in
// all; `requery` asks the VTU provider again, and a purchase still processing is settled by the
// answer through the purchases' own requery (a refund only on a definite failure, as always).

export type ResolveDeps = {
  db: Kysely<DB>;
  now: () => Date;
  payments: Pick<PaymentProvider, 'verifyTransaction'>;
  creditVerifiedPayment: FundingApi['creditVerifiedPayment'];
  providerOf(source: Exclude<Source, 'payments'>): Pick<VtuProvider, 'requery'>;
  purchasesByReference: VtuApi['purchasesByReference'];
  requeryReference: VtuApi['requeryReference'];
};

const conflict = (message: string, reason: string) =>
  new AppError('CONFLICT', message, { details: { reason } });

async function findItem(db: Kysely<DB>, id: string) {
  const item = await db
    .selectFrom('reconciliation_items as i')
    .innerJoin('reconciliation_runs as r', 'r.id', 'i.run_id')
    .selectAll('i')
    .select('r.source')
    .where('i.id', '=', id)
    .executeTakeFirst();
  if (item === undefined) throw notFound('reconciliation item');
  if (item.resolution_action !== null) throw conflict('this item is already resolved', 'already_resolved');
  return item;
}

/** Writes the resolution under the item's lock; a second one meanwhile is 409 CONFLICT. */
async function recordResolution(
  trx: Transaction<DB>,
  resolution: { id: string; action: ResolutionAction; reason: string; outcome: string; by: string; at: Date },
  source: Source,
): Promise<ReconciliationItemView> {
  const locked = await trx
    .selectFrom('reconciliation_items')
    .select('resolution_action')
    .where('id', '=', resolution.id)
    .forUpdate()
    .executeTakeFirstOrThrow();
  if (locked.resolution_action !== null) throw conflict('this item is already resolved', 'already_resolved');
  const row = await trx
    .updateTable('reconciliation_items')
    .set({
      resolution_action: resolution.action,
      resolution_reason: resolution.reason,
      resolution_outcome: resolution.outcome,
      resolved_by: resolution.by,
      resolved_at: resolution.at,
    })
    .where('id', '=', resolution.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return itemView(row, source);
}

const upstream = (what: string) =>
  new AppError('UPSTREAM_UNAVAILABLE', `${what} could not be reached; try again`);

export async function resolveItem(
  deps: ResolveDeps,
  operatorId: string,
  input: { id: string; action: ResolutionAction; reason: string },
): Promise<ReconciliationItemView> {
  const item = await findItem(deps.db, input.id);
  const resolution = { id: item.id, action: input.action, reason: input.reason, by: operatorId };
  const theirs = item.theirs as StoredRecord | null;
  const ours = item.ours as StoredRecord | null;

  if (input.action === 'ignore') {
    return deps.db
      .transaction()
      .execute((trx) =>
        recordResolution(trx, { ...resolution, outcome: 'ignored', at: deps.now() }, item.source),
      );
  }

  if (input.action === 'credit') {
    if (!actionsFor(item.source, item).includes('credit')) {
      throw conflict(
        'only a payment the provider took and we never credited can be credited',
        'not_creditable',
      );
    }
    let verified: Awaited<ReturnType<ResolveDeps['payments']['verifyTransaction']>>;
    try {
      // The provider's own word now, not the run's copy of it.
      verified = await deps.payments.verifyTransaction(item.reference);
    } catch (error) {
      if (error instanceof PaymentProviderError) throw upstream('the payment provider');
      throw error;
    }
    if (verified === null)
      throw conflict('the payment provider no longer knows this reference', 'unknown_to_provider');
    return deps.creditVerifiedPayment(verified, async (trx, outcome) => {
      if (outcome === 'not_paid')
        throw conflict('the payment provider does not report this payment as paid', 'not_paid');
      if (outcome === 'unknown_payer' || outcome === 'unknown_reference') {
        throw conflict(
          'the payer is not a user here (nor the account one of ours): credit by an adjustment',
          'unknown_payer',
        );
      }
      return recordResolution(trx, { ...resolution, outcome, at: deps.now() }, item.source);
    });
  }

  // requery: a purchase's provider asked again.
  if (item.source === 'payments')
    throw conflict('a payment is not requeried: credit or ignore it', 'not_a_purchase');
  const purchase = (await deps.purchasesByReference([item.reference])).get(item.reference);
  const service = (purchase?.service ?? theirs?.kind ?? ours?.kind) as VtuService | undefined;
  if (service === undefined) throw conflict('the service of this item is not known', 'unknown_service');
  let provider: string;
  if (purchase?.status === 'processing' && purchase.sentAt !== null) {
    // Settled through the purchases' own requery, which asks the provider: what the answer says is
    // done once, there, and not asked a second time here.
    const counts = await deps.requeryReference(service, item.reference);
    provider = counts?.succeeded ? 'success' : counts?.failed ? 'failed' : 'pending';
  } else {
    const answer = await deps.providerOf(item.source).requery({
      reference: item.reference,
      service,
      providerReference: purchase?.providerReference ?? theirs?.providerReference ?? null,
      ...(purchase?.sentAt == null ? {} : { sentAt: purchase.sentAt }),
    });
    provider = `${answer.status}${'reason' in answer ? ` (${answer.reason})` : ''}`;
  }
  const after = (await deps.purchasesByReference([item.reference])).get(item.reference);
  const outcome = `provider: ${provider}; ours: ${after?.status ?? 'none'}`;
  return deps.db
    .transaction()
    .execute((trx) => recordResolution(trx, { ...resolution, outcome, at: deps.now() }, item.source));
}
