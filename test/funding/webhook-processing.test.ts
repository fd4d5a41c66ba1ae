import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { storePaymentEvents } from '../../src/funding/webhook.ts';
import {
  createPaymentEventDrainer,
  paymentWebhookSweepJob,
  processPendingPaymentEvents,
} from '../../src/funding/webhook-processing.ts';
import type { JobQueue } from '../../src/jobs/queue.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  creditPostings,
  fundingDeps,
  intentRow,
  storedEvent,
  walletKobo,
} from './support.ts';

// The inbox is the queue: an event stored and not processed is the record that it must be. These
// store events the way the route does, but without its kick, as if the process had died right after
// answering 200, and check that what drains the inbox credits each top-up once and closes the rest.

const quiet = { error: () => {} };

describe(`processing stored payment events (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  before(async () => {
    world = await createWorld();
    user = await signIn(world);
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  const deps = (jobs: JobQueue = world.ctx.jobs) => ({ ...fundingDeps(world), jobs });
  let counter = 0;
  const unknownBody = () => chargeSuccess(`unknown-${process.pid}-${++counter}`, 10_000);
  const store = (bodies: string[]) =>
    storePaymentEvents(
      deps(),
      bodies.map((b) => Buffer.from(b)),
    );
  const unprocessed = async () =>
    (await world.ctx.db.selectFrom('payment_events').select('id').where('processed_at', 'is', null).execute())
      .length;

  it(
    'one pass processes a batch: each top-up credited once, repeats already credited, unknown references closed',
    BOUNDED,
    async () => {
      const intents = [await createIntent(world, user, 1_000), await createIntent(world, user, 2_000)];
      const before = await walletKobo(world, user.userId);
      // The first top-up twice, in distinct bytes (the provider's id differs): two events, one credit.
      const paid = [
        chargeSuccess(intents[0]!.reference, 100_000, { id: 1 }),
        chargeSuccess(intents[0]!.reference, 100_000, { id: 2 }),
        chargeSuccess(intents[1]!.reference, 200_000),
      ];
      const unknown = Array.from({ length: 7 }, unknownBody);
      await store([...paid, ...unknown]);
      assert.equal(await unprocessed(), 10);

      const result = await processPendingPaymentEvents(deps(), { batchMax: 100, logger: quiet });
      assert.deepEqual(result, { picked: 10, processed: 10 });
      assert.equal(await unprocessed(), 0);
      assert.equal(await walletKobo(world, user.userId), before + 300_000n);
      assert.equal(await creditPostings(world, intents[0]!.reference), 1);
      assert.equal((await intentRow(world, intents[1]!.reference))?.status, 'success');
      const outcomes = await Promise.all(
        [...paid, ...unknown].map(async (b) => (await storedEvent(world, b))?.outcome),
      );
      assert.deepEqual(outcomes.slice(0, 3).sort(), ['already_credited', 'credited', 'credited']);
      assert.deepEqual(new Set(outcomes.slice(3)), new Set(['unknown_reference']));

      // Nothing left: the next pass takes nothing and changes nothing.
      assert.deepEqual(await processPendingPaymentEvents(deps(), { batchMax: 100, logger: quiet }), {
        picked: 0,
        processed: 0,
      });
      assert.equal(await walletKobo(world, user.userId), before + 300_000n);
    },
  );

  it('an event that keeps failing does not hold back the others in its batch', BOUNDED, async () => {
    const poisoned = await createIntent(world, user, 500);
    const fine = await createIntent(world, user, 700);
    const before = await walletKobo(world, user.userId);
    // The credit of one top-up cannot publish its domain event (a fault inside its transaction).
    const jobs: JobQueue = {
      ...world.ctx.jobs,
      send: async (name, data, options) => {
        if ((data as { reference?: unknown }).reference === poisoned.reference)
          throw new Error('cannot enqueue');
        return world.ctx.jobs.send(name, data, options);
      },
    };
    const poisonedBody = chargeSuccess(poisoned.reference, 50_000);
    const others = [chargeSuccess(fine.reference, 70_000), unknownBody(), unknownBody()];
    await store([poisonedBody, ...others]);

    const errors: unknown[] = [];
    const result = await processPendingPaymentEvents(deps(jobs), {
      batchMax: 100,
      logger: { error: (...args: unknown[]) => errors.push(args) },
    });
    assert.deepEqual(result, { picked: 4, processed: 3 });
    assert.ok(errors.length >= 2, 'the failed batch and the failed event were logged');
    assert.equal((await storedEvent(world, poisonedBody))?.processed_at, null, 'left for the next drain');
    assert.equal(await creditPostings(world, poisoned.reference), 0, 'the failed credit rolled back whole');
    assert.equal(await walletKobo(world, user.userId), before + 70_000n);

    // Once the fault is gone, the sweep job credits it, once.
    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
    assert.equal((await storedEvent(world, poisonedBody))?.outcome, 'credited');
    assert.equal(await walletKobo(world, user.userId), before + 120_000n);
  });

  it('a drain goes round batch after batch until the inbox is empty', BOUNDED, async () => {
    const intent = await createIntent(world, user, 300);
    const before = await walletKobo(world, user.userId);
    await store([...Array.from({ length: 24 }, unknownBody), chargeSuccess(intent.reference, 30_000)]);
    const drainer = createPaymentEventDrainer(deps(), { batchMax: 10, logger: quiet });
    // Kicks while a drain runs make it go round once more, never a second drain at once.
    drainer.kick();
    drainer.kick();
    await drainer.drainNow();
    assert.equal(await unprocessed(), 0, 'three batches of at most 10 took all 25');
    assert.equal(await walletKobo(world, user.userId), before + 30_000n);
  });

  it(
    'events stored but never kicked (a crash after the 200) are credited by the sweep job',
    BOUNDED,
    async () => {
      const intent = await createIntent(world, user, 900);
      const before = await walletKobo(world, user.userId);
      const body = chargeSuccess(intent.reference, 90_000);
      await store([body]);
      assert.equal((await storedEvent(world, body))?.processed_at, null);
      await world.ctx.jobs.runNow(paymentWebhookSweepJob);
      assert.equal((await storedEvent(world, body))?.outcome, 'credited');
      assert.equal(await walletKobo(world, user.userId), before + 90_000n);
      // The sweep again (a second process's, or the next minute's) changes nothing.
      await world.ctx.jobs.runNow(paymentWebhookSweepJob);
      assert.equal(await walletKobo(world, user.userId), before + 90_000n);
    },
  );
});
