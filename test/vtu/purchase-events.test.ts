import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  createEventBus,
  type DomainEvent,
  dispatchEventJob,
  domainEventJob,
  type EventOf,
} from '../../src/events/domain-events.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { bought, buyCall, buyer, mtn } from './purchase-support.ts';

// Issue 5 item 10: a purchase that succeeds and one that fails (and is refunded) each publish a domain
// event, once, for the subscribers (notifications) to turn into messages. The purchases settled in
// one transaction share one job: the events still reach the subscribers one by one.

type PurchaseEvent = EventOf<'vtu.purchase_succeeded'> | EventOf<'vtu.purchase_failed'>;

describe(`VTU purchase events (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const received: PurchaseEvent[] = [];
  before(async () => {
    world = await createWorld();
    // Subscribed before the worker starts, as the service's own subscribers are.
    world.ctx.events.subscribe('vtu.purchase_succeeded', async (event) => void received.push(event));
    world.ctx.events.subscribe('vtu.purchase_failed', async (event) => void received.push(event));
    await world.ctx.jobs.startWorkers();
  });
  after(() => world.close());

  const eventsOf = (transactionId: string) => received.filter((e) => e.transactionId === transactionId);

  it('one event per settled purchase: succeeded with its amount, failed with the reason of its refund', async () => {
    const user = await buyer(world, 10_000);
    const delivered = await bought(world, user, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 300,
    });
    const refused = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 700 });
    assert.equal(delivered.status, 'success');
    assert.equal(refused.status, 'failed');

    await until(() => eventsOf(delivered.id).length > 0 && eventsOf(refused.id).length > 0, 'both events');
    const [success] = eventsOf(delivered.id);
    assert.equal(success?.type, 'vtu.purchase_succeeded');
    assert.equal(success.userId, user.userId);
    assert.equal(success.reference, delivered.reference);
    assert.equal(success.service, 'airtime');
    assert.equal(success.amountKobo, '30000');
    const [failure] = eventsOf(refused.id);
    assert.equal(failure?.type, 'vtu.purchase_failed');
    assert.equal(failure.amountKobo, '70000');
    assert.equal(failure.type === 'vtu.purchase_failed' && failure.reason, refused.failureReason);
  });

  it('purchases settled together: every one reaches the subscribers exactly once', async () => {
    const user = await buyer(world, 10_000);
    const accepted = await Promise.all(
      ['5', '6', '1', '7', '8', '1', '9', '5'].map((last) =>
        buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn(last), amount: 100 }),
      ),
    );
    const ids = accepted.map((response) => ok(response).id);
    await until(() => ids.every((id) => eventsOf(id).length > 0), 'an event for every purchase');
    // Every job the worker was going to run has run: no event arrives twice.
    await until(async () => (await unfinishedEventJobs(world)) === 0, 'the event jobs to finish');
    for (const id of ids) assert.equal(eventsOf(id).length, 1, `one event for ${id}`);
    assert.equal(
      received.filter((e) => e.type === 'vtu.purchase_failed' && ids.includes(e.transactionId)).length,
      2,
    );
  });
});

async function unfinishedEventJobs(world: World): Promise<number> {
  const result = await sql<{ n: string }>`
    select count(*)::text as n from pgboss.job where name = ${domainEventJob.name} and state in ('created', 'retry', 'active')
  `.execute(world.ctx.db);
  return Number(result.rows[0]?.n);
}

describe('a job of several domain events', () => {
  const event = (reference: string): DomainEvent => ({
    type: 'funding.float_top_up_settled',
    reference,
    provider: 'bills',
    amountKobo: '100',
    occurredAt: '2026-11-24T00:00:00.000Z',
  });

  it('one event whose subscriber fails does not keep the others from theirs; the job fails, to be retried', async () => {
    const bus = createEventBus();
    const seen: string[] = [];
    bus.subscribe('funding.float_top_up_settled', async (e) => {
      if (e.reference === 'bad') throw new Error('subscriber down');
      seen.push(e.reference);
    });
    await assert.rejects(
      dispatchEventJob(bus, { events: [event('a'), event('bad'), event('b')] }),
      /subscriber down/,
    );
    assert.deepEqual(seen, ['a', 'b']);
    await dispatchEventJob(bus, event('c'));
    assert.deepEqual(seen, ['a', 'b', 'c'], 'a job of one event, as published one at a time');
  });
});
