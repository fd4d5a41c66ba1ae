import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type BatchResults, batchingOver, fulfilled } from '../../src/db/batching.ts';
import { createPurchaseBatches } from '../../src/vtu/batches.ts';

// The purchase path's batches (src/vtu/batches.ts): a stage joins the batch of the function it
// names, that function runs the items that arrive together as one batch over the deps it was
// defined with, and each caller gets its own item's result.

type Deps = { batchesRun: string[][]; prefix: string };

async function greetAll(deps: Deps, names: string[]): Promise<BatchResults<string>> {
  deps.batchesRun.push(names);
  return names.map((name) => fulfilled(`${deps.prefix} ${name}`));
}

async function countAll(deps: Deps, words: string[]): Promise<BatchResults<number>> {
  deps.batchesRun.push(words);
  return words.map((word) => fulfilled(word.length));
}

describe('the purchase batches', () => {
  it('runs the items joined in one turn as one batch of the function named, each caller its own result', async () => {
    const batches = createPurchaseBatches(batchingOver(undefined));
    const greeted: Deps = { batchesRun: [], prefix: 'hello' };
    const counted: Deps = { batchesRun: [], prefix: '' };
    batches.define(greetAll, greeted, { batchMax: 10 });
    batches.define(countAll, counted, { batchMax: 10 });
    const [ada, ngozi, length] = await Promise.all([
      batches.join(greetAll, 'Ada'),
      batches.join(greetAll, 'Ngozi'),
      batches.join(countAll, 'airtime'),
    ]);
    assert.equal(ada, 'hello Ada');
    assert.equal(ngozi, 'hello Ngozi');
    assert.equal(length, 7);
    assert.deepEqual(greeted.batchesRun, [['Ada', 'Ngozi']]);
    assert.deepEqual(counted.batchesRun, [['airtime']]);
    await batches.drained();
  });

  it('refuses a function given two batchers, and a join of a function given none', async () => {
    const batches = createPurchaseBatches(batchingOver(undefined));
    const deps: Deps = { batchesRun: [], prefix: 'hi' };
    batches.define(greetAll, deps, { batchMax: 10 });
    assert.throws(() => batches.define(greetAll, deps, { batchMax: 10 }), /greetAll has one batcher/);
    assert.throws(() => batches.join(countAll, 'data'), /countAll has no batcher/);
    assert.deepEqual(deps.batchesRun, []);
  });
});
