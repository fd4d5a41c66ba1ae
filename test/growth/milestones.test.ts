import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, type SignedIn, type World } from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { breakCall, lock, lockCall, saver } from '../savings/support.ts';

// Milestones: thresholds on the total ever locked (default ₦10,000, ₦50,000, ₦100,000, ₦500,000,
// ₦1,000,000), pending until acknowledged, each recorded once per user.

type Milestone = { threshold: number; reachedAt: string };

describe(`milestones (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const pending = async (user: SignedIn) =>
    ok(await get<Milestone[]>(world, 'getPendingMilestones', {}, { token: user.accessToken }));
  const ack = (user: SignedIn, threshold: unknown) =>
    post<Milestone & { acknowledgedAt: string }>(
      world,
      'ackMilestone',
      { threshold },
      { token: user.accessToken },
    );
  const reached = async (user: SignedIn) =>
    (await publishedEvents(world, 'growth.milestone_reached'))
      .filter((e) => e.userId === user.userId)
      .map((e) => e.thresholdKobo);

  it('records a threshold once when the total ever locked reaches it, broken locks included', async () => {
    const user = await saver(world, 100_000);
    const first = await lock(world, user, 6_000);
    assert.deepEqual(await pending(user), []);
    ok(await breakCall(world, user, first.id));
    const second = await lock(world, user, 4_000);
    const list = await pending(user);
    assert.deepEqual(
      list.map((m) => m.threshold),
      [10_000],
    );
    assert.equal(list[0]!.reachedAt, second.createdAt, 'reached by the lock that crossed it');
    await lock(world, user, 1_000);
    assert.deepEqual(await reached(user), ['1000000'], 'one event, not one per lock after it');
  });

  it('records every threshold one lock crosses, and acknowledging removes exactly that one', async () => {
    const user = await saver(world, 200_000);
    await lock(world, user, 150_000);
    assert.deepEqual(
      (await pending(user)).map((m) => m.threshold),
      [10_000, 50_000, 100_000],
    );
    const acked = ok(await ack(user, 50_000));
    assert.equal(acked.threshold, 50_000);
    assert.ok(acked.acknowledgedAt >= acked.reachedAt);
    assert.deepEqual(
      (await pending(user)).map((m) => m.threshold),
      [10_000, 100_000],
    );
    expectError(await ack(user, 50_000), 404, 'NOT_FOUND');
    // Never reached, or not a threshold at all.
    expectError(await ack(user, 500_000), 404, 'NOT_FOUND');
    expectError(await ack(user, 12_345), 404, 'NOT_FOUND');
    expectValidationAt(await ack(user, 1.234), 'data.threshold');
    expectValidationAt(await ack(user, '10000'), 'data.threshold');
    // Another user's milestone is not the caller's to acknowledge.
    const other = await saver(world, 0);
    expectError(await ack(other, 10_000), 404, 'NOT_FOUND');
    assert.deepEqual(
      (await pending(user)).map((m) => m.threshold),
      [10_000, 100_000],
    );
    // A later lock does not bring an acknowledged milestone back.
    await lock(world, user, 100);
    assert.deepEqual(
      (await pending(user)).map((m) => m.threshold),
      [10_000, 100_000],
    );
    assert.deepEqual(await reached(user), ['1000000', '5000000', '10000000']);
  });

  it('records a threshold once when two locks cross it at once', async () => {
    for (let round = 0; round < 5; round++) {
      const user = await saver(world, 10_000);
      const [a, b] = await Promise.all([lockCall(world, user, 5_000), lockCall(world, user, 5_000)]);
      ok(a);
      ok(b);
      assert.deepEqual(
        (await pending(user)).map((m) => m.threshold),
        [10_000],
      );
      assert.deepEqual(await reached(user), ['1000000']);
    }
  });
});
