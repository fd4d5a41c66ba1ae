import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { after, afterEach, before, describe, it } from 'node:test';
import { userBalances } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { notificationEmailJob, notificationPushJob } from '../../src/notifications/jobs.ts';
import { saveSubscription } from '../../src/push/subscriptions.ts';
import type { SandboxEmail } from '../../src/sandbox/state.ts';
import { purchasePostings } from '../../src/vtu/purchases.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents, runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { type PushService, startPushService, type TestSubscription } from '../helpers/push-service.ts';
import { createWorld, get, ok, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { advanceClock, type Buyer, bought, buyer, current, mtn } from './purchase-support.ts';

// Tokens and pins that always arrive (issue 28 item 4, API.md sections 8 and 16). A meter or an exam
// pin's phone ending in 6 makes the sandbox VTpass deliver without the token or pins, and release
// them at the next requery. The purchase is a success at once and its money settled then, once; the
// requery on the sandbox clock brings the token, which is stored once and reaches the buyer in the
// inbox (data.token / data.pins), by push and by email, and in getMyVtuTransaction.

type Notification = { id: string; kind: string; title: string; body: string; data: Record<string, unknown> };
type Inbox = { items: Notification[]; total: number };

describe(`tokens and pins that come after the success (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let pushService: PushService;

  before(async () => {
    pushService = await startPushService();
    world = await createWorld({
      env: { PUSH_ALLOWED_HOSTS: 'localhost', PUSH_TIMEOUT_MS: '5000' },
      pushAgent: new Agent({ ca: pushService.ca, keepAlive: true }),
      resolveHost: async (host) => {
        if (host === 'localhost') return ['127.0.0.1'];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
    });
  });
  after(async () => {
    await world.close();
    await pushService.close();
  });
  afterEach(async () => {
    const check = await checkLedger(world.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });

  /** A buyer with a verified address (as verifyEmail leaves it) and a device to push to. */
  async function reachableBuyer(
    naira: number,
  ): Promise<{ user: Buyer; address: string; device: TestSubscription }> {
    const user = await buyer(world, naira);
    const address = `buyer.${user.userId}@example.test`;
    await world.ctx.db
      .updateTable('users')
      .set({ email: address, email_verified_at: world.ctx.clock.now() })
      .where('id', '=', user.userId)
      .execute();
    const device = pushService.subscribe();
    await saveSubscription(world.ctx.db, user.userId, device, world.ctx.clock.now());
    return { user, address, device };
  }

  /** Runs what the worker would: the domain events, then the email and push jobs they enqueued. */
  async function deliverNotifications(): Promise<void> {
    await runDomainEvents(world);
    const email = await runQueuedJobs(world, notificationEmailJob);
    const push = await runQueuedJobs(world, notificationPushJob);
    assert.deepEqual([...email.failed, ...push.failed], [], 'every delivery job succeeded');
  }

  const inbox = async (user: SignedIn) =>
    ok(await get<Inbox>(world, 'listNotifications', { limit: 100 }, { token: user.accessToken })).items;
  const aboutPurchase = (items: Notification[], id: string) =>
    items.filter((n) => n.data.transactionId === id);
  const mailTo = (address: string): SandboxEmail[] =>
    world.ctx.sandbox!.state.emails.filter((mail) => mail.to === address);
  const pushesTo = (device: TestSubscription) =>
    pushService.received
      .filter((p) => device.endpoint.endsWith(p.path))
      .map((p) => JSON.parse(p.payload) as { kind: string; title: string; body: string });

  /** The purchase's row as the database holds it (the buyer's session expires as the clock moves). */
  const row = (id: string) =>
    world.ctx.db
      .selectFrom('vtu_transactions')
      .select(['status', 'token', 'pins', 'delivery_awaited_at', 'next_requery_at'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();

  /** The ledger postings of the purchase, by their references: the debit, then the one settlement. */
  async function postingsOf(reference: string): Promise<string[]> {
    const rows = await world.ctx.db
      .selectFrom('ledger_transactions')
      .select('reference')
      .where('reference', 'in', [
        purchasePostings.debit(reference),
        purchasePostings.settle(reference),
        purchasePostings.refund(reference),
      ])
      .execute();
    return rows.map((r) => r.reference).sort();
  }

  it('electricity, meter ending in 6: success without the token; the requery brings it, and it reaches the buyer everywhere, once', async () => {
    const { user, address, device } = await reachableBuyer(10_000);
    const purchase = await bought(world, user, 'buyElectricity', {
      plan: 'ikeja-electric',
      meter: '45012345676',
      type: 'prepaid',
      amount: 2_000,
      phone: mtn('5'),
    });
    assert.equal(purchase.status, 'success', 'delivered: a success at once');
    assert.equal(purchase.token, undefined, 'the token did not come with it');
    assert.equal((await userBalances(world.ctx.db, user.userId)).wallet, 800_000n, 'charged once');
    assert.deepEqual(await postingsOf(purchase.reference), [
      purchasePostings.debit(purchase.reference),
      purchasePostings.settle(purchase.reference),
    ]);

    // The success is told at once, saying the token is on its way.
    await deliverNotifications();
    const [success] = aboutPurchase(await inbox(user), purchase.id);
    assert.equal(success?.kind, 'purchase_succeeded');
    assert.equal(success.data.token, undefined);
    assert.equal(success.data.deliveryAwaited, true);
    assert.match(success.body, /token is on the way/);

    // The requery job on the sandbox clock asks again (15 s after the success) and keeps the token.
    await advanceClock(world, 16);
    const delivered = await current(world, user, purchase.id);
    assert.equal(delivered.status, 'success');
    assert.match(delivered.token ?? '', /^\d{20}$/);
    assert.ok(delivered.units !== undefined);
    const stored = await row(purchase.id);
    assert.equal(stored.delivery_awaited_at, null, 'no longer awaited');
    assert.equal(stored.next_requery_at, null, 'and no longer requeried');
    const token = delivered.token!;
    const grouped = token.replace(/(\d{4})(?=\d)/g, '$1 ');

    await deliverNotifications();
    const entries = aboutPurchase(await inbox(user), purchase.id);
    assert.equal(entries.length, 2, 'the success, then the token');
    const arrival = entries.find((n) => n.data.token !== undefined);
    assert.ok(arrival !== undefined, 'an inbox entry carries data.token');
    assert.equal(arrival.data.token, token);
    assert.equal(arrival.kind, 'purchase_succeeded');
    assert.match(arrival.title, /token is here/);
    assert.ok(arrival.body.includes(grouped), 'the body shows the token as it is typed');

    const mails = mailTo(address);
    assert.ok(
      mails.some((mail) => mail.text.includes(grouped)),
      `an email carries the token: ${JSON.stringify(mails.map((m) => m.subject))}`,
    );
    const pushes = pushesTo(device);
    assert.ok(
      pushes.some((p) => p.body.includes(grouped)),
      `a push carries the token: ${JSON.stringify(pushes)}`,
    );

    // Later requeries and event runs change nothing: no second message, no second settlement.
    await advanceClock(world, 3_600);
    await deliverNotifications();
    const relogged = await userSession(user);
    assert.equal(aboutPurchase(await inbox(relogged), purchase.id).length, 2);
    assert.equal(mailTo(address).filter((mail) => mail.text.includes(grouped)).length, 1);
    assert.equal(pushesTo(device).filter((p) => p.body.includes(grouped)).length, 1);
    assert.equal((await current(world, relogged, purchase.id)).token, token, 'kept as it came');
    assert.equal((await userBalances(world.ctx.db, user.userId)).wallet, 800_000n);
    assert.deepEqual(await postingsOf(purchase.reference), [
      purchasePostings.debit(purchase.reference),
      purchasePostings.settle(purchase.reference),
    ]);
  });

  it('exam pins, phone ending in 6: success without the pins; the requery brings every pin', async () => {
    const { user, address } = await reachableBuyer(50_000);
    const item = (await world.ctx.vtuProviders.bills.educationItems()).find((i) => i.exam === 'waec')!;
    const purchase = await bought(world, user, 'buyEducationPin', {
      exam: 'waec',
      variation: item.variation,
      quantity: 2,
      amount: (Number(item.wholesaleKobo) * 2) / 100,
      phone: mtn('6'),
    });
    assert.equal(purchase.status, 'success');
    assert.equal(purchase.pins, undefined);
    await deliverNotifications();

    await advanceClock(world, 16);
    const delivered = await current(world, user, purchase.id);
    assert.equal(delivered.pins?.length, 2);
    await deliverNotifications();
    const arrival = aboutPurchase(await inbox(user), purchase.id).find((n) => n.data.pins !== undefined);
    assert.deepEqual(arrival?.data.pins, delivered.pins);
    assert.match(arrival?.title ?? '', /pins are here/);
    for (const pin of delivered.pins!) {
      assert.ok(arrival!.body.includes(pin), 'the body lists every pin');
      assert.ok(
        mailTo(address).some((mail) => mail.text.includes(pin)),
        'and so does the email',
      );
    }
    assert.equal(
      (await userBalances(world.ctx.db, user.userId)).wallet,
      5_000_000n - item.wholesaleKobo * 2n,
      'charged once, for both pins',
    );
  });

  it('a token that came with the success is in that one message (data.token), and nothing is requeried', async () => {
    const { user, address } = await reachableBuyer(10_000);
    const purchase = await bought(world, user, 'buyElectricity', {
      plan: 'ikeja-electric',
      meter: '45012345675',
      type: 'prepaid',
      amount: 1_500,
      phone: mtn('5'),
    });
    assert.match(purchase.token ?? '', /^\d{20}$/);
    assert.equal((await row(purchase.id)).delivery_awaited_at, null);
    await deliverNotifications();
    const entries = aboutPurchase(await inbox(user), purchase.id);
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.data.token, purchase.token);
    assert.equal(entries[0]?.data.deliveryAwaited, undefined);
    const grouped = purchase.token!.replace(/(\d{4})(?=\d)/g, '$1 ');
    assert.ok(mailTo(address).some((mail) => mail.text.includes(grouped)));
  });

  it('a postpaid meter ending in 6 has no token to wait for', async () => {
    const user = await buyer(world, 10_000);
    const purchase = await bought(world, user, 'buyElectricity', {
      plan: 'ikeja-electric',
      meter: '45012345676',
      type: 'postpaid',
      amount: 1_500,
      phone: mtn('5'),
    });
    assert.equal(purchase.status, 'success');
    assert.equal((await row(purchase.id)).delivery_awaited_at, null);
  });

  it('a token that does not come is asked for on the backoff, then alerted once; the money stays settled', async () => {
    const user = await buyer(world, 10_000);
    const purchase = await bought(world, user, 'buyElectricity', {
      plan: 'ikeja-electric',
      meter: '45012345676',
      type: 'prepaid',
      amount: 1_000,
      phone: mtn('5'),
    });
    // The DisCo never vends: the sandbox keeps the token back on every requery.
    const order = world.ctx.sandbox!.state.bills.orders.get(purchase.reference)!;
    const never = order.withheld;
    order.withheld = null;
    try {
      for (let step = 0; step < 8; step++) await advanceClock(world, 600);
      const stored = await row(purchase.id);
      assert.equal(stored.status, 'success');
      assert.notEqual(stored.delivery_awaited_at, null, 'still awaited');
      assert.ok(stored.next_requery_at !== null && stored.next_requery_at > world.ctx.clock.now());
      const alerts = await world.ctx.db
        .selectFrom('ops_alerts')
        .select('message')
        .where('kind', '=', 'vtu_delivery_awaited')
        .where('message', 'like', `%${purchase.reference}%`)
        .execute();
      assert.equal(alerts.length, 1, 'one alert, however many requeries');
    } finally {
      order.withheld = never;
    }
    await advanceClock(world, 3_600);
    const stored = await row(purchase.id);
    assert.equal(stored.delivery_awaited_at, null, 'it came in the end');
    assert.match(stored.token ?? '', /^\d{20}$/);
    assert.equal((await userBalances(world.ctx.db, user.userId)).wallet, 900_000n);
  });

  /** A fresh session for the buyer, whose access token the sandbox clock has expired. */
  const userSession = (user: Buyer): Promise<SignedIn> => signInAgain(world, user.phone);
});

describe('a token awaited across a restart, with two processes asking at once (PostgreSQL)', {
  skip: onPostgres()
    ? false
    : 'needs DATABASE_URL: two services on one database; PGlite has one connection, so a race proves nothing',
}, () => {
  // The provider outlives the services: a world here hosts the sandbox simulators, and each service
  // reaches them over HTTP (SANDBOX_VTU_BASE_URL), as a real provider's would be reached.
  let provider: World;
  before(async () => {
    provider = await createWorld();
  });
  after(() => provider.close());

  const service = () =>
    createWorld({ sameDatabaseAs: provider, env: { SANDBOX_VTU_BASE_URL: provider.baseUrl } });

  it('the service that took the purchase stops; two started after it both requery; the token is kept and told once', async () => {
    const first = await service();
    let id: string;
    let reference: string;
    let userId: string;
    try {
      const user = await buyer(first, 10_000);
      userId = user.userId;
      const purchase = await bought(first, user, 'buyElectricity', {
        plan: 'ikeja-electric',
        meter: '45012345676',
        type: 'prepaid',
        amount: 2_000,
        phone: mtn('5'),
      });
      assert.equal(purchase.status, 'success');
      assert.equal(purchase.token, undefined);
      ({ id, reference } = purchase);
    } finally {
      await first.close();
    }

    const [second, third] = await Promise.all([service(), service()]);
    try {
      // Both come to the requery due at once: both ask the provider, one keeps the answer.
      await Promise.all([advanceClock(second, 16), advanceClock(third, 16)]);
      const stored = await second.ctx.db
        .selectFrom('vtu_transactions')
        .select(['status', 'token', 'delivery_awaited_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      assert.equal(stored.status, 'success');
      assert.match(stored.token ?? '', /^\d{20}$/);
      assert.equal(stored.delivery_awaited_at, null);
      const arrivals = (await publishedEvents(second, 'vtu.delivery_arrived')).filter(
        (event) => event.transactionId === id,
      );
      assert.equal(arrivals.length, 1, 'one arrival, whoever kept it');
      assert.equal(arrivals[0]?.token, stored.token);
      const postings = await second.ctx.db
        .selectFrom('ledger_transactions')
        .select('reference')
        .where('reference', 'like', `vtu:${reference}:%`)
        .execute();
      assert.deepEqual(postings.map((p) => p.reference).sort(), [
        purchasePostings.debit(reference),
        purchasePostings.settle(reference),
      ]);
      assert.equal((await userBalances(second.ctx.db, userId)).wallet, 800_000n);
      const check = await checkLedger(second.ctx.db);
      assert.ok(check.ok, JSON.stringify(check.imbalances));
    } finally {
      await Promise.all([second.close(), third.close()]);
    }
  });
});
