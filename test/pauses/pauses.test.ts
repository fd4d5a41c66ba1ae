import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createPauseCopy } from '../../src/pauses/service-pauses.ts';
import { order as bulkOrder, ordersOnRecord, preview } from '../bulk-orders/support.ts';
import { walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import {
  type ApiResponse,
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { refreshed, scheduleOf, skippedDailyRun } from '../schedules/support.ts';
import {
  advanceClock,
  type Buyer,
  buyCall,
  buyer,
  current,
  mtn,
  PIN,
  recordedPurchases,
} from '../vtu/purchase-support.ts';

// Operators' pauses (API.md section 17.4, decision 0042) over HTTP: a paused service, or a service
// through one provider, answers 503 SERVICE_PAUSED before any debit (a purchase, a bulk order, a
// social order, a sale of airtime), its lists say it is unavailable and why, a scheduled run is
// skipped with the reason and the next one still comes, a purchase accepted before the pause still
// completes, and a resumed service buys again. The bound of 5 s on another process is shown on
// PostgreSQL (two services on one database), and the copy's refresh on either engine.

type PauseView = {
  service: string;
  provider?: string;
  inEffect: boolean;
  reason: string;
  pausedBy: string;
  pausedAt: string;
  updatedAt: string;
};
type Listed = { items: unknown[]; available: boolean; pausedReason?: string };

const e164 = (phone: string) => `+234${phone.slice(1)}`;
const DAY = 24 * 60 * 60;

/** No host resolves: the sandbox takes a social link whose name does not resolve (as social-orders.test.ts). */
const nothingResolves = async (host: string): Promise<string[]> => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

describe(`operators' pauses (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhone = uniquePhone();
  let world: World;
  let admin: SignedIn;
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: e164(adminPhone) }, resolveHost: nothingResolves });
    admin = await signIn(world, adminPhone);
  });
  after(() => world?.close());

  const pause = (input: Record<string, unknown>, on: World = world) =>
    post<PauseView>(on, 'adminPauseService', input, { token: admin.accessToken });
  const resume = (input: Record<string, unknown>, on: World = world) =>
    post<PauseView & { resumedAt: string }>(on, 'adminResumeService', input, { token: admin.accessToken });
  const pausesNow = async () =>
    ok(await get<{ items: PauseView[] }>(world, 'adminListPauses', {}, { token: admin.accessToken })).items;
  const listed = async (operation: string, user: SignedIn, input: Record<string, unknown> = {}, on = world) =>
    ok(await get<Listed>(on, operation, input, { token: user.accessToken }));
  const airtime = (user: Buyer, last = '5', on = world) =>
    buyCall(on, user, 'buyAirtime', { network: 'mtn', phone: mtn(last), amount: 100 });
  const refusedPaused = (answer: ApiResponse, details: Record<string, string>, what: string) => {
    const error = failure(answer);
    assert.deepEqual([error.status, error.code, error.details], [503, 'SERVICE_PAUSED', details], what);
  };

  it('refuses a paused service with 503 before the PIN and any debit, lists it as unavailable, and buys again once resumed', async () => {
    const user = await buyer(world, 1_000);
    const before = await walletKobo(world, user.userId);

    const paused = ok(await pause({ service: 'airtime', reason: 'MTN airtime is failing at the provider' }));
    assert.deepEqual(
      [paused.service, paused.provider, paused.inEffect, paused.reason, paused.pausedBy],
      ['airtime', undefined, true, 'MTN airtime is failing at the provider', admin.userId],
    );
    // A 503 is not stored for replay (API.md section 3): the same key buys once the service resumes.
    const key = randomUUID();
    const sameOrder = { network: 'mtn', phone: mtn('5'), amount: 100, pin: PIN };
    const refused = await post(world, 'buyAirtime', sameOrder, {
      token: user.accessToken,
      idempotencyKey: key,
    });
    refusedPaused(refused, { service: 'airtime' }, 'buyAirtime');
    assert.match(failure(refused).message, /Airtime is paused for now: MTN airtime is failing/);
    // Asked before the PIN: a wrong one is not even counted.
    const wrongPin = await post(
      world,
      'buyAirtime',
      { network: 'mtn', phone: mtn('5'), amount: 100, pin: '0000' },
      { token: user.accessToken },
    );
    refusedPaused(wrongPin, { service: 'airtime' }, 'buyAirtime with a wrong PIN');
    assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
    assert.equal(await recordedPurchases(world, user.userId), 0, 'no purchase recorded');

    const networks = await listed('listAirtimeNetworks', user);
    assert.deepEqual(
      [networks.available, networks.pausedReason],
      [false, 'MTN airtime is failing at the provider'],
    );
    assert.ok(networks.items.length > 0, 'the networks are still listed');
    const data = await listed('listDataNetworks', user);
    assert.deepEqual([data.available, data.pausedReason], [true, undefined], 'data is not paused');

    // Pausing again sets the reason; it is still one pause, paused since the first time.
    const again = ok(await pause({ service: 'airtime', reason: 'the provider is on it' }));
    assert.deepEqual([again.pausedAt, again.reason], [paused.pausedAt, 'the provider is on it']);
    assert.deepEqual(
      (await pausesNow()).filter((p) => p.service === 'airtime').map((p) => p.reason),
      ['the provider is on it'],
    );
    assert.equal((await listed('listAirtimeNetworks', user)).pausedReason, 'the provider is on it');

    const resumed = ok(await resume({ service: 'airtime' }));
    assert.deepEqual([resumed.service, resumed.reason], ['airtime', 'the provider is on it']);
    assert.ok(!Number.isNaN(Date.parse(resumed.resumedAt)));
    assert.deepEqual(
      (await pausesNow()).filter((p) => p.service === 'airtime'),
      [],
      'no longer listed',
    );
    const notPaused = failure(await resume({ service: 'airtime' }));
    assert.deepEqual([notPaused.status, notPaused.code], [404, 'NOT_FOUND'], 'resuming what is not paused');

    const bought = ok(
      await post<{ id: string }>(world, 'buyAirtime', sameOrder, {
        token: user.accessToken,
        idempotencyKey: key,
      }),
    );
    await world.ctx.modules.vtu.api.sendEnded(bought.id);
    assert.equal(await recordedPurchases(world, user.userId), 1, 'bought once, under the key refused before');
    assert.equal((await listed('listAirtimeNetworks', user)).available, true);
  });

  it("refuses what is not an operator's to pause, and anyone but an administrator", async () => {
    const user = await buyer(world, 0);
    for (const input of [
      { service: 'gas', reason: 'no such service' },
      { service: 'airtime', provider: 'mtn', reason: 'no such provider' },
      { service: 'airtime' },
      { service: 'airtime', reason: ' ' },
      { service: 'airtime', reason: 'x'.repeat(501) },
    ]) {
      const error = failure(await pause(input));
      assert.deepEqual([error.status, error.code], [400, 'VALIDATION_ERROR'], JSON.stringify(input));
    }
    const forbidden = failure(
      await post(world, 'adminPauseService', { service: 'data', reason: 'me' }, { token: user.accessToken }),
    );
    assert.deepEqual([forbidden.status, forbidden.code], [403, 'FORBIDDEN']);
    const listForbidden = failure(await get(world, 'adminListPauses', {}, { token: user.accessToken }));
    assert.deepEqual([listForbidden.status, listForbidden.code], [403, 'FORBIDDEN']);
    assert.deepEqual(await pausesNow(), [], 'nothing was paused');
  });

  it('stops, through a provider, only the purchases routed to it', async () => {
    const user = await buyer(world, 1_000);
    // Airtime is routed to the bills provider (SPEC.md item 3): a pause of it through the data
    // provider is recorded, stops nothing now, and says so.
    const elsewhere = ok(
      await pause({ service: 'airtime', provider: 'data', reason: 'data vendor airtime down' }),
    );
    assert.deepEqual([elsewhere.provider, elsewhere.inEffect], ['data', false]);
    const goesOn = ok(await airtime(user));
    await world.ctx.modules.vtu.api.sendEnded(goesOn.id);
    assert.equal((await listed('listAirtimeNetworks', user)).available, true);

    const routed = ok(await pause({ service: 'airtime', provider: 'bills', reason: 'VTpass airtime down' }));
    assert.deepEqual([routed.provider, routed.inEffect], ['bills', true]);
    const before = await walletKobo(world, user.userId);
    refusedPaused(await airtime(user), { service: 'airtime', provider: 'bills' }, 'airtime through bills');
    assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
    const networks = await listed('listAirtimeNetworks', user);
    assert.deepEqual([networks.available, networks.pausedReason], [false, 'VTpass airtime down']);
    // The same provider's other services go on: the pause is of airtime through it.
    assert.equal((await listed('listElectricityPlans', user)).available, true);

    // Resuming the whole service is not resuming a provider's pause: 404, and still refused.
    const notThat = failure(await resume({ service: 'airtime' }));
    assert.deepEqual(
      [notThat.status, notThat.code, notThat.details],
      [404, 'NOT_FOUND', { service: 'airtime' }],
    );
    refusedPaused(await airtime(user), { service: 'airtime', provider: 'bills' }, 'still paused');

    ok(await resume({ service: 'airtime', provider: 'bills' }));
    ok(await resume({ service: 'airtime', provider: 'data' }));
    const again = ok(await airtime(user));
    await world.ctx.modules.vtu.api.sendEnded(again.id);
  });

  it('refuses bulk orders, social orders and airtime sales of a paused service the same way', async () => {
    const user = await buyer(world, 5_000);
    const before = await walletKobo(world, user.userId);
    const lines = [1, 2, 3].map(() => ({ network: 'mtn', phone: mtn('5'), amount: 100 }));

    ok(await pause({ service: 'airtime', reason: 'airtime maintenance' }));
    refusedPaused(await preview(world, user, 'airtime', lines), { service: 'airtime' }, 'previewBulkOrder');
    refusedPaused(
      await bulkOrder(world, user, { lines, total: 300 }),
      { service: 'airtime' },
      'createBulkOrder',
    );
    assert.equal(await ordersOnRecord(world, user.userId), 0, 'no bulk order recorded');

    ok(await pause({ service: 'social', provider: 'social', reason: 'panel maintenance' }));
    const services = await listed('listSocialServices', user);
    assert.deepEqual([services.available, services.pausedReason], [false, 'panel maintenance']);
    const social = await buyCall(world, user, 'buySocialService', {
      serviceId: '1002',
      link: 'https://instagram.com/p/billrail',
      quantity: 100,
      amount: 32.05,
    });
    refusedPaused(social, { service: 'social', provider: 'social' }, 'buySocialService');

    ok(await pause({ service: 'airtime_to_cash', reason: 'payouts held' }));
    const quote = await listed('quoteAirtimeToCash', user, { network: 'mtn', amount: 1000 });
    assert.deepEqual([quote.available, quote.pausedReason], [false, 'payouts held']);
    const sale = await buyCall(world, user, 'sellAirtime', { network: 'mtn', phone: mtn('5'), amount: 1000 });
    refusedPaused(sale, { service: 'airtime_to_cash' }, 'sellAirtime');

    assert.equal(await walletKobo(world, user.userId), before, 'nothing debited');
    assert.equal(await recordedPurchases(world, user.userId), 0, 'no purchase recorded');

    ok(await resume({ service: 'airtime' }));
    ok(await resume({ service: 'social', provider: 'social' }));
    ok(await resume({ service: 'airtime_to_cash' }));
    ok(await preview(world, user, 'airtime', lines));
    const placed = ok(await bulkOrder(world, user, { lines, total: 300 }));
    await Promise.all(placed.lines.map((line) => world.ctx.modules.vtu.api.sendEnded(line.transactionId!)));
  });

  it('skips a scheduled run with the reason, without counting it, and runs the next once resumed', async () => {
    const skipped = await skippedDailyRun(world, await buyer(world, 5_000), async () =>
      ok(await pause({ service: 'airtime', reason: 'the airtime provider is down' })),
    );
    assert.match(skipped.told.body, /the airtime provider is down/);
    assert.equal(skipped.told.data.reason, 'Airtime is paused for now: the airtime provider is down');
    let user = skipped.user;
    const made = skipped.schedule;

    ok(await resume({ service: 'airtime' }));
    await advanceClock(world, DAY);
    user = await refreshed(world, user);
    // A day on, the administrator's access token has expired as the person's did.
    admin = await refreshed(world, admin);
    const ran = await scheduleOf(world, user, made.id);
    assert.deepEqual([ran.status, ran.runs], ['active', 1], 'the next run is made');
    for (const purchase of await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('id')
      .where('user_id', '=', user.userId)
      .execute()) {
      await world.ctx.modules.vtu.api.sendEnded(purchase.id);
    }
  });

  it('lets a purchase accepted before the pause complete', async () => {
    let user = await buyer(world, 1_000);
    // Pending at the provider, then a success on the requery a minute later (API.md section 8: 2).
    const accepted = ok(await airtime(user, '2'));
    await world.ctx.modules.vtu.api.sendEnded(accepted.id);
    assert.equal((await current(world, user, accepted.id)).status, 'processing');
    ok(await pause({ service: 'airtime', reason: 'stop new airtime' }));
    await advanceClock(world, 61);
    user = await refreshed(world, user);
    assert.equal((await current(world, user, accepted.id)).status, 'success', 'the requery settled it');
    ok(await resume({ service: 'airtime' }));
  });

  it("reads the pauses again once this process's copy is older than its refresh period", async () => {
    // The module's own copy is dropped by the operations of this process; a copy of its own shows
    // what another process's does: it keeps what it read until it is refreshMs old.
    let elapsedMs = 0;
    const copy = createPauseCopy(world.ctx.db, 2_000, () => elapsedMs);
    assert.deepEqual(await copy.current(), []);
    ok(await pause({ service: 'cable', reason: 'bouquets are failing' }));
    elapsedMs = 1_999;
    assert.deepEqual(await copy.current(), [], 'a copy younger than the period is used as it is');
    elapsedMs = 2_000;
    assert.deepEqual(
      (await copy.current()).map((p) => [p.service, p.provider, p.reason]),
      [['cable', null, 'bouquets are failing']],
      'read again once it is as old as the period',
    );
    ok(await resume({ service: 'cable' }));
    copy.changed();
    assert.deepEqual(await copy.current(), [], 'a change made by its own process is read at once');
  });

  it('is refused by another service on the same database within 5 s, and the one that paused at once', {
    skip: !onPostgres() && 'needs PostgreSQL (DATABASE_URL): two services cannot share a PGlite',
  }, async () => {
    const twin = await createWorld({
      env: { ADMIN_PHONES: e164(adminPhone) },
      resolveHost: nothingResolves,
      sameDatabaseAs: world,
    });
    try {
      // An empty wallet: every purchase that is not paused is refused for funds, so nothing is bought
      // while the test waits.
      const user = await buyer(world, 0);
      // The twin has read the pauses (none) before the pause is made: its copy must be refreshed.
      assert.equal((await listed('listAirtimeNetworks', user, {}, twin)).available, true);
      const notPaused = failure(await airtime(user, '5', twin));
      assert.equal(notPaused.code, 'INSUFFICIENT_FUNDS');

      ok(await pause({ service: 'airtime', reason: 'provider outage' }));
      const pausedAt = performance.now();
      refusedPaused(await airtime(user), { service: 'airtime' }, 'the process that paused, at once');
      await until(
        async () => !(await listed('listAirtimeNetworks', user, {}, twin)).available,
        'the twin lists airtime as unavailable',
      );
      refusedPaused(await airtime(user, '5', twin), { service: 'airtime' }, 'the twin');
      const seenAfterMs = performance.now() - pausedAt;
      assert.ok(seenAfterMs < 5_000, `the twin refused after ${Math.round(seenAfterMs)} ms`);

      // Resumed through the twin: the twin at once, the first service within 5 s.
      ok(await resume({ service: 'airtime' }, twin));
      const resumedAt = performance.now();
      assert.equal(failure(await airtime(user, '5', twin)).code, 'INSUFFICIENT_FUNDS');
      await until(
        async () => (await listed('listAirtimeNetworks', user)).available,
        'the first service lists airtime again',
      );
      assert.equal(failure(await airtime(user)).code, 'INSUFFICIENT_FUNDS');
      const resumedAfterMs = performance.now() - resumedAt;
      assert.ok(
        resumedAfterMs < 5_000,
        `the first service bought again after ${Math.round(resumedAfterMs)} ms`,
      );
    } finally {
      await twin.close();
    }
  });
});
