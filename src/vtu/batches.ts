import assert from 'node:assert/strict';
import type { Batcher, BatcherOptions, Batching, BatchResults } from '../db/batching.ts';

// The purchase path's group commits (src/db/batching.ts): the acceptances, the claims and the
// settlements that arrive while a batch of theirs runs share the next one. Each batch is run by one
// named function of its stage that takes the whole batch (acceptPurchases in accept.ts,
// claimPurchases in dispatch.ts, settlePurchases in settlement.ts), and a stage joins a batch by
// naming that function:
//
//   const claim = await deps.batches.join(claimPurchases, id);
//
// so that go-to-definition from the stage lands on the function that runs, not on a Batcher type.
// The module (module.ts) defines each batch once, over the deps its function runs with, and with
// the options declared beside that function.

/** A stage's function that runs a whole batch: one result per item, in order. */
export type BatchRun<D, I, O> = (deps: D, items: I[]) => Promise<BatchResults<O>>;

export type PurchaseBatches = {
  /** Runs the item in the next batch of `run` (defined once by the module); settles with its own result. */
  join<I, O>(run: BatchRun<never, I, O>, item: I): Promise<O>;
  /** Resolves when no batch is waiting or running, of any stage (graceful shutdown). */
  drained(): Promise<void>;
};

export type PurchaseBatchesBuilder = PurchaseBatches & {
  /** Gives `run` its batcher, over the deps it runs with: once per function, before any join. */
  define<D, I, O>(run: BatchRun<D, I, O>, deps: D, options: BatcherOptions<I, O>): void;
};

/** One per module: every batch of its stages is run by the batcher defined for its function here. */
export function createPurchaseBatches(batching: Batching): PurchaseBatchesBuilder {
  // Keyed by the function itself: the types of `define` and `join` agree on its items and results.
  const batchers = new Map<BatchRun<never, never, unknown>, Batcher<never, unknown>>();
  return {
    define(run, deps, options) {
      assert.ok(!batchers.has(run), `${run.name} has one batcher`);
      batchers.set(
        run,
        batching.batcher((items) => run(deps, items), options),
      );
    },
    join<I, O>(run: BatchRun<never, I, O>, item: I): Promise<O> {
      const batcher = batchers.get(run) as Batcher<I, O> | undefined;
      // Not assert.ok: its message would be built on every purchase's every stage.
      if (batcher === undefined) throw new Error(`${run.name} has no batcher: the module defines it`);
      return batcher.add(item);
    },
    async drained() {
      for (const batcher of batchers.values()) await batcher.drained();
    },
  };
}
