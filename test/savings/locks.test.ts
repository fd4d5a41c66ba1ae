import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { systemAccounts } from '../../src/ledger/accounts.ts';
import { matureDueLocks } from '../../src/savings/maturity.ts';
import type { SavingsLockView } from '../../src/savings/service.ts';
import { advanceClock } from '../auth/support.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents } from '../helpers/domain-events.ts';
import { createWorld, failure, get, ok, post, signInAgain, type World } from '../helpers/world.ts';
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { balancesOf, breakCall, lock, lockCall, saver, systemBalance } from './support.ts';

const DAY = 86_400;

describe(`savings locks (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  describe('createSavingsLock', () => {
    it('debits the wallet into savings at once and returns the active lock', async () => {
      const user = await saver(world, 5_000);
      const before = world.ctx.clock.now().getTime();
      const created = await lock(world, user, 1_234.56, 30);
      assert.equal(created.status, 'active');
      assert.equal(created.amount, 1_234.56);
      assert.equal(created.days, 30);
      assert.equal(created.penalty, 0);
      assert.equal(created.closedAt, null);
      const createdAt = Date.parse(created.createdAt);
      assert.ok(createdAt >= before);
      assert.equal(Date.parse(created.maturesAt) - createdAt, 30 * DAY * 1000);
      const b = await balancesOf(world, user);
      assert.equal(b.wallet, 376_544n);
      assert.equal(b.savings, 123_456n);
      const wallet = ok(
        await get<Record<string, number>>(world, 'getWallet', {}, { token: user.accessToken }),
      );
      assert.equal(wallet.balance, 3_765.44);
      assert.equal(wallet.lockedSavings, 1_234.56);
      // The debit is in the wallet's history like every other movement.
      const history = ok(
        await get<{ items: Array<{ direction: string; amount: number; description: string }> }>(
          world,
          'listTransactions',
          {},
          { token: user.accessToken },
        ),
      );
      assert.deepEqual(
        { direction: history.items[0]!.direction, amount: history.items[0]!.amount },
        { direction: 'debit', amount: 1_234.56 },
      );
      assert.match(history.items[0]!.description, /savings lock/i);
      const events = (await publishedEvents(world, 'savings.lock_created')).filter(
        (e) => e.lockId === created.id,
      );
      assert.equal(events.length, 1);
      assert.equal(events[0]!.amountKobo, '123456');
      await assertLedgerOk(world);
    });

    it('refuses amounts and periods outside the limits with 422 and details.limit in its unit, moving nothing', async () => {
      const user = await saver(world, 5_000);
      // A period's limit is in days (details.unit says so, for a client to write "at least 7 days");
      // an amount's is naira, the limits' default unit, which carries no unit.
      const cases: Array<[number, number, string, number, string | undefined]> = [
        [99.99, 30, 'BELOW_MINIMUM', 100, undefined],
        [0, 30, 'BELOW_MINIMUM', 100, undefined],
        [10_000_000.01, 30, 'ABOVE_MAXIMUM', 10_000_000, undefined],
        [1e15, 30, 'ABOVE_MAXIMUM', 10_000_000, undefined],
        [100, 6, 'BELOW_MINIMUM', 7, 'days'],
        [100, 366, 'ABOVE_MAXIMUM', 365, 'days'],
        [100, -1, 'BELOW_MINIMUM', 7, 'days'],
      ];
      for (const [amount, days, code, limit, unit] of cases) {
        const error = expectError(await lockCall(world, user, amount, days), 422, code);
        assert.deepEqual(
          [error.details?.limit, error.details?.unit],
          [limit, unit],
          `${amount} for ${days} days`,
        );
      }
      const b = await balancesOf(world, user);
      assert.deepEqual([b.wallet, b.savings], [500_000n, 0n]);
    });

    it('refuses what is not naira or not whole days with 400 on the field', async () => {
      const user = await saver(world, 5_000);
      expectValidationAt(await lockCall(world, user, 100.001, 30), 'data.amount');
      expectValidationAt(await lockCall(world, user, -5, 30), 'data.amount');
      expectValidationAt(await lockCall(world, user, 100, 7.5), 'data.days');
      expectValidationAt(
        await post(world, 'createSavingsLock', { amount: '100', days: 30 }, { token: user.accessToken }),
        'data.amount',
      );
      expectError(
        await post(
          world,
          'createSavingsLock',
          { amount: 100, days: 30, goal: 'car' },
          { token: user.accessToken },
        ),
        400,
        'VALIDATION_ERROR',
      );
      assert.equal((await balancesOf(world, user)).savings, 0n);
    });

    it('refuses more than the wallet holds with 409 INSUFFICIENT_FUNDS and changes nothing', async () => {
      const user = await saver(world, 500);
      expectError(await lockCall(world, user, 500.01), 409, 'INSUFFICIENT_FUNDS');
      const page = ok(
        await get<{ total: number }>(world, 'listSavingsLocks', {}, { token: user.accessToken }),
      );
      assert.equal(page.total, 0, 'no lock row is left behind');
      const b = await balancesOf(world, user);
      assert.deepEqual([b.wallet, b.savings], [50_000n, 0n]);
      // Exactly the balance can be locked.
      await lock(world, user, 500);
      assert.equal((await balancesOf(world, user)).wallet, 0n);
    });

    it('replays the first answer for the same Idempotency-Key and locks once', async () => {
      const user = await saver(world, 1_000);
      const key = randomUUID();
      const call = () =>
        post<SavingsLockView>(
          world,
          'createSavingsLock',
          { amount: 300, days: 7 },
          {
            token: user.accessToken,
            idempotencyKey: key,
          },
        );
      const first = await call();
      const again = await call();
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(ok(again), ok(first));
      assert.equal((await balancesOf(world, user)).savings, 30_000n);
    });
  });

  describe('listSavingsLocks', () => {
    it('lists only the caller’s locks, newest first, paged and filtered by status', async () => {
      const user = await saver(world, 10_000);
      const other = await saver(world, 1_000);
      await lock(world, other, 100);
      const ids: string[] = [];
      for (const amount of [100, 200, 300, 400]) ids.push((await lock(world, user, amount)).id);
      ok(await breakCall(world, user, ids[1]!));
      const token = { token: user.accessToken };
      const all = ok(
        await get<{ items: SavingsLockView[]; total: number; limit: number; offset: number }>(
          world,
          'listSavingsLocks',
          {},
          token,
        ),
      );
      assert.deepEqual(
        all.items.map((l) => l.id),
        [...ids].reverse(),
      );
      assert.deepEqual([all.total, all.limit, all.offset], [4, 20, 0]);
      const page = ok(
        await get<{ items: SavingsLockView[]; total: number }>(
          world,
          'listSavingsLocks',
          { limit: 2, offset: 1 },
          token,
        ),
      );
      assert.deepEqual(
        page.items.map((l) => l.id),
        [ids[2], ids[1]],
      );
      assert.equal(page.total, 4);
      const broken = ok(
        await get<{ items: SavingsLockView[]; total: number }>(
          world,
          'listSavingsLocks',
          { status: 'broken' },
          token,
        ),
      );
      assert.deepEqual(
        broken.items.map((l) => l.id),
        [ids[1]],
      );
      assert.equal(broken.total, 1);
      expectValidationAt(await get(world, 'listSavingsLocks', { status: 'paused' }, token), 'query.status');
      expectValidationAt(await get(world, 'listSavingsLocks', { limit: 101 }, token), 'query.limit');
    });
  });

  describe('breakSavingsLock', () => {
    it('credits the amount less the penalty (5 %, rounded down to the kobo) and the penalty to revenue', async () => {
      const cases: Array<[number, number]> = [
        // amount, penalty in naira
        [1_000, 50],
        [100.19, 5], // 5.0095 → 5.00
        [333.33, 16.66], // 16.6665 → 16.66
        [100.39, 5.01], // 5.0195 → 5.01
      ];
      for (const [amount, penalty] of cases) {
        const user = await saver(world, amount);
        const revenueBefore = await systemBalance(world, systemAccounts.revenuePenalty);
        const created = await lock(world, user, amount);
        const result = ok(await breakCall(world, user, created.id));
        assert.equal(result.penalty, penalty, `penalty of ${amount}`);
        assert.equal(result.refunded, Number((amount - penalty).toFixed(2)));
        assert.equal(result.lock.status, 'broken');
        assert.equal(result.lock.penalty, penalty);
        assert.ok(result.lock.closedAt !== null);
        const b = await balancesOf(world, user);
        assert.equal(b.savings, 0n);
        assert.equal(b.wallet, BigInt(Math.round(result.refunded * 100)));
        assert.equal(
          (await systemBalance(world, systemAccounts.revenuePenalty)) - revenueBefore,
          BigInt(Math.round(penalty * 100)),
        );
      }
      await assertLedgerOk(world);
    });

    it('is 409 CONFLICT for a lock that is no longer active, 404 for another user’s or an unknown lock', async () => {
      const user = await saver(world, 1_000);
      const other = await saver(world, 0);
      const created = await lock(world, user, 500);
      expectError(await breakCall(world, other, created.id), 404, 'NOT_FOUND');
      expectError(await breakCall(world, user, randomUUID()), 404, 'NOT_FOUND');
      expectValidationAt(await breakCall(world, user, 'not-a-lock'), 'data.lockId');
      ok(await breakCall(world, user, created.id));
      const walletAfterBreak = (await balancesOf(world, user)).wallet;
      const again = expectError(await breakCall(world, user, created.id), 409, 'CONFLICT');
      assert.match(again.message, /broken/);
      assert.equal((await balancesOf(world, user)).wallet, walletAfterBreak, 'nothing moves twice');
      const events = (await publishedEvents(world, 'savings.lock_broken')).filter(
        (e) => e.lockId === created.id,
      );
      assert.equal(events.length, 1);
      assert.deepEqual([events[0]!.refundedKobo, events[0]!.penaltyKobo], ['47500', '2500']);
    });
  });

  describe('maturity', () => {
    it('credits the whole amount back at maturesAt, once, driven by the sandbox clock', async () => {
      const user = await saver(world, 3_000);
      const week = await lock(world, user, 1_000, 7);
      const month = await lock(world, user, 1_500, 30);
      // A second before maturity nothing moves.
      await advanceClock(world, 7 * DAY - 1);
      assert.equal((await balancesOf(world, user)).wallet, 50_000n);
      await advanceClock(world, 1);
      const b = await balancesOf(world, user);
      assert.deepEqual([b.wallet, b.savings], [150_000n, 150_000n]);
      // The job running again (the cron, another worker) moves nothing more.
      assert.deepEqual(await matureDueLocks(world.ctx), { matured: 0 });
      await advanceClock(world, 60);
      assert.equal((await balancesOf(world, user)).wallet, 150_000n);

      const token = { token: (await signInAgain(world, user.phone)).accessToken };
      const locks = ok(await get<{ items: SavingsLockView[] }>(world, 'listSavingsLocks', {}, token)).items;
      const matured = locks.find((l) => l.id === week.id)!;
      assert.equal(matured.status, 'matured');
      assert.equal(matured.penalty, 0);
      assert.ok(Date.parse(matured.closedAt!) >= Date.parse(matured.maturesAt));
      assert.equal(locks.find((l) => l.id === month.id)!.status, 'active');
      // A matured lock cannot be broken.
      expectError(await post(world, 'breakSavingsLock', { lockId: week.id }, token), 409, 'CONFLICT');
      const events = (await publishedEvents(world, 'savings.lock_matured')).filter(
        (e) => e.lockId === week.id,
      );
      assert.deepEqual(
        events.map((e) => e.amountKobo),
        ['100000'],
      );
      await assertLedgerOk(world);
    });
    it('matures, whole and without penalty, a due lock that is broken before the job reaches it', async () => {
      const user = await saver(world, 700);
      const created = await lock(world, user, 700, 7);
      // Due, but the job has not run: the clock moves without running jobs.
      world.ctx.sandboxClock!.advance(7 * DAY);
      const signedIn = await signInAgain(world, user.phone);
      const result = ok(await breakCall(world, signedIn, created.id));
      assert.deepEqual([result.lock.status, result.penalty, result.refunded], ['matured', 0, 700]);
      assert.equal((await balancesOf(world, user)).wallet, 70_000n);
      await matureDueLocks(world.ctx);
      assert.equal((await balancesOf(world, user)).wallet, 70_000n, 'the job does not credit it again');
      const events = (await publishedEvents(world, 'savings.lock_matured')).filter(
        (e) => e.lockId === created.id,
      );
      assert.equal(events.length, 1);
    });
  });

  it('has no savings goals, plan catalogue or interest: /openapi.json lists none (SPEC.md item 11)', async () => {
    const document = (await (await fetch(`${world.baseUrl}/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    const names = Object.keys(document.paths).map((p) => p.replace('/_serverFn/', ''));
    assert.ok(names.includes('createSavingsLock'), 'the savings operations are listed');
    const forbidden = names.filter((name) => /goal|interest|savingsplan|plancatalog|accru/i.test(name));
    assert.deepEqual(forbidden, []);
    // Nor does any savings or growth shape carry such a field.
    const text = JSON.stringify(document.paths);
    assert.doesNotMatch(text, /"(goal|goals|interest|interestRate|apy|apr|plans?Catalog(ue)?)"/i);
    const failed = failure(await get(world, 'listSavingsPlans', {}));
    assert.equal(failed.status, 404);
  });
});
