import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { createPaymentEventInbox, storePaymentEvents } from '../../src/funding/webhook.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { chargeSuccess, sha256 } from './support.ts';

/** The database, but its next insert fails once, as when the connection drops mid-batch. */
function failingOnce(db: Kysely<DB>): Kysely<DB> {
  let failNext = true;
  return new Proxy(db, {
    get(target, property) {
      if (property === 'insertInto' && failNext) {
        failNext = false;
        return () => {
          throw new Error('the database went away');
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

// Webhook deliveries are stored in batches (group commit): the bodies that arrive while one batch is
// being stored go together in the next transaction. Each delivery still learns exactly what became
// of its own body, and none is acknowledged unless the batch holding it committed.

describe(`storing webhook deliveries in batches (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const deps = () => ({ db: world.ctx.db, clock: world.ctx.clock });
  let counter = 0;
  const body = () => Buffer.from(chargeSuccess(`inbox-${process.pid}-${Date.now()}-${++counter}`, 10_000));

  it('answers each body in order: new, repeated in the batch, stored before, unparseable', async () => {
    const earlier = body();
    const [first] = await storePaymentEvents(deps(), [earlier]);
    const fresh = body();
    const garbage = Buffer.from('{not json');
    const answers = await storePaymentEvents(deps(), [fresh, earlier, fresh, garbage]);

    assert.equal(answers[0]!.created, true);
    assert.equal(answers[0]!.needsProcessing, true);
    assert.deepEqual(answers[1], { eventId: first!.eventId, created: false, needsProcessing: true });
    assert.deepEqual(answers[2], { eventId: answers[0]!.eventId, created: false, needsProcessing: false });
    assert.equal(answers[3]!.created, true);
    assert.equal(answers[3]!.needsProcessing, false, 'nothing to process in an unparseable body');

    const stored = await world.ctx.db
      .selectFrom('payment_events')
      .select(['id', 'outcome', 'processed_at'])
      .where('body_sha256', 'in', [sha256(fresh), sha256(garbage)])
      .execute();
    assert.equal(stored.length, 2, 'the repeated body was stored once');
    // The unprocessed row is the durable to-do; the unparseable one is closed at once.
    const byId = new Map(stored.map((row) => [row.id, row]));
    assert.equal(byId.get(answers[0]!.eventId)?.processed_at, null);
    assert.equal(byId.get(answers[3]!.eventId)?.outcome, 'unparseable');
  });

  it('60 concurrent deliveries share transactions, each answered for its own body', async () => {
    const inbox = createPaymentEventInbox(deps(), { batchMax: 16 });
    const bodies = Array.from({ length: 60 }, body);
    const answers = await Promise.all(bodies.map((b) => inbox.store(b)));
    assert.ok(answers.every((a) => a.created && a.needsProcessing));
    const rows = await world.ctx.db
      .selectFrom('payment_events')
      .select(['id', 'body_sha256'])
      .where(
        'body_sha256',
        'in',
        bodies.map((b) => sha256(b)),
      )
      .execute();
    const idBySha = new Map(rows.map((r) => [r.body_sha256, r.id]));
    assert.deepEqual(
      answers.map((a) => a.eventId),
      bodies.map((b) => idBySha.get(sha256(b))),
      'every answer names the event of its own body',
    );
  });

  it('a batch that fails answers every delivery in it with the error, and the next batch is stored', async () => {
    const inbox = createPaymentEventInbox({ ...deps(), db: failingOnce(world.ctx.db) }, { batchMax: 64 });
    // At rest the first delivery is stored at once, alone; the ones arriving meanwhile form the next
    // batch, and the one after.
    const bodies = [body(), body(), body()];
    const first = inbox.store(bodies[0]!);
    const [second, third] = [inbox.store(bodies[1]!), inbox.store(bodies[2]!)];
    await assert.rejects(first, /the database went away/);
    assert.ok((await second).created && (await third).created, 'the next batch was stored');
    const kept = await world.ctx.db
      .selectFrom('payment_events')
      .select('id')
      .where('body_sha256', '=', sha256(bodies[0]!))
      .execute();
    assert.equal(kept.length, 0, 'the failed batch left nothing behind');
    // The provider retries the same bytes: stored now.
    assert.equal((await inbox.store(bodies[0]!)).created, true);
  });
});
