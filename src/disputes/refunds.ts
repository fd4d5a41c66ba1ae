import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvents } from '../events/domain-events.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { postBatch } from '../ledger/postings.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import { disputePostings } from './postings.ts';
import type { DisputeView, ResolveDisputeRequest } from './schemas.ts';
import { type DisputeDeps, refundableKobo, toView } from './service.ts';

// An operator resolves an open dispute: a decline, or a refund of at most what the movement still
// takes from the person (movements.ts: a lock takes nothing). The dispute's row is locked first, so
// of two operators resolving it at once the second finds it resolved (409 CONFLICT) and the money
// moves once; the refund's posting carries a reference made from the dispute's id, so even a second
// writer could not post it twice.
//
// Who pays: expense_disputes, a system account of its own that runs below zero by what disputes gave
// back. A refund is the business making good a loss the person should not carry (a token that never
// came, a purchase sent to the wrong line): the money is not in vtu_in_flight (a settled purchase
// left it) nor ours as revenue (the markup is only part of it), and taking it from the collections
// pool would hide the loss among customers' money. Kept apart, the books show what disputes cost and
// what a provider must make good when it owns the fault.

export async function resolveDispute(
  deps: DisputeDeps,
  withCommit: WithCommit | undefined,
  adminId: string,
  request: ResolveDisputeRequest,
): Promise<DisputeView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const row = await trx
      .selectFrom('disputes')
      .selectAll()
      .where('id', '=', request.id)
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined) throw notFound('dispute');
    if (row.status !== 'open') throw new AppError('CONFLICT', `this dispute is already ${row.status}`);

    let refundedKobo = 0n;
    if (request.decision === 'refund') {
      const purchase =
        row.purchase_id === null
          ? undefined
          : await deps.purchaseRecord(trx, row.user_id, { id: row.purchase_id });
      const refundable = await refundableKobo(trx, row, purchase?.stillChargedKobo);
      if (refundable === null) {
        throw new AppError(
          'CONFLICT',
          'the purchase is still processing: its outcome may refund it, so requery it first',
        );
      }
      refundedKobo = request.amount === undefined ? refundable : nairaToKobo(request.amount);
      if (refundedKobo > refundable) {
        throw new AppError(
          'ABOVE_MAXIMUM',
          `at most ${koboToNaira(refundable)} naira of this transaction is left to refund`,
          { details: { limit: koboToNaira(refundable) } },
        );
      }
      if (refundedKobo === 0n) {
        throw new AppError('CONFLICT', 'nothing of this transaction is left to refund: decline it instead');
      }
      const [posted] = await postBatch(
        trx,
        [
          {
            reference: disputePostings.refund(row.id),
            description: `Refund for the problem reported with ${row.reference}`,
            entries: [
              { account: systemAccounts.expenseDisputes, amount: -refundedKobo },
              { account: userAccount('wallet', row.user_id), amount: refundedKobo },
            ],
            // The purchase, so that the wallet history links the refund to it (purchaseId).
            metadata: {
              disputeId: row.id,
              ...(row.purchase_id === null ? {} : { purchaseId: row.purchase_id }),
            },
          },
        ],
        now,
        { referencesUnposted: true },
      );
      if (posted!.status === 'rejected') throw posted!.reason;
    }

    const resolved = await trx
      .updateTable('disputes')
      .set({
        status: request.decision === 'refund' ? 'refunded' : 'declined',
        resolution: request.reason,
        refunded: refundedKobo,
        resolved_by: adminId,
        resolved_at: now,
      })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await publishEvents(deps.jobs, trx, [
      {
        type: 'disputes.resolved',
        userId: row.user_id,
        disputeId: row.id,
        reference: row.reference,
        decision: request.decision,
        refundedKobo: refundedKobo.toString(),
        resolution: request.reason,
        occurredAt: now.toISOString(),
      },
    ]);
    return toView(resolved);
  });
}
