import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type DomainEvent, dispatchEventJob, domainEventJob } from '../../src/events/domain-events.ts';
import { newId } from '../../src/ids.ts';
import { formatNaira } from '../../src/money.ts';
import { notificationEmailJob, notificationPushJob } from '../../src/notifications/jobs.ts';
import { saveSubscription } from '../../src/push/subscriptions.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { until } from '../helpers/until.ts';
import { createWorld, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The inbox takes a job's events at once (issue 27): one statement writes a settled batch's entries,
// and an entry gets an email job only for a verified address and a push job only for a device, each
// only while its kind is switched on. Most buyers have neither, and each job is a row to insert,
// fetch, complete and purge: half of buyAirtime's throughput went to jobs that sent nothing.

type Inbox = { items: Array<{ id: string; kind: string; title: string; body: string }>; total: number };

describe(`the inbox's delivery jobs (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const inbox = async (user: SignedIn) =>
    ok(await get<Inbox>(world, 'listNotifications', { limit: 100 }, { token: user.accessToken }));

  /** The email and push jobs enqueued for these inbox entries, whatever their state. */
  async function deliveryJobs(notificationIds: string[]): Promise<{ email: number; push: number }> {
    const { rows } = await sql<{ name: string }>`
      select name from pgboss.job
      where name in (${notificationEmailJob.name}, ${notificationPushJob.name})
        and data->>'notificationId' = any(${notificationIds}::text[])`.execute(world.ctx.db);
    return {
      email: rows.filter((r) => r.name === notificationEmailJob.name).length,
      push: rows.filter((r) => r.name === notificationPushJob.name).length,
    };
  }

  /** Gives the user a verified address (as verifyEmail would), or an unverified one. */
  async function withEmail(user: SignedIn, verified = true): Promise<void> {
    await world.ctx.db
      .updateTable('users')
      .set({
        email: `${user.userId}@example.test`,
        email_verified_at: verified ? world.ctx.clock.now() : null,
      })
      .where('id', '=', user.userId)
      .execute();
  }

  /** Registers a device for the user (the API refuses test hosts; the jobs are not run here). */
  async function withDevice(user: SignedIn): Promise<void> {
    const keys = {
      p256dh: Buffer.alloc(65, 4).toString('base64url'),
      auth: Buffer.alloc(16).toString('base64url'),
    };
    const endpoint = `https://fcm.googleapis.com/fcm/send/${newId()}`;
    await saveSubscription(world.ctx.db, user.userId, { endpoint, ...keys }, world.ctx.clock.now());
  }

  const succeeded = (user: SignedIn, occurredAt: string, amountKobo = '10000'): DomainEvent => ({
    type: 'vtu.purchase_succeeded',
    userId: user.userId,
    transactionId: newId(),
    reference: String(Date.now()).padStart(12, '0'),
    service: 'airtime',
    amountKobo,
    occurredAt,
  });

  it('a purchase by someone with no verified email and no device enqueues no email or push job; its entry is in the inbox', async () => {
    const user = await buyer(world, 5_000);
    const purchase = await bought(world, user, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 100,
    });
    assert.equal(purchase.status, 'success');
    await runDomainEvents(world);
    const entries = await inbox(user);
    assert.ok(
      entries.items.some((n) => n.kind === 'purchase_succeeded'),
      JSON.stringify(entries.items.map((n) => n.kind)),
    );
    assert.deepEqual(await deliveryJobs(entries.items.map((n) => n.id)), { email: 0, push: 0 });
  });

  it('enqueues an email job only for a verified address, a push job only for a device, each only for a kind switched on', async () => {
    const [emailed, pushed, both, unverified, quiet, neither] = await Promise.all(
      Array.from({ length: 6 }, () => signIn(world)),
    );
    await withEmail(emailed!);
    await withDevice(pushed!);
    await withEmail(both!);
    await withDevice(both!);
    await withEmail(unverified!, false);
    await withEmail(quiet!);
    await withDevice(quiet!);
    ok(
      await post(
        world,
        'updateNotificationSettings',
        { email: { purchase_succeeded: false }, push: { purchase_succeeded: false } },
        { token: quiet!.accessToken },
      ),
    );
    const users = { emailed, pushed, both, unverified, quiet, neither } as Record<string, SignedIn>;
    const at = world.ctx.clock.now().toISOString();
    // One job, as a settled batch of purchases publishes it.
    await dispatchEventJob(world.ctx.events, { events: Object.values(users).map((u) => succeeded(u, at)) });
    const jobs: Record<string, { email: number; push: number }> = {};
    for (const [name, user] of Object.entries(users)) {
      const entries = (await inbox(user)).items.filter((n) => n.kind === 'purchase_succeeded');
      assert.equal(entries.length, 1, `${name}: the entry is made whatever the channels`);
      jobs[name] = await deliveryJobs(entries.map((n) => n.id));
    }
    assert.deepEqual(jobs, {
      emailed: { email: 1, push: 0 },
      pushed: { email: 0, push: 1 },
      both: { email: 1, push: 1 },
      unverified: { email: 0, push: 0 },
      quiet: { email: 0, push: 0 },
      neither: { email: 0, push: 0 },
    });
  });

  it('a job of many events makes every entry once, in the order of its events, however often it runs', async () => {
    const [a, b, c] = await Promise.all(Array.from({ length: 3 }, () => signIn(world)));
    await withDevice(c!);
    // One instant for all: the entries of a user still read newest event first.
    const at = world.ctx.clock.now().toISOString();
    const events: DomainEvent[] = [];
    for (let i = 0; i < 30; i++) events.push(succeeded([a, b, c][i % 3]!, at, String(10_000 + i * 100)));
    events.push({
      type: 'vtu.purchase_failed',
      userId: a!.userId,
      transactionId: newId(),
      reference: '000000000001',
      service: 'data',
      amountKobo: '50000',
      reason: 'the provider refused it',
      occurredAt: at,
    });
    events.push({
      type: 'funding.float_top_up_settled',
      reference: 'trf_1',
      provider: 'bills',
      amountKobo: '1',
      occurredAt: at,
    });
    await dispatchEventJob(world.ctx.events, { events });
    // The same job again, twice and at once (a retry racing a second worker): nothing is repeated.
    await Promise.all([
      dispatchEventJob(world.ctx.events, { events }),
      dispatchEventJob(world.ctx.events, { events }),
    ]);
    const amounts = (user: SignedIn) =>
      events
        .filter((e) => e.type === 'vtu.purchase_succeeded' && e.userId === user.userId)
        .map((e) => (e as { amountKobo: string }).amountKobo);
    for (const user of [a!, b!, c!]) {
      const mine = await inbox(user);
      const purchases = mine.items.filter((n) => n.kind === 'purchase_succeeded');
      assert.equal(purchases.length, 10);
      assert.deepEqual(
        purchases.map((n) => /purchase of (₦[\d,.]+)/.exec(n.body)?.[1]),
        amounts(user)
          .map((kobo) => formatNaira(BigInt(kobo)))
          .reverse(),
        'newest first: of one instant, the later event',
      );
      assert.equal(mine.total, user === a ? 11 : 10);
      const ids = mine.items.map((n) => n.id);
      assert.deepEqual(await deliveryJobs(ids), { email: 0, push: user === c ? 10 : 0 });
    }
  });

  it('hands the events of every job a worker fetches to the inbox at once', async () => {
    // A burst of settled batches is several domain-event jobs: the worker takes up to 20 together
    // and the inbox writes all of their events in one call, not one transaction per job.
    const buyers = [await signIn(world), await signIn(world), await signIn(world)];
    const at = world.ctx.clock.now().toISOString();
    const seen: DomainEvent[][] = [];
    world.ctx.events.subscribeBatch('vtu.purchase_succeeded', async (batch) => void seen.push(batch));
    for (const user of buyers) {
      const event: DomainEvent = {
        type: 'vtu.purchase_succeeded',
        userId: user.userId,
        transactionId: newId(),
        reference: `walked-${newId()}`,
        service: 'airtime',
        amountKobo: '10000',
        occurredAt: at,
      };
      await world.ctx.jobs.send(domainEventJob, { events: [event] });
    }
    await world.ctx.jobs.startWorkers();
    await until(async () => {
      const entries = await Promise.all(buyers.map(inbox));
      return entries.every((mine) => mine.items.some((n) => n.kind === 'purchase_succeeded'));
    }, 'an inbox entry for each buyer');
    assert.deepEqual(
      seen.map((batch) => batch.length),
      [3],
      'the three jobs, fetched together, are one batch',
    );
  });
});
