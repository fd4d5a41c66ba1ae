import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  readSms,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

describe('sign-in', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('creates the user on first sign-in and returns working tokens', async () => {
    const me = await signIn(world);
    const profile = ok(
      await get<{ phone: string; kycTier: number; hasPin: boolean }>(
        world,
        'getMe',
        {},
        { token: me.accessToken },
      ),
    );
    assert.equal(profile.phone, `+234${me.phone.slice(1)}`);
    assert.equal(profile.kycTier, 0);
    assert.equal(profile.hasPin, false);
    const wallet = ok(
      await get<{ balance: number; currency: string }>(world, 'getWallet', {}, { token: me.accessToken }),
    );
    assert.deepEqual(wallet, {
      balance: 0,
      lockedSavings: 0,
      lockedBonus: 0,
      checkinAccrued: 0,
      currency: 'NGN',
    });
  });

  it('refuses a wrong code with 401 and counts the attempt', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, phone);
    const wrong = code === '000000' ? '111111' : '000000';
    const error = failure(await post(world, 'verifyOtp', { phone, code: wrong }));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
    assert.deepEqual(error.details, { attemptsLeft: 4 });
  });
});
