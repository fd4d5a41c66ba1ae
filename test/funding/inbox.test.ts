import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Kysely } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { createPaymentEventInbox, storePaymentEvents } from '../../src/funding/webhook.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { chargeSuccess, sha256 } from './support.ts';

/**
 * The database, counting its inserts; the first `failFirst` of them fail, as when the connection
 * drops mid-batch.
 */
function watched(db: Kysely<DB>, options: { failFirst: number }): { db: Kysely<DB>; inserts: () => number } {
  let inserts = 0;
  const proxy = new Proxy(db, {
    get(target, property) {
      if (property === 'insertInto') {
        inserts += 1;
        if (inserts <= options.failFirst) {
          return () => {
            throw new Error('the database went away');
          };
        }
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: proxy, inserts: () => inserts };
}

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

  it('60 concurrent deliveries share INSERTs of at most 16, each answered for its own body', async () => {
    const database = watched(world.ctx.db, { failFirst: 0 });
    const inbox = createPaymentEventInbox({ ...deps(), db: database.db }, world.ctx.database.batching, {
      batchMax: 16,
    });
    const bodies = Array.from({ length: 60 }, body);
    const answers = await Promise.all(bodies.map((b) => inbox.store(b)));
    assert.ok(answers.every((a) => a.created && a.needsProcessing));
    assert.equal(database.inserts(), 4, 'four statements, not sixty');
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

  const storedOf = async (bodies: Buffer[]) =>
    (
      await world.ctx.db
        .selectFrom('payment_events')
        .select('id')
        .where(
          'body_sha256',
          'in',
          bodies.map((b) => sha256(b)),
        )
        .execute()
    ).length;

  it('a batch that fails is stored again delivery by delivery, so a passing failure costs no answer', async () => {
    const database = watched(world.ctx.db, { failFirst: 1 });
    const inbox = createPaymentEventInbox({ ...deps(), db: database.db }, world.ctx.database.batching, {
      batchMax: 64,
    });
    // Deliveries read in one turn form one batch; it fails as a whole, then each is stored alone.
    const bodies = [body(), body()];
    const answers = await Promise.all(bodies.map((b) => inbox.store(b)));
    assert.ok(answers.every((a) => a.created));
    assert.equal(await storedOf(bodies), 2);
    assert.equal(database.inserts(), 3, 'the failed batch, then one INSERT per delivery');
  });

  it('deliveries that cannot be stored are each answered with the error, and the next batch is stored', async () => {
    const database = watched(world.ctx.db, { failFirst: 3 });
    const inbox = createPaymentEventInbox({ ...deps(), db: database.db }, world.ctx.database.batching, {
      batchMax: 64,
    });
    const failed = [body(), body()];
    const answers = failed.map((b) => inbox.store(b));
    for (const answer of answers) await assert.rejects(answer, /the database went away/);
    assert.equal(await storedOf(failed), 0, 'the failed batch left nothing behind');
    // The next batch is stored, and the provider's retry of the same bytes with it.
    const next = await Promise.all([inbox.store(body()), inbox.store(failed[0]!)]);
    assert.ok(next.every((a) => a.created));
    assert.equal(database.inserts(), 4);
  });
});
