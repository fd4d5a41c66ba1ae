import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { UserView } from '../../src/auth/users.ts';
import { dispatchEventJob } from '../../src/events/domain-events.ts';
import { qualifyInvitee } from '../../src/growth/referral.ts';
import { assertLedgerOk } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { publishedEvents, runDomainEvents } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { submitTier1, userAtTier } from '../kyc/kyc-support.ts';
import { balancesOf } from '../savings/support.ts';

// Referral: an invitee signs in the first time with a referrer's code; when the invitee's Tier 1 is
// approved, the referrer's locked bonus grows by REFERRAL_BONUS (₦200), once per invitee, and it
// is never spendable.

type Status = {
  referralCode: string;
  invitees: Array<{ name: string; joinedAt: string; qualified: boolean }>;
  lockedBonus: number;
};

describe(`referral (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const status = async (user: SignedIn) =>
    ok(await get<Status>(world, 'getMyReferralStatus', {}, { token: user.accessToken }));
  const codeOf = async (user: SignedIn) =>
    ok(await get<UserView>(world, 'getMe', {}, { token: user.accessToken })).referralCode;
  const nameProfile = async (user: SignedIn, firstName: string, lastName: string) =>
    ok(await post(world, 'updateProfile', { firstName, lastName }, { token: user.accessToken }));
  const invite = async (referrer: SignedIn) =>
    signIn(world, uniquePhone(), { referralCode: (await codeOf(referrer)).toLowerCase() });

  it('lists invitees, masked, and grows the locked bonus once when an invitee’s Tier 1 is approved', async () => {
    const referrer = await signIn(world);
    const invitee = await invite(referrer);
    const before = await status(referrer);
    assert.equal(before.referralCode, await codeOf(referrer));
    assert.equal(before.lockedBonus, 0);
    assert.equal(before.invitees.length, 1);
    // No name on the profile yet: the phone, its middle hidden.
    assert.match(before.invitees[0]!.name, /^0803\*{4}\d{3}$/);
    assert.equal(before.invitees[0]!.qualified, false);

    await nameProfile(invitee, 'Adaeze', 'okafor');
    await userAtTier(world, 1, invitee);
    await runDomainEvents(world);

    const after = await status(referrer);
    assert.deepEqual(after.invitees, [
      { name: 'Adaeze O.', joinedAt: before.invitees[0]!.joinedAt, qualified: true },
    ]);
    assert.equal(after.lockedBonus, 200);
    const b = await balancesOf(world, referrer);
    assert.deepEqual([b.bonus_locked, b.wallet], [20_000n, 0n]);
    const wallet = ok(
      await get<Record<string, number>>(world, 'getWallet', {}, { token: referrer.accessToken }),
    );
    assert.deepEqual([wallet.balance, wallet.lockedBonus], [0, 200], 'the bonus is never part of balance');
    const events = (await publishedEvents(world, 'growth.referral_qualified')).filter(
      (e) => e.inviteeId === invitee.userId,
    );
    assert.deepEqual(
      events.map((e) => [e.userId, e.bonusKobo]),
      [[referrer.userId, '20000']],
    );
    // The invitee gets nothing for being invited.
    assert.equal((await balancesOf(world, invitee)).bonus_locked, 0n);
    await assertLedgerOk(world);
  });

  it('grants the bonus once per invitee when the approval event runs again and concurrently', async () => {
    const referrer = await signIn(world);
    const invitee = await invite(referrer);
    await userAtTier(world, 1, invitee);
    const approved = (await publishedEvents(world, 'kyc.tier_approved')).find(
      (e) => e.userId === invitee.userId,
    )!;
    // The event job running twice, and ten workers at once.
    await dispatchEventJob(world.ctx.events, approved);
    const deps = {
      db: world.ctx.db,
      clock: world.ctx.clock,
      jobs: world.ctx.jobs,
      bonusKobo: world.ctx.config.growth.referralBonusKobo,
      users: world.ctx.modules.auth.api,
    };
    const granted = await Promise.all(Array.from({ length: 10 }, () => qualifyInvitee(deps, invitee.userId)));
    assert.equal(granted.filter(Boolean).length, 0, 'the first dispatch granted it');
    await dispatchEventJob(world.ctx.events, { events: [approved, approved] });
    assert.equal((await balancesOf(world, referrer)).bonus_locked, 20_000n);

    // Ten concurrent grants for a fresh invitee: one.
    const second = await invite(referrer);
    const results = await Promise.all(Array.from({ length: 10 }, () => qualifyInvitee(deps, second.userId)));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal((await balancesOf(world, referrer)).bonus_locked, 40_000n);
    await assertLedgerOk(world);
  });

  it('grants nothing for a user nobody invited, for a rejected Tier 1, or for tiers above 1', async () => {
    const lone = await userAtTier(world, 2);
    await runDomainEvents(world);
    const rows = await world.ctx.db
      .selectFrom('referral_bonuses')
      .select('invitee_id')
      .where('invitee_id', '=', lone.userId)
      .execute();
    assert.equal(rows.length, 0);

    const referrer = await signIn(world);
    const invitee = await invite(referrer);
    await nameProfile(invitee, 'Chidi', 'Eze');
    assert.equal(ok(await submitTier1(world, invitee, 'sandbox-fail')).status, 'rejected');
    await runDomainEvents(world);
    const after = await status(referrer);
    assert.deepEqual([after.invitees.map((i) => i.qualified), after.lockedBonus], [[false], 0]);
  });
});
