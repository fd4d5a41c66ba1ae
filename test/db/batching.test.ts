import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  type BatcherOptions,
  type BatchResults,
  batchingOver,
  fulfilled,
  rejected,
} from '../../src/db/batching.ts';

/** A batcher as the database's Batching makes it, over the given turn (none: statements side by side). */
const createBatcher = <I, O>(
  run: (items: I[]) => Promise<BatchResults<O>>,
  options: BatcherOptions<I, O>,
  turn?: () => Promise<void>,
) => batchingOver(turn).batcher(run, options);

// The group commit's batcher: what arrives together runs together, each caller gets its own answer,
// and one bad item or one stuck batch costs only what it must.

/** A batch runner that records its batches and answers each item doubled (or rejects a negative one). */
function doubling(options: { holdFirst?: Promise<void>; throwWhen?: (items: number[]) => boolean } = {}) {
  const batches: number[][] = [];
  const run = async (items: number[]) => {
    batches.push(items);
    if (batches.length === 1 && options.holdFirst !== undefined) await options.holdFirst;
    if (options.throwWhen?.(items) === true) throw new Error(`batch ${items.join(',')} failed`);
    return items.map((n) => (n < 0 ? rejected(new Error(`negative ${n}`)) : fulfilled(n * 2)));
  };
  return { run, batches };
}

describe('createBatcher', () => {
  it('runs the calls made in one turn as one batch, answering each caller its own result', async () => {
    const { run, batches } = doubling();
    const batcher = createBatcher(run, { batchMax: 10 });
    assert.deepEqual(await Promise.all([1, 2, 3].map((n) => batcher.add(n))), [2, 4, 6]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('gathers what arrives while a batch runs into the next one, up to batchMax', async () => {
    let release!: () => void;
    const { run, batches } = doubling({ holdFirst: new Promise((r) => (release = r)) });
    const batcher = createBatcher(run, { batchMax: 2 });
    const first = batcher.add(1);
    await new Promise((r) => setImmediate(r));
    const later = [2, 3, 4].map((n) => batcher.add(n));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(batches, [[1]], 'nothing else starts while the first batch runs');
    release();
    assert.deepEqual(await Promise.all([first, ...later]), [2, 4, 6, 8]);
    assert.deepEqual(batches, [[1], [2, 3], [4]]);
  });

  it('rejects only the item its batch refused', async () => {
    const batcher = createBatcher(doubling().run, { batchMax: 10 });
    const answers = await Promise.allSettled([1, -2, 3].map((n) => batcher.add(n)));
    assert.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? a.value : (a.reason as Error).message)),
      [2, 'negative -2', 6],
    );
  });

  it('runs each item of a batch that threw alone, so the item that breaks it fails only its caller', async () => {
    const { run, batches } = doubling({ throwWhen: (items) => items.includes(13) });
    const batcher = createBatcher(run, { batchMax: 10 });
    const answers = await Promise.allSettled([1, 13, 3].map((n) => batcher.add(n)));
    assert.deepEqual(
      answers.map((a) => a.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
    assert.deepEqual(batches, [[1, 13, 3], [1], [13], [3]]);
  });

  it('with retryAlone false, a batch that threw rejects every item once', async () => {
    const { run, batches } = doubling({ throwWhen: () => true });
    const batcher = createBatcher(run, { batchMax: 10, retryAlone: false });
    const answers = await Promise.allSettled([1, 2].map((n) => batcher.add(n)));
    assert.ok(answers.every((a) => a.status === 'rejected'));
    assert.equal(batches.length, 1);
  });

  it('a batch that failed because the database is out of reach rejects every item at once, none run alone', async () => {
    const batches: number[][] = [];
    const run = async (items: number[]): Promise<BatchResults<number>> => {
      batches.push(items);
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    };
    const batcher = createBatcher(run, { batchMax: 10 });
    const answers = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    assert.deepEqual(
      answers.map((a) => (a.status === 'rejected' ? (a.reason as { code?: string }).code : a.value)),
      ['ECONNREFUSED', 'ECONNREFUSED', 'ECONNREFUSED'],
    );
    // Alone, each would have waited out the outage in turn, and every later batch behind them.
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('with recover, a batch that threw is answered by it instead of being run again', async () => {
    const { run, batches } = doubling({ throwWhen: () => true });
    const recovered: Array<{ items: number[]; error: unknown }> = [];
    const batcher = createBatcher(run, {
      batchMax: 10,
      recover: async (items: number[], error: unknown) => {
        recovered.push({ items, error });
        return items.map((n) => (n === 2 ? rejected(new Error('not done')) : fulfilled(-n)));
      },
    });
    const answers = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    assert.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? a.value : 'rejected')),
      [-1, 'rejected', -3],
    );
    assert.deepEqual(batches, [[1, 2, 3]], 'never run again');
    assert.deepEqual(
      recovered.map((r) => r.items),
      [[1, 2, 3]],
    );
    assert.ok(recovered[0]?.error instanceof Error);

    // A recovery that throws fails every item of the batch with its error.
    const failing = createBatcher(run, {
      batchMax: 10,
      recover: async () => {
        throw new Error('cannot tell');
      },
    });
    const unknown = await Promise.allSettled([4, 5].map((n) => failing.add(n)));
    assert.deepEqual(
      unknown.map((a) => (a.status === 'rejected' ? (a.reason as Error).message : a.value)),
      ['cannot tell', 'cannot tell'],
    );
  });

  it('with concurrency, a batch that waits does not hold up the next', async () => {
    let release!: () => void;
    const { run, batches } = doubling({ holdFirst: new Promise((r) => (release = r)) });
    const batcher = createBatcher(run, { batchMax: 10, concurrency: 2 });
    const stuck = batcher.add(1);
    await new Promise((r) => setImmediate(r));
    assert.equal(await batcher.add(2), 4, 'answered while the first batch still waits');
    release();
    assert.equal(await stuck, 2);
    assert.deepEqual(batches, [[1], [2]]);
  });

  it('with a turn, the batch is cut only once the turn comes, taking what arrived meanwhile', async () => {
    let giveTurn!: () => void;
    const turns: Array<Promise<void>> = [new Promise((r) => (giveTurn = r))];
    const { run, batches } = doubling();
    // Even with concurrency asked for: one database turn at a time means one batch at a time.
    const batcher = createBatcher(
      run,
      { batchMax: 10, concurrency: 4 },
      () => turns.shift() ?? Promise.resolve(),
    );
    const first = batcher.add(1);
    await new Promise((r) => setImmediate(r));
    const meanwhile = [2, 3].map((n) => batcher.add(n));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(batches, [], 'nothing runs before the turn');
    giveTurn();
    assert.deepEqual(await Promise.all([first, ...meanwhile]), [2, 4, 6]);
    assert.deepEqual(batches, [[1, 2, 3]]);
  });

  it('with a turn that fails, the batch still runs and answers for itself', async () => {
    const batcher = createBatcher(doubling().run, { batchMax: 10 }, () =>
      Promise.reject(new Error('database closed')),
    );
    assert.equal(await batcher.add(5), 10);
  });

  it('drained waits for what is queued and running', async () => {
    let release!: () => void;
    const { run } = doubling({ holdFirst: new Promise((r) => (release = r)) });
    const batcher = createBatcher(run, { batchMax: 10 });
    let answered = 0;
    for (const n of [1, 2]) void batcher.add(n).then(() => answered++);
    let drained = false;
    const draining = batcher.drained().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false);
    release();
    await draining;
    assert.equal(answered, 2);
  });
});
