import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  expectError,
  kycUser,
  matchingNin,
  submitTier1,
  submitTier2,
  submitTier3,
  type TierView,
  userAtTier,
} from './kyc-support.ts';

// A 409 CONFLICT from submitKycTier1/2/3 says which state refused it in `details.reason` (API.md
// section 7): the code alone cannot tell "this NIN is on another account" from "add your name
// first" or "this tier is already approved", and a person must be told which one it was.

describe(`KYC refusals name their reason (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const reasonOf = (response: Awaited<ReturnType<typeof submitTier2>>) =>
    expectError(response, 409, 'CONFLICT').details?.reason;

  it('Tier 2 without a first and last name: profile_name_missing', async () => {
    const user = await kycUser(world, null);
    assert.equal(ok(await submitTier1(world, user)).status, 'approved');
    assert.equal(reasonOf(await submitTier2(world, user)), 'profile_name_missing');
    // Once the names are there, the same submission goes through.
    ok(
      await post(world, 'updateProfile', { firstName: 'Ada', lastName: 'Obi' }, { token: user.accessToken }),
    );
    assert.equal(ok(await submitTier2(world, user)).status, 'approved');
  });

  it('the tier order comes before the missing name: 422 KYC_PREVIOUS_TIER_REQUIRED, not 409', async () => {
    const user = await kycUser(world, null);
    const tier2 = expectError(await submitTier2(world, user), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
    assert.deepEqual(tier2.details, { requiredTier: 1 });
    assert.equal(ok(await submitTier1(world, user)).status, 'approved');
    const tier3 = expectError(await submitTier3(world, user), 422, 'KYC_PREVIOUS_TIER_REQUIRED');
    assert.deepEqual(tier3.details, { requiredTier: 2 });
    // In its turn, the name is what refuses Tier 2.
    assert.equal(reasonOf(await submitTier2(world, user)), 'profile_name_missing');
  });

  it('an NIN held by another account: nin_in_use', async () => {
    const nin = matchingNin();
    const first = await userAtTier(world, 1);
    assert.equal(ok(await submitTier2(world, first, { nin })).status, 'approved');
    const second = await userAtTier(world, 1);
    assert.equal(reasonOf(await submitTier2(world, second, { nin })), 'nin_in_use');
  });

  it('a tier already approved or waiting for review: tier_approved, tier_pending', async () => {
    const user = await userAtTier(world, 2);
    assert.equal(reasonOf(await submitTier1(world, user)), 'tier_approved');
    assert.equal(reasonOf(await submitTier2(world, user)), 'tier_approved');
    assert.equal(ok(await submitTier3(world, user)).status, 'pending');
    assert.equal(reasonOf(await submitTier3(world, user)), 'tier_pending');
  });

  it('a face check already used: check_used', async () => {
    const user: SignedIn = await signIn(world);
    const { state } = ok(
      await get<{ state: string }>(world, 'getKycLivenessUrl', {}, { token: user.accessToken }),
    );
    const rejected = ok(
      await post<TierView>(
        world,
        'submitKycTier1',
        { livenessToken: 'sandbox-fail', state },
        { token: user.accessToken },
      ),
    );
    assert.equal(rejected.status, 'rejected');
    const again = await post<TierView>(
      world,
      'submitKycTier1',
      { livenessToken: 'sandbox-pass', state },
      { token: user.accessToken },
    );
    assert.equal(reasonOf(again), 'check_used');
  });
});
