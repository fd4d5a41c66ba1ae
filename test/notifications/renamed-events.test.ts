import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createEventBus,
  dispatchEventJob,
  domainEventJob,
  type EventOf,
} from '../../src/events/domain-events.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, get, ok, signIn, type World } from '../helpers/world.ts';

// Decision 0038 renamed three events so that "transfer" means wallet to wallet only. A job enqueued
// before the deploy carries the old name and is run after it: it must still reach the subscribers
// of the event it now is (the inbox of a bank deposit, the purchases waiting on a float top-up).

const at = '2026-12-07T09:00:00.000Z';
const settledBefore = {
  type: 'funding.transfer_settled',
  reference: 'fund-0123456789abcdef01234567',
  provider: 'bills',
  amountKobo: '500000',
  occurredAt: at,
};
const failedBefore = { ...settledBefore, type: 'funding.transfer_failed', reason: 'Declined' };

describe('events stored under their names before decision 0038', () => {
  it('are read as the events they are now, alone or in a job of many, every field kept', () => {
    assert.deepEqual(domainEventJob.payload.parse(settledBefore), {
      ...settledBefore,
      type: 'funding.float_top_up_settled',
    });
    const job = domainEventJob.payload.parse({ events: [settledBefore, failedBefore] });
    assert.deepEqual(job, {
      events: [
        { ...settledBefore, type: 'funding.float_top_up_settled' },
        { ...failedBefore, type: 'funding.float_top_up_failed' },
      ],
    });
  });

  it('reach the subscribers of the new name', async () => {
    const bus = createEventBus();
    const seen: Array<EventOf<'funding.float_top_up_settled' | 'funding.float_top_up_failed'>> = [];
    bus.subscribe('funding.float_top_up_settled', async (event) => {
      seen.push(event);
    });
    bus.subscribe('funding.float_top_up_failed', async (event) => {
      seen.push(event);
    });
    await dispatchEventJob(bus, domainEventJob.payload.parse({ events: [settledBefore, failedBefore] }));
    assert.deepEqual(
      seen.map((event) => [event.type, event.reference]),
      [
        ['funding.float_top_up_settled', settledBefore.reference],
        ['funding.float_top_up_failed', failedBefore.reference],
      ],
    );
  });

  it('an old name missing a field, or a name never used, is still refused', () => {
    assert.equal(domainEventJob.payload.safeParse({ ...settledBefore, provider: undefined }).success, false);
    assert.equal(
      domainEventJob.payload.safeParse({ ...settledBefore, type: 'funding.transfer_sent' }).success,
      false,
    );
  });
});

describe(`a bank deposit's event queued before decision 0038 (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('run by the worker after the deploy, makes its inbox entry once, under the kind the contract names', async () => {
    const user = await signIn(world);
    const reference = 'dva-before-the-rename-0001';
    const queued = {
      type: 'funding.transfer_credited',
      userId: user.userId,
      reference,
      accountNumber: '9930000001',
      amountKobo: '250000',
      occurredAt: at,
    };
    // As the release before enqueued it: the name the job's schema no longer publishes.
    await world.ctx.jobs.boss.send(domainEventJob.name, queued);
    await world.ctx.jobs.boss.send(domainEventJob.name, queued);
    const ran = await runDomainEvents(world);
    assert.deepEqual(
      ran.map((event) => event.type),
      ['funding.bank_deposit_credited', 'funding.bank_deposit_credited'],
    );
    const inbox = ok(
      await get<{ items: Array<{ kind: string; body: string; data: { reference?: string } }> }>(
        world,
        'listNotifications',
        { limit: 10 },
        { token: user.accessToken },
      ),
    );
    const entries = inbox.items.filter((item) => item.data.reference === reference);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]!.kind, 'transfer_credited');
    assert.match(entries[0]!.body, /₦2,500\.00 sent to your account 9930000001/);
  });
});
