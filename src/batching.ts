// Group commit. Under load, a service that gives every request its own transaction pays a round
// trip (and on PGlite a parse and plan) per statement per request; most of its time goes there.
// A batcher gathers the calls that arrive while its previous batch runs into the next one, so that
// many requests share one transaction of multi-row statements, while at rest each call runs at
// once, after the current event-loop turn, with whatever arrived in that turn.

export type BatchResults<O> = Array<PromiseSettledResult<O>>;

export const fulfilled = <O>(value: O): PromiseFulfilledResult<O> => ({ status: 'fulfilled', value });
export const rejected = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason });

export type Batcher<I, O> = {
  /** Runs the item in the next batch; settles with its own result. */
  add(item: I): Promise<O>;
  /** Resolves when nothing is waiting or running. */
  drained(): Promise<void>;
};

export type BatcherOptions = {
  batchMax: number;
  /**
   * When a whole batch throws (it rolled back: a deadlock, one poisonous item), each of its items is
   * run again alone, so that one bad item fails only its own caller. True by default; set it false
   * where running an item twice is not safe.
   */
  retryAlone?: boolean;
};

/**
 * `run` takes the items of one batch and answers one result per item, in order. One batch runs at a
 * time: the batch after it is whatever arrived meanwhile, up to batchMax.
 */
export function createBatcher<I, O>(
  run: (items: I[]) => Promise<BatchResults<O>>,
  options: BatcherOptions,
): Batcher<I, O> {
  type Waiting = { item: I; resolve: (value: O) => void; reject: (reason: unknown) => void };
  let waiting: Waiting[] = [];
  let running: Promise<void> | null = null;

  const settle = (w: Waiting, result: PromiseSettledResult<O> | undefined): void => {
    if (result === undefined) w.reject(new Error('a batch answered fewer results than it was given'));
    else if (result.status === 'fulfilled') w.resolve(result.value);
    else w.reject(result.reason);
  };

  async function runBatch(batch: Waiting[]): Promise<void> {
    try {
      const results = await run(batch.map((w) => w.item));
      for (const [i, w] of batch.entries()) settle(w, results[i]);
    } catch (error) {
      if (batch.length === 1 || options.retryAlone === false) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) await runBatch([w]);
    }
  }

  async function flush(): Promise<void> {
    while (waiting.length > 0) {
      const batch = waiting.slice(0, options.batchMax);
      waiting = waiting.slice(batch.length);
      await runBatch(batch);
    }
    running = null;
  }

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        // Started after this turn's I/O, so the requests read in the same turn join the batch. PGlite
        // answers synchronously: without this pause every batch would be of one.
        running ??= new Promise<void>((next) => setImmediate(next)).then(flush);
      });
    },
    async drained() {
      while (running !== null) await running;
    },
  };
}
