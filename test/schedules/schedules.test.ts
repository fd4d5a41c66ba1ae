import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Clock } from '../../src/clock.ts';
import type { DatabaseTarget } from '../../src/db/database.ts';
import { newId } from '../../src/ids.ts';
import { userBalances } from '../../src/ledger/accounts.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { until } from '../helpers/until.ts';
import { createWorld, failure, get, ok, signIn, type World } from '../helpers/world.ts';
import { advanceClock, buyer, fund, mtn } from '../vtu/purchase-support.ts';
import {
  action,
  assertLedgerOk,
  create,
  createCall,
  fromNow,
  notificationsOf,
  purchasesOf,
  refreshed,
  scheduleOf,
  sendsEnded,
} from './support.ts';

// Scheduled purchases (API.md section 16) as a person lives them: a schedule approved once with the
// PIN, then runs on the sandbox clock that land in the purchase history like any purchase, a run the
// wallet could not cover skipped and told, a price that moved within and beyond what was allowed, and
// the service restarted on its database between runs.

const DAY = 86_400;

describe('scheduled purchases', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(async () => {
    await world?.close();
  });

  describe('createSchedule', () => {
    it('refuses what the buy operation would refuse, and what no schedule can be, and keeps nothing', async () => {
      const user = await buyer(world, 1_000);
      const airtime = { network: 'mtn', phone: mtn('5'), amount: 100 };
      const refusals: Array<[Record<string, unknown>, number, string]> = [
        [{ service: 'betting', order: airtime, startAt: fromNow(world, 600) }, 400, 'VALIDATION_ERROR'],
        [
          { service: 'airtime', order: { network: 'mtn', amount: 100 }, startAt: fromNow(world, 600) },
          400,
          'VALIDATION_ERROR',
        ],
        [
          { service: 'airtime', order: { ...airtime, pin: '2580' }, startAt: fromNow(world, 600) },
          400,
          'VALIDATION_ERROR',
        ],
        [{ service: 'airtime', order: airtime, startAt: fromNow(world, -3_600) }, 400, 'VALIDATION_ERROR'],
        [
          {
            service: 'airtime',
            order: airtime,
            startAt: fromNow(world, 600),
            every: 'day',
            endsAt: fromNow(world, 60),
          },
          400,
          'VALIDATION_ERROR',
        ],
        [
          { service: 'airtime', order: airtime, startAt: fromNow(world, 600), every: 'hour' },
          400,
          'VALIDATION_ERROR',
        ],
        [
          { service: 'airtime', order: airtime, startAt: fromNow(world, 600), every: 'day', runsMax: 0 },
          400,
          'VALIDATION_ERROR',
        ],
        [
          { service: 'airtime', order: airtime, startAt: fromNow(world, 600), priceTolerancePercent: 90 },
          400,
          'VALIDATION_ERROR',
        ],
        [
          { service: 'airtime', order: { ...airtime, phone: '08051234565' }, startAt: fromNow(world, 600) },
          422,
          'NETWORK_MISMATCH',
        ],
        [
          { service: 'airtime', order: { ...airtime, amount: 10 }, startAt: fromNow(world, 600) },
          422,
          'BELOW_MINIMUM',
        ],
        [
          { service: 'airtime', order: airtime, startAt: fromNow(world, 600), pin: '0000' },
          403,
          'INVALID_PIN',
        ],
      ];
      for (const [input, status, code] of refusals) {
        const refused = failure(await createCall(world, user, input));
        assert.deepEqual([refused.status, refused.code], [status, code], JSON.stringify(input));
      }
      const plans = await world.ctx.vtuProviders.data.dataPlans('mtn');
      const plan = plans[0]!;
      const stale = failure(
        await createCall(world, user, {
          service: 'data',
          order: {
            network: 'mtn',
            plan_id: plan.planId,
            phone: mtn('5'),
            amount: Number(plan.wholesaleKobo) / 100 + 1,
          },
          startAt: fromNow(world, 600),
        }),
      );
      assert.deepEqual([stale.status, stale.code], [409, 'PRICE_CHANGED']);
      assert.equal(stale.details?.amount, Number(plan.wholesaleKobo) / 100);

      const unsigned = failure(
        await createCall(
          world,
          { ...user, accessToken: 'nope' },
          { service: 'airtime', order: airtime, startAt: fromNow(world, 600) },
        ),
      );
      assert.equal(unsigned.status, 401);
      const rows = await world.ctx.db
        .selectFrom('schedules')
        .select('id')
        .where('user_id', '=', user.userId)
        .execute();
      assert.equal(rows.length, 0, 'no schedule kept');
    });

    it('keeps at most 50 open schedules per user: the 51st is 422 ABOVE_MAXIMUM', async () => {
      const user = await buyer(world, 1_000);
      const order = { network: 'mtn', phone: mtn('5'), amount: 100 };
      const first = await create(world, user, {
        service: 'airtime',
        order,
        startAt: fromNow(world, 600),
        every: 'week',
      });
      const row = await world.ctx.db
        .selectFrom('schedules')
        .selectAll()
        .where('id', '=', first.id)
        .executeTakeFirstOrThrow();
      await world.ctx.db
        .insertInto('schedules')
        .values(
          Array.from({ length: 49 }, () => ({
            ...row,
            id: newId(),
            order_fields: JSON.stringify(row.order_fields),
          })),
        )
        .execute();
      const refused = failure(
        await createCall(world, user, { service: 'airtime', order, startAt: fromNow(world, 600) }),
      );
      assert.deepEqual(
        [refused.status, refused.code, refused.details],
        [422, 'ABOVE_MAXIMUM', { limit: 50, unit: 'count' }],
      );
      ok(await action(world, user, 'cancelSchedule', first.id));
      ok(await createCall(world, user, { service: 'airtime', order, startAt: fromNow(world, 600) }));
    });

    it('needs Tier 1 and a PIN, as a purchase does', async () => {
      const newcomer = await signIn(world);
      const refused = failure(
        await createCall(world, newcomer, {
          service: 'airtime',
          order: { network: 'mtn', phone: mtn('5'), amount: 100 },
          startAt: fromNow(world, 600),
        }),
      );
      assert.deepEqual([refused.status, refused.code], [403, 'KYC_TIER_REQUIRED']);
    });
  });

  describe('pause, resume, cancel', () => {
    it('a paused schedule makes no purchase; resumed it runs at its next due time; cancelled never again', async () => {
      let user = await buyer(world, 5_000);
      const made = await create(world, user, {
        service: 'airtime',
        order: { network: 'mtn', phone: mtn('5'), amount: 100 },
        startAt: fromNow(world, 120),
        every: 'day',
      });
      assert.equal(made.status, 'active');
      assert.equal(made.runs, 0);
      assert.equal(made.priceTolerancePercent, 0);

      const paused = ok(await action(world, user, 'pauseSchedule', made.id));
      assert.equal(paused.status, 'paused');
      assert.equal(
        ok(await action(world, user, 'pauseSchedule', made.id)).status,
        'paused',
        'pausing again changes nothing',
      );
      await advanceClock(world, 300);
      assert.equal((await purchasesOf(world, user)).length, 0, 'nothing bought while paused');

      const resumed = ok(await action(world, user, 'resumeSchedule', made.id));
      assert.equal(resumed.status, 'active');
      assert.ok(
        Date.parse(resumed.nextRunAt) > world.ctx.clock.now().getTime(),
        'the missed run is not made up',
      );
      assert.equal(Date.parse(resumed.nextRunAt) - Date.parse(made.nextRunAt), DAY * 1000);

      await advanceClock(world, DAY);
      user = await refreshed(world, user);
      await sendsEnded(world, user);
      const [bought] = await purchasesOf(world, user);
      assert.equal(bought?.service, 'airtime');
      assert.equal((await scheduleOf(world, user, made.id)).runs, 1);

      const cancelled = ok(await action(world, user, 'cancelSchedule', made.id));
      assert.equal(cancelled.status, 'cancelled');
      await advanceClock(world, DAY);
      user = await refreshed(world, user);
      assert.equal((await purchasesOf(world, user)).length, 1, 'no run after cancelling');
      const again = failure(await action(world, user, 'resumeSchedule', made.id));
      assert.deepEqual([again.status, again.code], [409, 'CONFLICT']);

      const stranger = await signIn(world);
      for (const name of ['pauseSchedule', 'resumeSchedule', 'cancelSchedule']) {
        const hidden = failure(await action(world, stranger, name, made.id));
        assert.deepEqual([hidden.status, hidden.code], [404, 'NOT_FOUND'], name);
      }
      await assertLedgerOk(world);
    });

    it('a one-off runs once and ends', async () => {
      let user = await buyer(world, 1_000);
      const once = await create(world, user, {
        service: 'airtime',
        order: { network: 'mtn', phone: mtn('5'), amount: 200 },
        startAt: fromNow(world, 60),
      });
      assert.equal(once.runsMax, 1);
      await advanceClock(world, 120);
      await advanceClock(world, DAY);
      user = await refreshed(world, user);
      await sendsEnded(world, user);
      const after = await scheduleOf(world, user, once.id);
      assert.deepEqual([after.status, after.runs], ['ended', 1]);
      assert.equal((await purchasesOf(world, user)).length, 1);
    });
  });

  describe('price changes', () => {
    it('a plan within the tolerance runs at its price now; beyond it the schedule pauses and says why', async () => {
      let user = await buyer(world, 20_000);
      const plans = await world.ctx.vtuProviders.data.dataPlans('mtn');
      const plan = plans[0]!;
      const approved = Number(plan.wholesaleKobo) / 100;
      const made = await create(world, user, {
        service: 'data',
        order: { network: 'mtn', plan_id: plan.planId, phone: mtn('5'), amount: approved },
        startAt: fromNow(world, 60),
        every: 'week',
        priceTolerancePercent: 10,
      });
      const markup = (percentBp: number) =>
        world.ctx.modules.catalogue.api.setMarkup({
          level: null,
          service: 'data',
          provider: null,
          flatKobo: undefined,
          percentBp,
          updatedBy: user.userId,
        });
      try {
        await markup(500);
        await advanceClock(world, 120);
        user = await refreshed(world, user);
        await sendsEnded(world, user);
        const [first] = await purchasesOf(world, user);
        assert.equal(first?.amount, Math.ceil(approved * 105) / 100, 'charged the price now, 5% up');
        assert.equal(first?.status, 'success');
        assert.equal((await scheduleOf(world, user, made.id)).status, 'active');

        await markup(2_000);
        await advanceClock(world, 7 * DAY);
        user = await refreshed(world, user);
        const paused = await scheduleOf(world, user, made.id);
        assert.equal(paused.status, 'paused');
        assert.match(paused.pausedReason ?? '', /price rose .* more than the 10% you allowed/);
        assert.equal(paused.runs, 1);
        assert.equal((await purchasesOf(world, user)).length, 1, 'nothing bought above the tolerance');
        await runDomainEvents(world);
        const told = (await notificationsOf(world, user)).filter((n) => n.kind === 'schedule_paused');
        assert.equal(told.length, 1);
        assert.match(told[0]!.body, /price rose/);
      } finally {
        await markup(0);
      }
      await assertLedgerOk(world);
    });
  });
});

describe('a month of daily runs, with a skip and a restart', () => {
  // A base clock both services share, as two processes share the wall clock; each service's sandbox
  // clock moves on top of it, so the second one starts where the first one stopped.
  let offsetMs = 0;
  const shared: Clock = { now: () => new Date(Date.now() + offsetMs) };
  let database: TestDatabase | undefined;
  let target: DatabaseTarget;
  let dataDir: string | undefined;
  let world: World;

  before(async () => {
    if (onPostgres()) {
      database = await createTestDatabase();
      target = database.target;
    } else {
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-schedules-'));
      target = { kind: 'pglite', dataDir };
    }
    world = await createWorld({ database: target, clock: shared });
  });
  after(async () => {
    await world?.close();
    await database?.drop();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('runs every day, skips the day the wallet is empty, and survives a restart', async () => {
    let user = await buyer(world, 0);
    const phone = mtn('5');
    const made = await create(world, user, {
      service: 'airtime',
      order: { network: 'mtn', phone, amount: 100 },
      startAt: fromNow(world, 60),
      every: 'day',
      endsAt: fromNow(world, 60 + 29 * DAY + 3_600),
    });
    // The first run: how much one run costs (the retail price, markup included).
    await fund(world, user.userId, 150);
    await advanceClock(world, 120);
    user = await refreshed(world, user);
    await sendsEnded(world, user);
    const [first] = await purchasesOf(world, user);
    assert.ok(first !== undefined, 'the first run was bought');
    const costKobo = BigInt(Math.round(first.amount * 100));
    // Enough for exactly nine runs more: the eleventh day finds the wallet empty.
    const balance = (await userBalances(world.ctx.db, user.userId)).wallet;
    const topUp = costKobo * 9n - balance;
    assert.ok(topUp > 0n, 'the first funding covers less than ten runs');
    await fund(world, user.userId, Number(topUp) / 100);

    for (let day = 1; day < 30; day++) {
      if (day === 15) {
        // The service stops and starts again on the same database, with the clock where it was.
        offsetMs = world.ctx.clock.now().getTime() - Date.now();
        await world.close();
        world = await createWorld({ database: target, clock: shared });
        user = await refreshed(world, user);
      }
      if (day === 11) {
        user = await refreshed(world, user);
        const skipped = await scheduleOf(world, user, made.id);
        assert.deepEqual([skipped.runs, skipped.skipsInRow], [10, 1], 'day 10 skipped');
        await fund(world, user.userId, Number(costKobo * 30n) / 100);
      }
      await advanceClock(world, DAY);
      user = await refreshed(world, user);
      await sendsEnded(world, user);
    }

    const done = await scheduleOf(world, user, made.id);
    assert.equal(done.status, 'ended', 'the schedule ended at endsAt');
    assert.equal(done.runs, 29, 'thirty due days, one skipped');
    assert.equal(done.skipsInRow, 0, 'a success reset the skips');
    const history = await purchasesOf(world, user);
    assert.equal(history.length, 29);
    assert.ok(
      history.every((one) => one.status === 'success' && one.recipient === phone.replace(/^\+234/, '0')),
    );
    assert.equal(new Set(history.map((one) => one.reference)).size, 29, 'one purchase per due day');
    const ledgerHistory = ok(
      await get<{ items: Array<{ reference: string }> }>(
        world,
        'listTransactions',
        { limit: 100 },
        { token: user.accessToken },
      ),
    ).items;
    for (const one of history) {
      assert.ok(
        ledgerHistory.some((entry) => entry.reference === `vtu:${one.reference}:debit`),
        'in the wallet history too',
      );
    }

    await runDomainEvents(world);
    const inbox = await notificationsOf(world, user);
    const skips = inbox.filter((n) => n.kind === 'schedule_skipped');
    assert.equal(skips.length, 1, 'told once about the skip');
    assert.match(skips[0]!.body, /could not cover/);
    assert.equal(inbox.filter((n) => n.kind === 'purchase_succeeded').length, 29);

    const wallet = (await userBalances(world.ctx.db, user.userId)).wallet;
    // Nine runs' worth after the first, then thirty runs' worth of which nineteen were bought.
    assert.equal(wallet, costKobo * 11n);
    await assertLedgerOk(world);
  });
});

describe('a one-off run the wallet cannot cover', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(async () => {
    await world?.close();
  });

  it('is skipped, ends the schedule, charges nothing, and the notice says it has ended', async () => {
    let user = await buyer(world, 0);
    const made = await create(world, user, {
      service: 'airtime',
      order: { network: 'mtn', phone: mtn('5'), amount: 100 },
      startAt: fromNow(world, 60),
    });
    await advanceClock(world, 120);
    user = await refreshed(world, user);
    const after = await scheduleOf(world, user, made.id);
    assert.deepEqual([after.status, after.runs, after.skipsInRow], ['ended', 0, 1]);
    await runDomainEvents(world);
    const told = (await notificationsOf(world, user)).filter((n) => n.kind === 'schedule_skipped');
    assert.equal(told.length, 1);
    assert.match(told[0]!.body, /It was the last one, so the schedule has ended\./);
    assert.doesNotMatch(told[0]!.body, /next time/);
    assert.equal((await userBalances(world.ctx.db, user.userId)).wallet, 0n, 'nothing charged');
    await assertLedgerOk(world);
  });
});

describe('skips in a row', () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { SCHEDULE_SKIPS_MAX: '2' } });
  });
  after(async () => {
    await world?.close();
  });

  it('SCHEDULE_SKIPS_MAX skips in a row pause the schedule and say so', async () => {
    let user = await buyer(world, 0);
    const made = await create(world, user, {
      service: 'airtime',
      order: { network: 'mtn', phone: mtn('5'), amount: 100 },
      startAt: fromNow(world, 60),
      every: 'day',
    });
    await advanceClock(world, 120);
    user = await refreshed(world, user);
    assert.deepEqual(
      [(await scheduleOf(world, user, made.id)).skipsInRow, (await scheduleOf(world, user, made.id)).status],
      [1, 'active'],
    );
    await advanceClock(world, DAY);
    user = await refreshed(world, user);
    const paused = await scheduleOf(world, user, made.id);
    assert.deepEqual([paused.status, paused.skipsInRow, paused.runs], ['paused', 2, 0]);
    assert.match(paused.pausedReason ?? '', /could not cover 2 runs in a row/);
    await advanceClock(world, DAY);
    user = await refreshed(world, user);
    assert.equal((await scheduleOf(world, user, made.id)).skipsInRow, 2, 'a paused schedule does not run');

    await runDomainEvents(world);
    const told = (await notificationsOf(world, user)).filter((n) => n.kind === 'schedule_skipped');
    assert.equal(told.length, 2);
    assert.ok(told.some((n) => n.title === 'Scheduled purchase paused'));
    await until(async () => (await userBalances(world.ctx.db, user.userId)).wallet === 0n, 'nothing charged');
    await assertLedgerOk(world);
  });
});
