// Group commit. Under load, a service that gives every request its own transaction pays a round
// trip (and on PGlite a parse and plan) per statement per request; most of its time goes there.
// A batcher gathers the calls that arrive while its previous batch runs into the next one, so that
// many requests share one transaction of multi-row statements, while at rest each call runs at
// once, after the current event-loop turn, with whatever arrived in that turn.

import { isDatabaseUnavailable } from './unavailable.ts';

export type BatchResults<O> = Array<PromiseSettledResult<O>>;

export const fulfilled = <O>(value: O): PromiseFulfilledResult<O> => ({ status: 'fulfilled', value });
export const rejected = (reason: unknown): PromiseRejectedResult => ({ status: 'rejected', reason });

export type Batcher<I, O> = {
  /** Runs the item in the next batch; settles with its own result. */
  add(item: I): Promise<O>;
  /** Resolves when nothing is waiting or running. */
  drained(): Promise<void>;
};

export type BatcherOptions<I = never, O = unknown> = {
  batchMax: number;
  /**
   * Batches run at once, at most (1 by default: each batch is whatever arrived while the previous
   * one ran). More where batches share no hot rows, so that one batch waiting on a row lock does
   * not hold up the others.
   */
  concurrency?: number;
  /**
   * When a whole batch throws (it rolled back: a deadlock, one poisonous item), each of its items is
   * run again alone, so that one bad item fails only its own caller. True by default; set it false
   * where running an item twice is not safe. Never when the database is out of reach: that fails
   * every item at once.
   */
  retryAlone?: boolean;
  /**
   * Replaces the retry alone where a batch that threw may still have committed: a COMMIT whose
   * answer was lost (the connection cut after PostgreSQL carried it out) throws like a rollback.
   * It finds out what the batch did and answers each item; what it throws fails every item.
   */
  recover?: ((items: I[], error: unknown) => Promise<BatchResults<O>>) | undefined;
};

/**
 * Awaited before each batch is cut (`Database.turn`): on a database that runs one statement at a
 * time, a batch cut at once would only queue behind the work ahead of it, while the calls that
 * arrive meanwhile wait for the batch after. With a turn there is one batch at a time. Only this
 * module and database.ts know of it: callers get their batchers from `Batching`.
 */
type Turn = (() => Promise<void>) | undefined;

/**
 * `run` takes the items of one batch and answers one result per item, in order. At most
 * `concurrency` batches run at a time: the batch after them is whatever arrived meanwhile, up to
 * batchMax.
 */
function createBatcher<I, O>(
  run: (items: I[]) => Promise<BatchResults<O>>,
  options: BatcherOptions<I, O>,
  turn: Turn,
): Batcher<I, O> {
  type Waiting = { item: I; resolve: (value: O) => void; reject: (reason: unknown) => void };
  let waiting: Waiting[] = [];

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
      if (options.recover !== undefined) {
        try {
          const results = await options.recover(
            batch.map((w) => w.item),
            error,
          );
          for (const [i, w] of batch.entries()) settle(w, results[i]);
        } catch (unrecovered) {
          for (const w of batch) w.reject(unrecovered);
        }
        return;
      }
      // An unreachable database fails every item alike: run alone, each would wait out the same
      // outage in turn (a connection timeout apiece) while every later batch waits behind them.
      if (batch.length === 1 || options.retryAlone === false || isDatabaseUnavailable(error)) {
        for (const w of batch) w.reject(error);
        return;
      }
      for (const w of batch) await runBatch([w]);
    }
  }

  const concurrency = turn !== undefined ? 1 : (options.concurrency ?? 1);
  const runningBatches = new Set<Promise<void>>();
  let starting = false;

  /** Starts a batch after this turn's I/O, if one is waiting and a place is free. */
  function schedule(): void {
    if (starting || waiting.length === 0 || runningBatches.size >= concurrency) return;
    starting = true;
    // After this turn's I/O, so the requests read in the same turn join the batch. PGlite answers
    // synchronously: without this pause every batch would be of one.
    setImmediate(async () => {
      // A turn that fails (the database closed) leaves the batch to fail on its own statements.
      await turn?.().catch(() => undefined);
      starting = false;
      const batch = waiting.slice(0, options.batchMax);
      waiting = waiting.slice(batch.length);
      const running = runBatch(batch).finally(() => {
        runningBatches.delete(running);
        schedule();
      });
      runningBatches.add(running);
      schedule();
    });
  }

  return {
    add(item) {
      return new Promise<O>((resolve, reject) => {
        waiting.push({ item, resolve, reject });
        schedule();
      });
    },
    async drained() {
      while (waiting.length > 0 || runningBatches.size > 0) {
        if (runningBatches.size > 0) await Promise.all(runningBatches);
        else await new Promise<void>((next) => setImmediate(next));
      }
    },
  };
}

export type LoaderOptions = Omit<BatcherOptions, 'retryAlone' | 'recover'>;

/**
 * A read of rows by key, batched: the keys asked for in one turn (or while the previous read ran)
 * are read by one query. `load` answers what it found; a key it did not find reads as undefined.
 * Nothing is cached between batches: every caller sees rows as they are when its batch runs.
 */
function createLoader<K, V>(
  load: (keys: K[]) => Promise<Map<K, V>>,
  options: LoaderOptions,
  turn: Turn,
): (key: K) => Promise<V | undefined> {
  const batcher = createBatcher<K, V | undefined>(
    async (keys) => {
      const found = await load([...new Set(keys)]);
      return keys.map((key) => fulfilled(found.get(key)));
    },
    options,
    turn,
  );
  return (key) => batcher.add(key);
}

/**
 * The one factory of batchers and loaders over a database (`Database.batching`). It owns the
 * database's turn (PGlite's), so that domain code states what a batch reads and writes and how
 * large it may be, and never how the database schedules it.
 */
export type Batching = {
  batcher<I, O>(run: (items: I[]) => Promise<BatchResults<O>>, options: BatcherOptions<I, O>): Batcher<I, O>;
  loader<K, V>(
    load: (keys: K[]) => Promise<Map<K, V>>,
    options: LoaderOptions,
  ): (key: K) => Promise<V | undefined>;
};

export function batchingOver(turn: Turn): Batching {
  return {
    batcher: (run, options) => createBatcher(run, options, turn),
    loader: (load, options) => createLoader(load, options, turn),
  };
}
