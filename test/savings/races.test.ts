import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { matureDueLocks } from '../../src/savings/maturity.ts';
import type { SavingsLockView } from '../../src/savings/service.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents } from '../helpers/domain-events.ts';
import { createWorld, signInAgain, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { balancesOf, breakCall, lock, lockCall, saver } from './support.ts';

// Races of savings locks. PGlite runs one transaction at a time, so these prove the rules there only
// in sequence; CI runs them on PostgreSQL too, where the requests and jobs overlap for real.

const DAY = 86_400;

describe(`savings races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  /** A second service on the same database (PostgreSQL): another worker process. */
  let second: World | undefined;
  before(async () => {
    world = await createWorld();
    if (onPostgres()) second = await createWorld({ sameDatabaseAs: world });
  });
  after(async () => {
    await second?.close();
    await world.close();
  });

  it('20 concurrent breaks of one lock: one wins, 19 get 409, the money moves once', async () => {
    const user = await saver(world, 1_000);
    const created = await lock(world, user, 1_000);
    const answers = await Promise.all(Array.from({ length: 20 }, () => breakCall(world, user, created.id)));
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    const b = await balancesOf(world, user);
    assert.deepEqual([b.wallet, b.savings], [95_000n, 0n]);
    assert.equal(
      (await publishedEvents(world, 'savings.lock_broken')).filter((e) => e.lockId === created.id).length,
      1,
    );
    await assertLedgerOk(world);
  });

  it('30 concurrent locks against a balance for 3: exactly 3 are made', async () => {
    const user = await saver(world, 300);
    const answers = await Promise.all(Array.from({ length: 30 }, () => lockCall(world, user, 100, 7)));
    assert.equal(answers.filter((a) => a.status === 200).length, 3);
    for (const answer of answers.filter((a) => a.status !== 200))
      expectError(answer, 409, 'INSUFFICIENT_FUNDS');
    const b = await balancesOf(world, user);
    assert.deepEqual([b.wallet, b.savings], [0n, 30_000n]);
    const rows = await world.ctx.db
      .selectFrom('savings_locks')
      .select('id')
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(rows.length, 3, 'a refused lock leaves no row');
    await assertLedgerOk(world);
  });

  it('a break racing the maturity job settles each lock one way, the money moved once and in full', async () => {
    const user = await saver(world, 2_000);
    const locks: SavingsLockView[] = [];
    for (let i = 0; i < 10; i++) locks.push(await lock(world, user, 200, 7));
    // Past maturity without running the jobs: the job and the breaks below race for every lock.
    world.ctx.sandboxClock!.advance(7 * DAY + 1);
    const signedIn = await signInAgain(world, user.phone);
    const othersDue = await dueLocksBesides(
      world,
      locks.map((l) => l.id),
    );
    const [job, ...breaks] = await Promise.all([
      matureDueLocks(world.ctx, { batchMax: 3 }),
      ...locks.map((l) => breakCall(world, signedIn, l.id)),
    ]);
    // A lock already due is not broken early: whichever reaches it first matures it, whole.
    let byJob = 0;
    for (const answer of breaks) {
      if (answer.status === 200) {
        assert.ok(answer.body.success);
        assert.deepEqual(
          [answer.body.data.lock.status, answer.body.data.penalty, answer.body.data.refunded],
          ['matured', 0, 200],
        );
      } else {
        expectError(answer, 409, 'CONFLICT');
        byJob += 1;
      }
    }
    assert.equal(
      job!.matured,
      byJob + othersDue,
      'the job matured exactly the locks the breaks found closed',
    );
    const b = await balancesOf(world, user);
    assert.deepEqual([b.wallet, b.savings], [200_000n, 0n]);
    const events = (await publishedEvents(world, 'savings.lock_matured')).filter((e) =>
      locks.some((l) => l.id === e.lockId),
    );
    assert.equal(events.length, 10, 'one matured event per lock');
    await assertLedgerOk(world);
  });

  it('two workers running the maturity job at once credit each lock once', async () => {
    const savers = await Promise.all(Array.from({ length: 12 }, () => saver(world, 2_500)));
    for (const user of savers) for (let i = 0; i < 25; i++) await lock(world, user, 100, 7);
    world.ctx.sandboxClock!.advance(7 * DAY + 1);
    // On PostgreSQL the second worker is another service on the same database, as a second process
    // would be; on PGlite two runs in the one process.
    const other = second?.ctx ?? world.ctx;
    if (second !== undefined)
      second.ctx.sandboxClock!.advance(
        (world.ctx.clock.now().getTime() - second.ctx.clock.now().getTime()) / 1000,
      );
    const othersDue = await dueLocksBesides(world, []);
    const runs = await Promise.all([
      matureDueLocks(world.ctx, { batchMax: 20 }),
      matureDueLocks(other, { batchMax: 20 }),
    ]);
    assert.equal(runs[0]!.matured + runs[1]!.matured, othersDue, JSON.stringify(runs));
    assert.ok(othersDue >= 300);
    for (const user of savers) {
      const b = await balancesOf(world, user);
      assert.deepEqual([b.wallet, b.savings], [250_000n, 0n]);
    }
    await assertLedgerOk(world);
  });
});

/** Active locks due now other than these (earlier tests' locks that the same clock move made due). */
async function dueLocksBesides(world: World, ids: string[]): Promise<number> {
  let due = world.ctx.db
    .selectFrom('savings_locks')
    .select('id')
    .where('status', '=', 'active')
    .where('matures_at', '<=', world.ctx.clock.now());
  if (ids.length > 0) due = due.where('id', 'not in', ids);
  return (await due.execute()).length;
}
