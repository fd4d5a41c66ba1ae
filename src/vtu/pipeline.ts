import type { Batching } from '../db/batching.ts';
import type { WithCommit } from '../db/unit-of-work.ts';
import { newId } from '../ids.ts';
import type { VtuService } from '../providers/vtu/vtu-provider.ts';
import {
  claimPurchases,
  type DispatchDeps,
  type DispatchResult,
  dispatchPurchase,
  type RequeryCounts,
  type RequeryOptions,
  requeryByReference,
  requeryDuePurchases,
  type SendStages,
} from './dispatch.ts';
import { purchasesWaitingFor } from './float.ts';
import {
  type AcceptRequest,
  acceptPurchases,
  type PurchaseOrder,
  recoverAcceptances,
  type VtuTransactionView,
} from './purchases.ts';
import { newPurchaseReference } from './references.ts';
import { createInlineSends } from './sends.ts';
import { type PurchaseAnswer, settlePurchases } from './settlement.ts';

// The purchase pipeline, the one entry point of every purchase from outside vtu/: accept (the
// debit, the purchase recorded and its dispatch enqueued, in one transaction), dispatch (claim,
// send to the provider, settle on its answer) and requery (settle what is still unknown). Its
// machinery is private to it: the group commit (src/db/batching.ts: the purchases accepted,
// claimed and settled while the previous batch of each ran share one transaction), and the bound
// on purchases sent at once (sends.ts). The functions of each stage (purchases.ts, dispatch.ts,
// settlement.ts) take their dependencies as arguments and the stages they hand work on to, so the
// deps the pipeline is built from never contain the pipeline.
//
//   request → accept ─(commit)→ dispatch → claim → provider → settle
//                                   ↑ durable job, requery (every minute) ──┘

export type PurchasePipeline = {
  /**
   * Accepts a routed, priced and checked purchase, then sends it from this process right after
   * the commit. `withCommit` (the Idempotency-Key's answer) commits in the acceptance's transaction.
   */
  accept(userId: string, order: PurchaseOrder, withCommit?: WithCommit): Promise<VtuTransactionView>;
  /** Sends a purchase not sent yet and settles it on the answer (the durable job's path). */
  dispatch(id: string): Promise<DispatchResult>;
  /** Sends the purchases that waited for the float top-up with this reference to settle. */
  dispatchWaitingFor(transferReference: string): Promise<void>;
  /** Requeries the purchases whose outcome is still unknown (a job every minute; adminReconcile). */
  requeryDue(options: RequeryOptions): Promise<RequeryCounts>;
  /** Requeries one sent purchase of the service still processing, by reference (a provider's callback); null if none. */
  requeryReference(
    service: VtuService,
    reference: string,
    options: RequeryOptions,
  ): Promise<RequeryCounts | null>;
  /** Resolves when this process's send of the purchase (if any) has ended. */
  sendEnded(id: string): Promise<void>;
  /** Purchases checked and waiting for a place to be sent, not debited yet. */
  sendsWaiting(): number;
  /** Resolves when every send under way, then every batch, has ended (graceful shutdown). */
  drained(): Promise<void>;
};

/**
 * Purchases per batch at most: a transaction of a hundred purchases holds the in-flight account's
 * row lock for a few milliseconds, and a crowd larger than that waits for the next batch anyway.
 */
export const purchaseBatchMax = 100;

/** One per context; the deps are read when each batch runs (the job queue exists only later). */
export function createPurchasePipeline(
  deps: () => DispatchDeps,
  batching: Batching,
  sendsMax: number,
): PurchasePipeline {
  const options = { batchMax: purchaseBatchMax };
  // A batch of acceptances that threw may have committed (its COMMIT's answer lost): running its
  // purchases again blindly would debit and send them twice, so recovery asks what was recorded.
  const accepts = batching.batcher((requests: AcceptRequest[]) => acceptPurchases(deps(), requests), {
    ...options,
    recover: (requests) => recoverAcceptances(deps(), requests),
  });
  const stages: SendStages = {
    // Claims touch no shared row: a claim waiting on one purchase's row lock (a settlement of it in
    // progress) must not hold up every other send of the process.
    claim: batching.batcher((ids: string[]) => claimPurchases(deps(), ids), { ...options, concurrency: 4 }),
    settle: batching.batcher((answers: PurchaseAnswer[]) => settlePurchases(deps(), answers), options),
  };
  const sends = createInlineSends(sendsMax);
  const dispatch = (id: string) => dispatchPurchase(deps(), stages, id);

  return {
    async accept(userId, order, withCommit) {
      // Under load a purchase waits here, not yet debited, for a place to be sent at once.
      await sends.take();
      let sending = false;
      try {
        // The purchase's id and reference are made once, before it joins a batch: should the
        // batch run again, it meets its own unique references instead of becoming a second purchase.
        const accepted = await accepts.add({
          userId,
          order,
          id: newId(),
          reference: newPurchaseReference(deps().clock.now()),
          withCommit,
        });
        // Resolved only once the batch's transaction, and what was to commit with it, committed.
        withCommit?.committed();
        sends.track(
          accepted.id,
          dispatch(accepted.id).then(
            () => undefined,
            (error: unknown) =>
              deps().logger?.error(
                { err: error, id: accepted.id },
                'purchase dispatch after acceptance failed; its job retries',
              ),
          ),
        );
        sending = true;
        return accepted;
      } finally {
        if (!sending) sends.release();
      }
    },
    dispatch,
    async dispatchWaitingFor(transferReference) {
      // Together, so that one claim decides the float for all of them.
      const waiting = await purchasesWaitingFor(deps(), transferReference);
      await Promise.all(waiting.map(dispatch));
    },
    requeryDue: (requeryOptions) => requeryDuePurchases(deps(), stages, requeryOptions),
    requeryReference: (service, reference, requeryOptions) =>
      requeryByReference(deps(), stages, service, reference, requeryOptions),
    sendEnded: (id) => sends.ended(id),
    sendsWaiting: () => sends.waiting(),
    async drained() {
      await sends.allEnded();
      await accepts.drained();
      await stages.claim.drained();
      await stages.settle.drained();
    },
  };
}
