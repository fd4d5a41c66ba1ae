import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  creditedEvents,
  creditPostings,
  intentRow,
  payWithoutWebhook,
  processed,
  sendWebhook,
  verify,
  walletKobo,
} from './support.ts';

// Duplicate and racing credits (SPEC.md "Events" rules 2 and 3). On PGlite transactions are
// serialised, so these prove the logic; on PostgreSQL (DATABASE_URL) they really race.

const PARALLEL = 50;

describe(`crediting once under concurrency (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  before(async () => {
    world = await createWorld();
    user = await signIn(world);
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  it(
    `${PARALLEL} identical charge.success deliveries at once: ${PARALLEL} × 200, one event, one credit`,
    BOUNDED,
    async () => {
      const intent = await createIntent(world, user, 5_000);
      const before = await walletKobo(world, user.userId);
      const body = chargeSuccess(intent.reference, 500_000);
      const answers = await Promise.all(Array.from({ length: PARALLEL }, () => sendWebhook(world, body)));
      assert.deepEqual(
        answers.map((a) => a.status),
        Array.from({ length: PARALLEL }, () => 200),
      );
      const event = await processed(world, body);
      assert.equal(event.outcome, 'credited');
      const rows = await world.ctx.db
        .selectFrom('payment_events')
        .select('id')
        .where('reference', '=', intent.reference)
        .execute();
      assert.equal(rows.length, 1, 'the same bytes are stored once');
      assert.equal(await walletKobo(world, user.userId), before + 500_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
      assert.equal((await creditedEvents(world, intent.reference)).length, 1);
      // Running the job again (a retry after a crash) changes nothing.
      await world.ctx.jobs.runNow(paymentWebhookSweepJob);
      assert.equal(await walletKobo(world, user.userId), before + 500_000n);
    },
  );

  it(
    `${PARALLEL} verifyTopup calls and distinct webhook deliveries racing: one credit`,
    BOUNDED,
    async () => {
      const intent = await createIntent(world, user, 750);
      await payWithoutWebhook(world, intent);
      const before = await walletKobo(world, user.userId);
      // Distinct bytes (the id differs), so each is its own stored event racing the others to credit.
      const bodies = Array.from({ length: PARALLEL / 2 }, (_, i) =>
        chargeSuccess(intent.reference, 75_000, { id: i + 1 }),
      );
      const results = await Promise.all([
        ...Array.from({ length: PARALLEL / 2 }, () => verify(world, user, intent.reference)),
        ...bodies.map((body) => sendWebhook(world, body)),
      ]);
      for (const result of results) assert.equal(result.status, 200);
      const outcomes = [];
      for (const body of bodies) outcomes.push((await processed(world, body)).outcome);
      assert.ok(
        outcomes.every((o) => o === 'credited' || o === 'already_credited'),
        `outcomes: ${outcomes.join(', ')}`,
      );
      assert.ok(outcomes.filter((o) => o === 'credited').length <= 1);
      assert.equal(await walletKobo(world, user.userId), before + 75_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
      assert.equal((await creditedEvents(world, intent.reference)).length, 1);
      const row = await intentRow(world, intent.reference);
      assert.deepEqual([row?.status, row?.credited_amount], ['success', 75_000n]);
      const verified = await verify(world, user, intent.reference);
      assert.equal(verified.status, 200);
    },
  );

  it(`${PARALLEL} verifyTopup calls at once: one credit, every answer success`, BOUNDED, async () => {
    const intent = await createIntent(world, user, 120);
    await payWithoutWebhook(world, intent);
    const before = await walletKobo(world, user.userId);
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, () => verify(world, user, intent.reference)),
    );
    for (const result of results) {
      assert.equal(result.status, 200);
      assert.deepEqual(result.body, {
        success: true,
        data: { reference: intent.reference, status: 'success', credited: true },
      });
    }
    assert.equal(await walletKobo(world, user.userId), before + 12_000n);
    assert.equal(await creditPostings(world, intent.reference), 1);
  });
});
