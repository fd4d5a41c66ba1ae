import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompiledQuery } from 'kysely';
import { countWebhookScenarioEvents, eachTopupCreditedOnce, type Query } from '../../bench/webhook-events.ts';
import { BOUNDED, chargeSuccess, createIntent, processed, sendWebhook } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type SignedIn, signIn, type World } from '../helpers/world.ts';

// The bench's webhook check once read "501 credited of 500 top-ups" with every wallet exact: it
// counted credited events over the whole table, and the webClient scenario, which runs first on the
// same database, had funded its buyer through a charge.success of its own. Here an earlier top-up
// stands for that scenario; the scenario's own events include a second event for one of its
// references (other bytes, so stored as another event), which must be closed `already_credited`.

describe(`the bench's count of the webhook scenario's events (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  before(async () => {
    world = await createWorld();
    user = await signIn(world);
  });
  after(() => world.close());

  const query: Query = async (text, values) =>
    world.ctx.db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, values));

  /** Delivers a signed body and processes it: its stored row. */
  async function deliver(body: string) {
    assert.equal((await sendWebhook(world, body)).status, 200);
    return processed(world, body);
  }

  it('counts only the scenario’s events, each top-up credited by one', BOUNDED, async () => {
    // An earlier scenario's top-up, credited on the same database.
    const earlier = await createIntent(world, user, 1_000);
    assert.equal((await deliver(chargeSuccess(earlier.reference, 100_000, { id: 1 }))).outcome, 'credited');

    const unknownPrefix = 'bench_0a1b-';
    const topups = [await createIntent(world, user, 1_000), await createIntent(world, user, 1_000)];
    for (const [i, topup] of topups.entries()) {
      const first = await deliver(chargeSuccess(topup.reference, 100_000, { id: 10 + i }));
      assert.equal(first.outcome, 'credited');
    }
    const again = await deliver(chargeSuccess(topups[0]!.reference, 100_000, { id: 20 }));
    assert.equal(again.outcome, 'already_credited', 'a second event of a credited reference');
    const unknown = await deliver(chargeSuccess(`${unknownPrefix}7`, 12_300, { id: 30 }));
    assert.equal(unknown.outcome, 'unknown_reference');
    // Not the scenario's: the `_` of its prefix is no wildcard.
    await deliver(chargeSuccess('benchX0a1b-8', 12_300, { id: 31 }));

    const counts = await countWebhookScenarioEvents(query, {
      unknownPrefix,
      topupReferences: topups.map((t) => t.reference),
    });
    assert.deepEqual(counts, { stored: 4, unprocessed: 0, unknown: 1, credited: 2, creditedReferences: 2 });
    assert.ok(eachTopupCreditedOnce(counts, topups.length));
  });

  it('fails the check when a reference is labelled credited twice', () => {
    const twice = { stored: 3, unprocessed: 0, unknown: 0, credited: 2, creditedReferences: 1 };
    assert.equal(eachTopupCreditedOnce(twice, 2), false);
    assert.equal(eachTopupCreditedOnce({ ...twice, credited: 3, creditedReferences: 2 }, 2), false);
    assert.equal(eachTopupCreditedOnce({ ...twice, creditedReferences: 2, unprocessed: 1 }, 2), false);
  });
});
