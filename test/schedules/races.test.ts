import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { userBalances } from '../../src/ledger/accounts.ts';
import { runReference } from '../../src/schedules/recurrence.ts';
import { runCommit, schedulesRunDueJob } from '../../src/schedules/runner.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { buyer, fund, mtn } from '../vtu/purchase-support.ts';
import { assertLedgerOk, create, fromNow } from './support.ts';

// Two runners at once. PGlite runs one transaction at a time, so there this proves the rules only in
// sequence; on PostgreSQL two services (two processes' pools) on one database run the due job at the
// same moment, twice each, where a due time is run once only if it is claimed under a lock each
// runner respects, and a wallet that covers some of its runs pays for exactly those.

async function services(): Promise<World[]> {
  const world = await createWorld();
  if (!onPostgres()) return [world];
  return [world, await createWorld({ sameDatabaseAs: world })];
}

const schedulesOf = (world: World, userId: string) =>
  world.ctx.db.selectFrom('schedules').selectAll().where('user_id', '=', userId).execute();

const purchasesOf = (world: World, userId: string) =>
  world.ctx.db.selectFrom('vtu_transactions').selectAll().where('user_id', '=', userId).execute();

describe(`schedule runner races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let worlds: World[];
  let world: World;
  before(async () => {
    worlds = await services();
    world = worlds[0]!;
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  it('runners racing over 3 × 12 due schedules make each run once and never overdraw a wallet', async () => {
    const users = await Promise.all([1, 2, 3].map(() => buyer(world, 0)));
    const made = new Map<string, string[]>();
    for (const user of users) {
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const schedule = await create(world, user, {
          service: 'airtime',
          order: { network: 'mtn', phone: mtn('5'), amount: 100 },
          startAt: fromNow(world, 60),
          every: 'day',
        });
        ids.push(schedule.id);
      }
      made.set(user.userId, ids);
    }
    // Each wallet covers 7 of its 12 runs (airtime is sold at its face value with no markup set).
    for (const user of users) await fund(world, user.userId, 700);
    for (const w of worlds) w.ctx.sandboxClock!.advance(120);

    const runners = worlds.flatMap((w) => [w, w]);
    await Promise.all(runners.map((w) => w.ctx.jobs.runNow(schedulesRunDueJob)));
    for (const w of worlds) await w.ctx.modules.vtu.api.drained();

    for (const user of users) {
      const rows = await schedulesOf(world, user.userId);
      const purchases = await purchasesOf(world, user.userId);
      assert.equal(rows.length, 12);
      for (const row of rows) {
        assert.equal(row.runs + row.skips_in_row, 1, 'each due time decided once');
        assert.equal(row.run_reference, null, 'every claim finished');
      }
      assert.equal(rows.filter((row) => row.runs === 1).length, 7, 'the wallet paid for seven runs');
      assert.equal(purchases.length, 7, 'seven purchases');
      const suffixes = purchases.map((p) => p.reference.slice(12));
      assert.equal(new Set(suffixes).size, 7, 'no due time bought twice');
      for (const p of purchases) {
        const owner = rows.find((row) => p.reference.slice(12).startsWith(row.id.replaceAll('-', '')));
        assert.ok(owner !== undefined && owner.runs === 1, 'each purchase is its schedule’s run');
      }
      assert.equal((await userBalances(world.ctx.db, user.userId)).wallet, 0n);
    }
    await assertLedgerOk(world);
  });

  describe('a run taken up again after its runner died', () => {
    async function claimedBefore(
      claimedSecondsAgo: number,
      purchased: boolean,
    ): Promise<{ userId: string; id: string; reference: string }> {
      const user = await buyer(world, 1_000);
      const schedule = await create(world, user, {
        service: 'airtime',
        order: { network: 'mtn', phone: mtn('5'), amount: 100 },
        startAt: fromNow(world, 1),
        every: 'week',
      });
      const now = world.ctx.clock.now();
      const claimedAt = new Date(now.getTime() - claimedSecondsAgo * 1000);
      const reference = runReference(
        world.ctx.modules.vtu.api,
        schedule.id,
        new Date(schedule.nextRunAt),
        claimedAt,
      );
      // What a runner that died leaves: its claim, lapsed, and (had it got that far) the purchase.
      await world.ctx.db
        .updateTable('schedules')
        .set({
          run_due_at: schedule.nextRunAt,
          run_reference: reference,
          run_claimed_at: claimedAt,
          claimed_until: new Date(now.getTime() - 1_000),
          run_purchase_id: purchased ? newId() : null,
        })
        .where('id', '=', schedule.id)
        .execute();
      return { userId: user.userId, id: schedule.id, reference };
    }

    async function runAgain(): Promise<void> {
      world.ctx.sandboxClock!.advance(5);
      await world.ctx.jobs.runNow(schedulesRunDueJob);
      await world.ctx.modules.vtu.api.drained();
    }

    it('whose purchase was made: finished as run, not bought again', async () => {
      const left = await claimedBefore(30, true);
      await runAgain();
      const [row] = await schedulesOf(world, left.userId);
      assert.equal(row?.runs, 1);
      assert.equal((await purchasesOf(world, left.userId)).length, 0, 'no second purchase');
    });

    it('claimed a minute ago: bought under the same reference', async () => {
      const left = await claimedBefore(60, false);
      await runAgain();
      const purchases = await purchasesOf(world, left.userId);
      assert.deepEqual(
        purchases.map((p) => p.reference),
        [left.reference],
      );
      assert.equal(purchases[0]?.status, 'success', 'the provider took the reference');
    });

    it('claimed too long ago for the provider: bought under a fresh reference, and the old claim can no longer commit a purchase', async () => {
      const left = await claimedBefore(600, false);
      await runAgain();
      const purchases = await purchasesOf(world, left.userId);
      assert.equal(purchases.length, 1);
      assert.notEqual(purchases[0]?.reference, left.reference);
      assert.equal(purchases[0]?.reference.slice(12), left.reference.slice(12), 'the same run');
      assert.equal(purchases[0]?.status, 'success');
      // The runner that died wakes up and tries to buy under its old claim: refused, nothing made.
      const [row] = await schedulesOf(world, left.userId);
      const vtu = world.ctx.modules.vtu.api;
      const order = await vtu.orderFor(left.userId, 'airtime', row!.order_fields as never);
      await assert.rejects(
        vtu.buyTogether(left.userId, [order], runCommit(left.id, left.reference), [left.reference]),
        /claim was taken over/,
      );
      assert.equal((await purchasesOf(world, left.userId)).length, 1, 'the late runner bought nothing');
      await assertLedgerOk(world);
    });
  });
});
