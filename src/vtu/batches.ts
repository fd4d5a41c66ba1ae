import type { Batcher, Batching } from '../db/batching.ts';
import { type Claim, claimPurchases, type DispatchDeps } from './dispatch.ts';
import {
  type AcceptRequest,
  acceptPurchases,
  recoverAcceptances,
  type VtuTransactionView,
} from './purchases.ts';
import { createInlineSends, type InlineSends } from './sends.ts';
import { type PurchaseAnswer, type SettleResult, settlePurchases } from './settlement.ts';

// The group commit of purchases (src/db/batching.ts): the purchases accepted, claimed for sending and
// settled while the previous batch of each was running share one transaction (one statement for the
// claims). Under load a purchase costs a share of a dozen statements instead of thirty-odd of its own;
// at rest each runs alone, after the event-loop turn it arrived in.

export type PurchaseBatches = {
  accept: Batcher<AcceptRequest, VtuTransactionView>;
  claim: Batcher<string, Claim>;
  settle: Batcher<PurchaseAnswer, SettleResult>;
  /** The purchases sent right after acceptance, bounded. */
  sends: InlineSends;
  /** Resolves when no batch is waiting or running (graceful shutdown). */
  drained(): Promise<void>;
};

/**
 * Purchases per batch at most: a transaction of a hundred purchases holds the in-flight account's
 * row lock for a few milliseconds, and a crowd larger than that waits for the next batch anyway.
 */
export const purchaseBatchMax = 100;

/** One per context; the deps are read when each batch runs (the job queue exists only later). */
export function createPurchaseBatches(
  deps: () => DispatchDeps,
  batching: Batching,
  sendsMax: number,
): PurchaseBatches {
  const options = { batchMax: purchaseBatchMax };
  // A batch of acceptances that threw may have committed (its COMMIT's answer lost): running its
  // purchases again blindly would debit and send them twice, so recovery asks what was recorded.
  const accept = batching.batcher((requests: AcceptRequest[]) => acceptPurchases(deps(), requests), {
    ...options,
    recover: (requests) => recoverAcceptances(deps(), requests),
  });
  // Claims touch no shared row: a claim waiting on one purchase's row lock (a settlement of it in
  // progress) must not hold up every other send of the process.
  const claim = batching.batcher((ids: string[]) => claimPurchases(deps(), ids), {
    ...options,
    concurrency: 4,
  });
  const settle = batching.batcher((answers: PurchaseAnswer[]) => settlePurchases(deps(), answers), options);
  return {
    accept,
    claim,
    settle,
    sends: createInlineSends(sendsMax),
    async drained() {
      await accept.drained();
      await claim.drained();
      await settle.drained();
    },
  };
}
