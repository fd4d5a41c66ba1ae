import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { inUnitOfWork, type WithCommit } from '../db/unit-of-work.ts';
import { AppError, notFound } from '../errors.ts';
import { publishEvents } from '../events/domain-events.ts';
import { systemAccounts, userAccount } from '../ledger/accounts.ts';
import { InsufficientBalanceError, postBatch } from '../ledger/postings.ts';
import { koboToNaira } from '../money.ts';
import { adjustmentPostings } from './postings.ts';
import type { AdjustmentView, RejectAdjustmentRequest } from './schemas.ts';
import { type AdjustmentDeps, type AdjustmentRow, viewsOf } from './service.ts';

// Deciding a proposed adjustment, once. The adjustment's row is locked first, so of operators
// deciding it at once (two tabs, two processes) the first decides and the others find it decided
// (409 CONFLICT); the approval's posting carries a reference made from the adjustment's id, so even a
// second writer could not post it twice.
//
// Four eyes: the approver is never the proposer (403 FORBIDDEN, details.reason "four_eyes"; the
// database's CHECK holds it too), nor the person whose wallet it corrects. A rejection moves nothing,
// so the proposer may reject (withdraw) their own proposal.
//
// A debit never takes the wallet below zero: the posting refuses it, the transaction rolls back and
// the adjustment stays proposed (decision 0041), to be approved once the wallet covers it, or rejected.
//
// An adjustment is an operator's correction, not the person moving money out: it is made on a
// frozen account too, and is none of the debits a daily limit counts (API.md section 17.2).

async function lockedProposal(trx: Transaction<DB>, id: string): Promise<AdjustmentRow> {
  const row = await trx
    .selectFrom('adjustments')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst();
  if (row === undefined) throw notFound('adjustment');
  if (row.status !== 'proposed') {
    throw new AppError('CONFLICT', `this adjustment is already ${row.status}`, {
      details: { status: row.status },
    });
  }
  return row;
}

const fourEyes = (message: string) =>
  new AppError('FORBIDDEN', message, { details: { reason: 'four_eyes' } });

/** Approves a proposal of another operator: one posting to or from the person's wallet, once. */
export async function approveAdjustment(
  deps: AdjustmentDeps,
  withCommit: WithCommit | undefined,
  adminId: string,
  id: string,
): Promise<AdjustmentView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const row = await lockedProposal(trx, id);
    if (row.proposed_by === adminId) {
      throw fourEyes('another operator must approve an adjustment you proposed');
    }
    if (row.user_id === adminId)
      throw fourEyes('another operator must approve an adjustment of your own wallet');

    // A credit moves money from the adjustments account to the wallet (the part over the person's
    // maximum balance to their held balance), a debit back.
    const toWallet = row.direction === 'credit' ? row.amount : -row.amount;
    const credits =
      row.direction === 'credit'
        ? await deps.limits.splitCredits(trx, [{ userId: row.user_id, amountKobo: row.amount }])
        : [];
    const [posted] = await postBatch(
      trx,
      [
        {
          reference: adjustmentPostings.posting(row.id),
          description: `Adjustment: ${row.reason}`,
          entries: [
            { account: systemAccounts.adjustments, amount: -toWallet },
            ...(credits.length === 0
              ? [{ account: userAccount('wallet', row.user_id), amount: toWallet }]
              : credits.flatMap(deps.limits.creditEntries)),
          ],
          metadata: { adjustmentId: row.id },
        },
      ],
      now,
      // Derived from a row held locked while proposed, which has posted nothing.
      { referencesUnposted: true },
    );
    if (posted!.status === 'rejected') {
      if (posted!.reason instanceof InsufficientBalanceError) {
        throw new AppError('INSUFFICIENT_FUNDS', "the person's wallet does not cover this debit", {
          details: { required: koboToNaira(row.amount) },
        });
      }
      throw posted!.reason;
    }
    await deps.limits.announceHeld(trx, credits, now);

    const approved = await trx
      .updateTable('adjustments')
      .set({ status: 'approved', decided_by: adminId, decided_at: now })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    // The person is told (inbox, email, push) through the notifications module's subscription.
    await publishEvents(deps.jobs, trx, [
      {
        type: 'adjustments.approved',
        userId: row.user_id,
        adjustmentId: row.id,
        direction: row.direction,
        amountKobo: row.amount.toString(),
        reason: row.reason,
        occurredAt: now.toISOString(),
      },
    ]);
    const [view] = await viewsOf({ db: trx, phonesOf: deps.phonesOf }, [approved]);
    return view!;
  });
}

/** Rejects a proposal: nothing moves. Any operator may, the proposer included (a withdrawal). */
export async function rejectAdjustment(
  deps: AdjustmentDeps,
  withCommit: WithCommit | undefined,
  adminId: string,
  request: RejectAdjustmentRequest,
): Promise<AdjustmentView> {
  const now = deps.clock.now();
  return inUnitOfWork(deps.db, withCommit, async (trx) => {
    const row = await lockedProposal(trx, request.id);
    const rejected = await trx
      .updateTable('adjustments')
      .set({ status: 'rejected', decided_by: adminId, decided_at: now, reject_reason: request.reason })
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
    const [view] = await viewsOf({ db: trx, phonesOf: deps.phonesOf }, [rejected]);
    return view!;
  });
}
