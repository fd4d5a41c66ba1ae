import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consumeOtp, requestOtp } from '../../src/auth/otp.ts';
import { verifyTransactionPin } from '../../src/auth/pin.ts';
import { AppError } from '../../src/errors.ts';
import {
  type HashKeys,
  hashKeys,
  keyedHash,
  verifyHash,
  versionedHash,
} from '../../src/shared/keyed-hash.ts';
import { createWorld, ok, post, type SignedIn, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { expectError, matchingNin, submitTier2, userAtTier } from '../kyc/kyc-support.ts';
import { e164 } from './support.ts';

// Rotating SECRET_PEPPER (decision 0035): a service started with a new SECRET_PEPPER and the old one as
// SECRET_PEPPER_PREVIOUS accepts the PINs and codes hashed with either, and stores a PIN hashed with
// the old one (or with no key version, as before versions) again with the new one at its next right
// check, so that once every PIN has been used the previous pepper can go.

const previousPepper = 'the-pepper-before-the-rotation-0f3a9c';
const currentPepper = 'the-pepper-after-the-rotation-7be21d4';

describe('rotating SECRET_PEPPER', () => {
  let world: World;
  const previous = hashKeys(previousPepper);
  const current = hashKeys(currentPepper);
  before(async () => {
    world = await createWorld({
      env: { SECRET_PEPPER: currentPepper, SECRET_PEPPER_PREVIOUS: previousPepper },
    });
  });
  after(() => world.close());

  const pinOf = (userId: string) =>
    world.ctx.db
      .selectFrom('users')
      .select(['pin_hash', 'pin_failed_count'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
  const storePinHash = (userId: string, pinHash: string) =>
    world.ctx.db.updateTable('users').set({ pin_hash: pinHash }).where('id', '=', userId).execute();

  /** A signed-in user whose PIN 1234 is stored as `pinHash` makes it from the user's id. */
  async function userWithStoredPin(pinHash: (userId: string) => string): Promise<SignedIn> {
    const me = await signIn(world);
    ok(await post(world, 'setTransactionPin', { pin: '1234' }, { token: me.accessToken }));
    await storePinHash(me.userId, pinHash(me.userId));
    return me;
  }

  /** The service's own check (auth's api, as a purchase makes it): 'ok' or the error's code. */
  async function check(userId: string, pin: string): Promise<string> {
    try {
      await world.ctx.modules.auth.api.verifyTransactionPin(userId, pin);
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof AppError, String(error));
      return error.code;
    }
  }

  /** The same check by a service that has only `keys` (the rotation over, or never begun). */
  async function checkWith(keys: HashKeys, userId: string, pin: string): Promise<string> {
    const deps = {
      db: world.ctx.db,
      clock: world.ctx.clock,
      pepper: keys,
      sharedPinReads: world.ctx.modules.auth.api.sharedPinReads,
    };
    try {
      await verifyTransactionPin(deps, userId, pin);
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof AppError, String(error));
      return error.code;
    }
  }

  it('stores a new PIN with the current key, named by its version', async () => {
    const me = await signIn(world);
    ok(await post(world, 'setTransactionPin', { pin: '1234' }, { token: me.accessToken }));
    const stored = (await pinOf(me.userId)).pin_hash;
    assert.equal(stored, versionedHash(current, 'pin', me.userId, '1234'));
    assert.match(stored ?? '', new RegExp(`^${current.current.version}\\.[0-9a-f]{64}$`));
    assert.equal(await check(me.userId, '1234'), 'ok');
    assert.equal((await pinOf(me.userId)).pin_hash, stored, 'a current hash is not written again');
  });

  for (const [made, pepper] of [
    ['the previous pepper', previousPepper],
    ['the current pepper', currentPepper],
  ] as const) {
    it(`verifies a PIN hashed before versions with ${made}, and stores it again with the current key`, async () => {
      const me = await userWithStoredPin((userId) => keyedHash(pepper, 'pin', userId, '1234'));
      assert.equal(await check(me.userId, '1234'), 'ok');
      assert.equal((await pinOf(me.userId)).pin_hash, versionedHash(current, 'pin', me.userId, '1234'));
      // Now the current key alone verifies it: the previous pepper can go.
      assert.equal(await checkWith(current, me.userId, '1234'), 'ok');
    });
  }

  it('verifies a PIN hashed with the previous key, and stores it again with the current one', async () => {
    const me = await userWithStoredPin((userId) => versionedHash(previous, 'pin', userId, '1234'));
    assert.equal(await check(me.userId, '1234'), 'ok');
    assert.equal((await pinOf(me.userId)).pin_hash, versionedHash(current, 'pin', me.userId, '1234'));
    assert.equal(await checkWith(current, me.userId, '1234'), 'ok');
  });

  it('counts a wrong PIN against an old hash, and leaves the hash as it was', async () => {
    const oldHash = (userId: string) => versionedHash(previous, 'pin', userId, '1234');
    const me = await userWithStoredPin(oldHash);
    assert.equal(await check(me.userId, '4321'), 'INVALID_PIN');
    assert.deepEqual(await pinOf(me.userId), { pin_hash: oldHash(me.userId), pin_failed_count: 1 });
  });

  it('refuses, once the previous pepper is gone, a PIN still hashed with it', async () => {
    const me = await userWithStoredPin((userId) => versionedHash(previous, 'pin', userId, '1234'));
    assert.equal(await checkWith(current, me.userId, '1234'), 'INVALID_PIN');
    assert.equal((await pinOf(me.userId)).pin_failed_count, 1);
  });

  for (const [what, stored] of [
    [
      'a hash naming an unknown key version',
      (userId: string) => `0badc0de.${keyedHash('another-pepper', 'pin', userId, '1234')}`,
    ],
    ['a hash of no known shape', () => 'not-a-hash'],
  ] as const) {
    it(`refuses ${what} cleanly: a wrong PIN, counted, never a crash`, async () => {
      const me = await userWithStoredPin(stored);
      assert.equal(await check(me.userId, '1234'), 'INVALID_PIN');
      assert.deepEqual(await pinOf(me.userId), { pin_hash: stored(me.userId), pin_failed_count: 1 });
    });
  }

  it('refuses, during the rotation, a NIN approved on another account under the previous pepper', async () => {
    const nin = matchingNin();
    const first = await userAtTier(world, 1);
    assert.equal((await submitTier2(world, first, { nin })).status, 200);
    // As a NIN approved before the rotation is held: its fingerprint under the previous pepper.
    await world.ctx.db
      .updateTable('kyc_submissions')
      .set({ nin_hash: keyedHash(previousPepper, 'nin', 'NG', nin) })
      .where('user_id', '=', first.userId)
      .where('tier', '=', 2)
      .execute();
    const second = await userAtTier(world, 1);
    expectError(await submitTier2(world, second, { nin }), 409, 'CONFLICT');
  });

  it('accepts a sign-in code hashed with the previous key', async () => {
    const phone = e164(uniquePhone());
    let text = '';
    const deps = {
      db: world.ctx.db,
      clock: world.ctx.clock,
      sms: {
        send: async (_to: string, message: string) => {
          text = message;
        },
      },
    };
    await requestOtp({ ...deps, pepper: previous }, phone);
    const code = /\b(\d{6})\b/.exec(text)?.[1];
    assert.ok(code !== undefined, text);
    assert.deepEqual(await consumeOtp({ ...deps, pepper: current }, phone, code), {
      ok: false,
      attemptsLeft: 4,
    });
    assert.deepEqual(
      await consumeOtp({ ...deps, pepper: hashKeys(currentPepper, previousPepper) }, phone, code),
      {
        ok: true,
      },
    );
  });
});

describe('verifyHash', () => {
  const keys = hashKeys('a-current-pepper-of-some-length', 'a-previous-pepper-of-some-length');
  const alone = hashKeys('a-current-pepper-of-some-length');

  it('names each key by 8 hex digits of its own, not the key', () => {
    assert.match(keys.current.version, /^[0-9a-f]{8}$/);
    assert.notEqual(keys.current.version, keys.previous?.version);
    assert.equal(alone.current.version, keys.current.version);
    assert.equal(hashKeys('same-pepper-twice-over', 'same-pepper-twice-over').previous, undefined);
  });

  it('tells current, stale and mismatch apart', () => {
    const made = versionedHash(keys, 'pin', 'user', '1234');
    assert.equal(verifyHash(keys, made, 'pin', 'user', '1234'), 'current');
    assert.equal(verifyHash(keys, made, 'pin', 'user', '1235'), 'mismatch');
    assert.equal(verifyHash(keys, made, 'pin', 'another user', '1234'), 'mismatch');
    assert.equal(verifyHash(keys, made, 'otp', 'user', '1234'), 'mismatch');
    const before = versionedHash(hashKeys('a-previous-pepper-of-some-length'), 'pin', 'user', '1234');
    assert.equal(verifyHash(keys, before, 'pin', 'user', '1234'), 'stale');
    assert.equal(verifyHash(alone, before, 'pin', 'user', '1234'), 'mismatch');
    const unversioned = keyedHash('a-previous-pepper-of-some-length', 'pin', 'user', '1234');
    assert.equal(verifyHash(keys, unversioned, 'pin', 'user', '1234'), 'stale');
    assert.equal(verifyHash(keys, `${unversioned}0`, 'pin', 'user', '1234'), 'mismatch');
    assert.equal(verifyHash(keys, 'used', 'pin', 'user', '1234'), 'mismatch');
    assert.equal(verifyHash(keys, `${keys.current.version}.`, 'pin', 'user', '1234'), 'mismatch');
  });
});
