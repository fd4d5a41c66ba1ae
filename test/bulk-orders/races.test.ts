import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkLedger } from '../../src/ledger/check.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, ok, type World } from '../helpers/world.ts';
import { advanceClock, type Buyer, buyer, mtn, recordedPurchases } from '../vtu/purchase-support.ts';
import { airtimeLines, fetchOrder, koboOf, linesSent, order, ordersOnRecord, walletKobo } from './support.ts';

// Bulk orders placed at once. PGlite runs one transaction at a time, so there these prove the rules
// only in sequence; on PostgreSQL the orders overlap for real, split across two services on one
// database (two processes' pools): the wallet covers two orders of one person that each fit alone
// but not together only if the group's debits are decided on the wallet read under its lock.

async function services(): Promise<World[]> {
  const world = await createWorld();
  if (!onPostgres()) return [world];
  return [world, await createWorld({ sameDatabaseAs: world })];
}

describe(`bulk order races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let worlds: World[];
  let world: World;
  before(async () => {
    worlds = await services();
    world = worlds[0]!;
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  it('two orders of one person that each fit alone but not together: one accepted whole, the other refused whole', async () => {
    const lines = airtimeLines(60).map((line) => ({ ...line, phone: mtn('0') }));
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    // Room for one order and a half.
    const user = await buyer(world, Math.floor(total * 1.5));
    const answers = await Promise.all(
      [0, 1].map((i) => order(worlds[i % worlds.length]!, user, { lines, total })),
    );
    const accepted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    assert.equal(accepted.length, 1, JSON.stringify(answers.map((a) => a.status)));
    assert.equal(refused.length, 1);
    assert.equal(failure(refused[0]!).code, 'INSUFFICIENT_FUNDS');
    const placed = ok(accepted[0]!);
    assert.equal(placed.lines.length, 60);
    assert.equal(await recordedPurchases(world, user.userId), 60, 'the refused order left no line behind');
    assert.equal(await ordersOnRecord(world, user.userId), 1);
    assert.equal(await walletKobo(world, user.userId), BigInt(Math.floor(total * 1.5) * 100 - total * 100));
    for (const w of worlds) await linesSent(w, placed);
    assert.ok((await checkLedger(world.ctx.db)).ok);
  });

  // One service: each test world runs its own sandbox providers, which know only the purchases sent
  // to them, so a requery from the other service would find nothing. On PostgreSQL the service's
  // pool runs the orders' transactions side by side all the same.
  it('100-line orders of several people at once, mixed outcomes: each charged its successes and pending, refunded its failures', async () => {
    const people = 4;
    const funded = 20_000;
    const buyers: Buyer[] = [];
    for (let i = 0; i < people; i += 1) buyers.push(await buyer(world, funded));
    const linesOf = buyers.map(() => airtimeLines(100));
    // One of them also races a second, smaller order of its own; both fit.
    const extra = airtimeLines(20).map((line) => ({ ...line, phone: mtn('0') }));
    const extraTotal = extra.reduce((sum, line) => sum + line.amount, 0);
    const answers = await Promise.all([
      ...buyers.map((user, i) =>
        order(world, user, {
          lines: linesOf[i]!,
          total: linesOf[i]!.reduce((sum, line) => sum + line.amount, 0),
        }),
      ),
      order(world, buyers[0]!, { lines: extra, total: extraTotal }),
    ]);
    const placed = answers.map((answer) => ok(answer));
    await Promise.all(placed.map((p) => linesSent(world, p)));

    for (const [i, user] of buyers.entries()) {
      const lines = linesOf[i]!;
      const spentExtra = i === 0 ? BigInt(extraTotal * 100) : 0n;
      assert.equal(
        await walletKobo(world, user.userId),
        BigInt(funded * 100) - koboOf(lines, '023456789') - spentExtra,
        `buyer ${i}: charged the successes and the pending, refunded the failures`,
      );
    }
    // 120 lines are processing and a requery run takes 100 at most: the next minute's run the rest.
    await advanceClock(world, 61);
    await advanceClock(world, 61);
    for (const [i, user] of buyers.entries()) {
      const done = await fetchOrder(world, user, placed[i]!.id);
      assert.deepEqual(done.counts, { processing: 0, success: 80, failed: 20 }, `buyer ${i}`);
      assert.equal(BigInt(Math.round(done.refunded * 100)), koboOf(linesOf[i]!, '13'));
      const spentExtra = i === 0 ? BigInt(extraTotal * 100) : 0n;
      assert.equal(
        await walletKobo(world, user.userId),
        BigInt(funded * 100) - koboOf(linesOf[i]!, '02456789') - spentExtra,
      );
    }
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });
});
