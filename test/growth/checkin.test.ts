import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemAccounts } from '../../src/ledger/accounts.ts';
import { advanceClock } from '../auth/support.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  type World,
} from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { balancesOf, systemBalance } from '../savings/support.ts';

// The daily check-in, driven by the sandbox clock. The service clock starts at 22:59:00 UTC, which is
// 23:59 in Lagos (West Africa Time, UTC+1 all year), a minute before a Lagos midnight.

type Status = { claimedToday: boolean; streak: number; accrued: number; reward: number; nextClaimAt: string };

const DAY = 86_400;
const start = Date.parse('2026-11-24T22:59:00.000Z');

function clockFrom(instant: number) {
  const offset = instant - Date.now();
  return { now: () => new Date(Date.now() + offset) };
}

describe(`daily check-in (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({ clock: clockFrom(start) });
  });
  after(() => world.close());

  const status = async (user: SignedIn) =>
    ok(await get<Status>(world, 'getCheckinStatus', {}, { token: user.accessToken }));
  const claim = (user: SignedIn) => post<Status>(world, 'claimCheckin', {}, { token: user.accessToken });
  const withdraw = (user: SignedIn) =>
    post<{ withdrawn: number; balance: number }>(world, 'withdrawCheckin', {}, { token: user.accessToken });

  it('counts 23:59 and 00:01 West Africa Time as two days: one claim each, the streak grows', async () => {
    const user = await signIn(world);
    const fresh = await status(user);
    assert.deepEqual(
      { ...fresh, nextClaimAt: undefined },
      { claimedToday: false, streak: 0, accrued: 0, reward: 10, nextClaimAt: undefined },
    );
    assert.ok(
      Math.abs(Date.parse(fresh.nextClaimAt) - world.ctx.clock.now().getTime()) < 5_000,
      'claimable now',
    );

    // 23:59 WAT (22:59 UTC) on the 24th.
    assert.equal(world.ctx.clock.now().toISOString().slice(0, 16), '2026-11-24T22:59');
    const first = ok(await claim(user));
    assert.deepEqual(first, {
      claimedToday: true,
      streak: 1,
      accrued: 10,
      reward: 10,
      // The next Lagos midnight: 00:00 WAT on the 25th.
      nextClaimAt: '2026-11-24T23:00:00.000Z',
    });
    expectError(await claim(user), 409, 'CONFLICT');

    // 00:01 WAT on the 25th (23:01 UTC on the 24th): a new Lagos day although the UTC date is the same.
    await advanceClock(world, 120);
    assert.equal(world.ctx.clock.now().toISOString().slice(0, 16), '2026-11-24T23:01');
    const before = await status(user);
    assert.deepEqual([before.claimedToday, before.streak], [false, 1], "yesterday's streak is still alive");
    const second = ok(await claim(user));
    assert.deepEqual(
      [second.streak, second.accrued, second.nextClaimAt],
      [2, 20, '2026-11-25T23:00:00.000Z'],
    );
    expectError(await claim(user), 409, 'CONFLICT');
    assert.equal((await balancesOf(world, user)).checkin_accrued, 2_000n);
    const claimed = (await publishedEvents(world, 'growth.checkin_claimed')).filter(
      (e) => e.userId === user.userId,
    );
    assert.deepEqual(
      claimed.map((e) => [e.day, e.streak, e.rewardKobo]),
      [
        ['2026-11-24', 1, '1000'],
        ['2026-11-25', 2, '1000'],
      ],
    );
  });

  it('starts the streak again at 1 after a day without a claim', async () => {
    let user = await signIn(world);
    ok(await claim(user));
    await advanceClock(world, DAY);
    user = await signInAgain(world, user.phone);
    assert.equal(ok(await claim(user)).streak, 2);
    // A whole Lagos day passes without a claim.
    await advanceClock(world, 2 * DAY);
    user = await signInAgain(world, user.phone);
    assert.deepEqual([(await status(user)).streak, (await status(user)).claimedToday], [0, false]);
    const after = ok(await claim(user));
    assert.deepEqual([after.streak, after.accrued], [1, 30]);
  });

  it('withdraws all accrued rewards into the wallet from the minimum, 422 BELOW_MINIMUM under it', async () => {
    let user = await signIn(world);
    const rewardsBefore = await systemBalance(world, systemAccounts.expenseRewards);
    for (let day = 1; day <= 9; day++) {
      ok(await claim(user));
      await advanceClock(world, DAY);
      user = await signInAgain(world, user.phone);
    }
    const below = expectError(await withdraw(user), 422, 'BELOW_MINIMUM');
    assert.equal(below.details?.limit, 100);
    assert.equal((await balancesOf(world, user)).checkin_accrued, 9_000n, 'nothing moved');
    ok(await claim(user));
    assert.deepEqual(ok(await withdraw(user)), { withdrawn: 100, balance: 100 });
    const b = await balancesOf(world, user);
    assert.deepEqual([b.wallet, b.checkin_accrued], [10_000n, 0n]);
    // The rewards came from expense_rewards, so the ledger check covers them.
    assert.equal(rewardsBefore - (await systemBalance(world, systemAccounts.expenseRewards)), 10_000n);
    expectError(await withdraw(user), 422, 'BELOW_MINIMUM');
    const wallet = ok(await get<Record<string, number>>(world, 'getWallet', {}, { token: user.accessToken }));
    assert.deepEqual([wallet.balance, wallet.checkinAccrued], [100, 0]);
    await assertLedgerOk(world);
  });

  it('20 concurrent claims make one; 5 concurrent withdrawals move the money once', async () => {
    let user = await signIn(world);
    const answers = await Promise.all(Array.from({ length: 20 }, () => claim(user)));
    assert.equal(answers.filter((a) => a.status === 200).length, 1);
    for (const answer of answers.filter((a) => a.status !== 200)) expectError(answer, 409, 'CONFLICT');
    assert.equal((await balancesOf(world, user)).checkin_accrued, 1_000n);
    for (let day = 1; day < 10; day++) {
      await advanceClock(world, DAY);
      user = await signInAgain(world, user.phone);
      ok(await claim(user));
    }
    const withdrawals = await Promise.all(Array.from({ length: 5 }, () => withdraw(user)));
    assert.equal(withdrawals.filter((a) => a.status === 200).length, 1);
    for (const answer of withdrawals.filter((a) => a.status !== 200))
      expectError(answer, 422, 'BELOW_MINIMUM');
    const b = await balancesOf(world, user);
    assert.deepEqual([b.wallet, b.checkin_accrued], [10_000n, 0n]);
    await assertLedgerOk(world);
  });
});
