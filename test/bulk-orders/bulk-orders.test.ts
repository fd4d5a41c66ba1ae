import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { BulkOrderView } from '../../src/bulk-orders/schemas.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, get, ok, post, signIn, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { advanceClock, buyer, mtn, recordedPurchases } from '../vtu/purchase-support.ts';
import {
  airtimeLines,
  fetchOrder,
  koboOf,
  linesSent,
  order,
  ordersOnRecord,
  preview,
  walletKobo,
} from './support.ts';

// Bulk orders (API.md section 16) through HTTP against the sandbox providers: what a person is told
// before paying, what refuses an order whole (and that it then charges nothing), and what a mixed
// order of 100 lines costs once every line has its outcome.

describe(`bulk orders (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(async () => {
    await world.close();
  });

  it('previews each line as its purchase would be judged, without a PIN or a debit', async () => {
    const user = await buyer(world, 1_000);
    const plans = ok(
      await get<{ items: Array<{ plan_id: string; amount: number }> }>(
        world,
        'listDataPlans',
        { network: 'mtn' },
        { token: user.accessToken },
      ),
    ).items;
    const plan = plans[0]!;
    const checked = ok(
      await preview(world, user, 'data', [
        { network: 'mtn', phone: mtn('0'), amount: plan.amount, plan_id: plan.plan_id },
        { network: 'glo', phone: mtn('5'), amount: plan.amount, plan_id: plan.plan_id },
        { network: 'mtn', phone: mtn('7'), amount: plan.amount + 1, plan_id: plan.plan_id },
        { network: 'mtn', phone: mtn('8'), amount: plan.amount, plan_id: 'no-such-plan' },
      ]),
    );
    assert.deepEqual(
      checked.lines.map((line) => [line.ok, line.refusal?.code]),
      [
        [true, undefined],
        [false, 'NETWORK_MISMATCH'],
        [false, 'PRICE_CHANGED'],
        [false, 'VALIDATION_ERROR'],
      ],
    );
    assert.equal(checked.lines[2]!.refusal?.details?.amount, plan.amount, 'the price it costs now');
    assert.equal(checked.total, plan.amount, 'the total of the lines that pass');

    const airtime = ok(
      await preview(world, user, 'airtime', [
        { network: 'mtn', phone: mtn('0'), amount: 100 },
        { network: 'mtn', phone: mtn('0'), amount: 10 },
      ]),
    );
    assert.equal(airtime.lines[1]!.refusal?.code, 'BELOW_MINIMUM');
    assert.equal(airtime.total, 100);
    assert.equal(await walletKobo(world, user.userId), 100_000n, 'a preview debits nothing');
    assert.equal(await recordedPurchases(world, user.userId), 0);
  });

  it('refuses an order whole, charging nothing, for a bad line, a stale total, a short wallet or a wrong PIN', async () => {
    const user = await buyer(world, 500);
    const good = airtimeLines(3).map((line) => ({ ...line, phone: mtn('0') }));
    const total = good.reduce((sum, line) => sum + line.amount, 0);
    assert.equal(ok(await preview(world, user, 'airtime', good)).total, total);

    const mismatch = await order(world, user, {
      lines: [...good, { network: 'glo', phone: mtn('0'), amount: 50 }],
      total: total + 50,
    });
    expectError(mismatch, 422, 'NETWORK_MISMATCH');
    const listed = (failure(mismatch).details as { lines: Array<{ index: number; code: string }> }).lines;
    assert.deepEqual(
      listed.map((line) => [line.index, line.code]),
      [[3, 'NETWORK_MISMATCH']],
    );

    const stale = await order(world, user, { lines: good, total: total - 1 });
    expectError(stale, 409, 'PRICE_CHANGED');
    assert.equal((failure(stale).details as { amount: number }).amount, total);

    const many = airtimeLines(12).map((line) => ({ ...line, phone: mtn('0') }));
    const manyTotal = many.reduce((sum, line) => sum + line.amount, 0);
    assert.ok(manyTotal > 500, 'more than the wallet holds');
    expectError(await order(world, user, { lines: many, total: manyTotal }), 409, 'INSUFFICIENT_FUNDS');

    expectError(await order(world, user, { lines: good, total, pin: '9999' }), 403, 'INVALID_PIN');

    assert.equal(await walletKobo(world, user.userId), 50_000n, 'nothing was debited');
    assert.equal(await recordedPurchases(world, user.userId), 0, 'no line became a purchase');
    assert.equal(await ordersOnRecord(world, user.userId), 0, 'no order was recorded');
    assert.ok((await checkLedger(world.ctx.db)).ok);
  });

  it('a 100-line order charges the successes and the pending, refunds the failures, and completes after the requery', async () => {
    const funded = 20_000;
    const user = await buyer(world, funded);
    const lines = airtimeLines(100);
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    assert.equal(ok(await preview(world, user, 'airtime', lines)).total, total);

    const placed = ok(await order(world, user, { lines, total }));
    assert.equal(placed.status, 'processing');
    assert.equal(placed.lines.length, 100);
    assert.equal(placed.charged, total);
    assert.equal(
      new Set(placed.lines.map((line) => line.transactionId)).size,
      100,
      'each line its own purchase',
    );
    assert.deepEqual(
      placed.lines.map((line) => line.phone.at(-1)),
      lines.map((line) => line.phone.at(-1)),
      'in the order given',
    );

    await linesSent(world, placed);
    const sent = await fetchOrder(world, user, placed.id);
    // 1 fails at once; 2, 3 (pending) and 4 (timeout) stay processing; the rest succeed.
    assert.deepEqual(sent.counts, { processing: 30, success: 60, failed: 10 });
    assert.equal(sent.status, 'processing');
    assert.equal(sent.refunded * 100, Number(koboOf(lines, '1')));
    assert.equal(
      await walletKobo(world, user.userId),
      BigInt(funded * 100) - koboOf(lines, '023456789'),
      'charged the successes and the pending; the failures refunded',
    );

    await advanceClock(world, 61);
    const done = await fetchOrder(world, user, placed.id);
    // 2 and 4 are found delivered, 3 failed and refunded.
    assert.deepEqual(done.counts, { processing: 0, success: 80, failed: 20 });
    assert.equal(done.status, 'completed');
    assert.equal(done.charged, total);
    assert.equal(BigInt(Math.round(done.refunded * 100)), koboOf(lines, '13'));
    assert.equal(await walletKobo(world, user.userId), BigInt(funded * 100) - koboOf(lines, '02456789'));
    for (const line of done.lines) {
      const expected = '13'.includes(line.phone.at(-1)!) ? 'failed' : 'success';
      assert.equal(line.status, expected, `line to ${line.phone}`);
    }
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });

  it('replays the same order for the same Idempotency-Key, debiting once', async () => {
    const user = await buyer(world, 1_000);
    const lines = airtimeLines(5).map((line) => ({ ...line, phone: mtn('0') }));
    const total = lines.reduce((sum, line) => sum + line.amount, 0);
    const key = randomUUID();
    const first = await order(world, user, { lines, total }, key);
    const placed = ok(first);
    const again = await order(world, user, { lines, total }, key);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(ok(again), placed, 'the order as first answered');
    assert.equal(await recordedPurchases(world, user.userId), 5);
    assert.equal(await ordersOnRecord(world, user.userId), 1);
    assert.equal(await walletKobo(world, user.userId), BigInt((1_000 - total) * 100));
    await linesSent(world, placed);
  });

  it("lists the caller's orders newest first; another person's order is 404", async () => {
    const user = await buyer(world, 1_000);
    const lines = [{ network: 'mtn', phone: mtn('0'), amount: 100 }];
    const first = ok(await order(world, user, { lines, total: 100 }));
    const second = ok(await order(world, user, { lines, total: 100 }));
    await Promise.all([linesSent(world, first), linesSent(world, second)]);
    const listed = ok(
      await get<{ items: BulkOrderView[]; total: number }>(
        world,
        'listBulkOrders',
        {},
        { token: user.accessToken },
      ),
    );
    assert.equal(listed.total, 2);
    assert.deepEqual(
      listed.items.map((item) => item.id),
      [second.id, first.id],
    );
    assert.equal(listed.items[0]!.status, 'completed');

    const stranger = await signIn(world);
    expectError(
      await post(world, 'getBulkOrder', { id: first.id }, { token: stranger.accessToken }),
      404,
      'NOT_FOUND',
    );
    assert.equal(
      ok(await get<{ total: number }>(world, 'listBulkOrders', {}, { token: stranger.accessToken })).total,
      0,
    );
  });
});
