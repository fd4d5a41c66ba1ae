import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createSharedPinReads, verifyTransactionPin } from '../../src/auth/pin.ts';
import { systemClock } from '../../src/clock.ts';
import { openDatabase } from '../../src/db/database.ts';
import { AppError } from '../../src/errors.ts';
import { hashKeys } from '../../src/shared/keyed-hash.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  passOtpResendWindow,
  post,
  readSms,
  type SignedIn,
  signIn,
  type World,
} from '../helpers/world.ts';
import { advanceClock, e164, issuePaths, otherCode } from './support.ts';

// setTransactionPin over HTTP, and the PIN check (verifyTransactionPin) that purchases call: five
// wrong in a row lock the PIN for 30 minutes, counted per user in the database.

type PinResult = 'ok' | { code: string; details: Record<string, unknown> | undefined };

describe('transaction PIN', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const deps = () => ({
    db: world.ctx.db,
    clock: world.ctx.clock,
    pepper: hashKeys(world.ctx.config.secrets.pepper),
    sharedPinReads: world.ctx.modules.auth.api.sharedPinReads,
  });

  /** The outcome of one PIN check: 'ok', or the AppError's code and details. */
  async function check(userId: string, pin: string, using = deps()): Promise<PinResult> {
    try {
      await verifyTransactionPin(using, userId, pin);
      return 'ok';
    } catch (error) {
      assert.ok(error instanceof AppError, `expected an AppError, got ${String(error)}`);
      return { code: error.code, details: error.details };
    }
  }

  const setPin = (me: SignedIn, data: Record<string, unknown>) =>
    post<{ hasPin: boolean }>(world, 'setTransactionPin', data, { token: me.accessToken });
  const hasPin = async (me: SignedIn) =>
    ok(await get<{ hasPin: boolean }>(world, 'getMe', {}, { token: me.accessToken })).hasPin;
  const pinState = (userId: string) =>
    world.ctx.db
      .selectFrom('users')
      .select(['pin_hash', 'pin_failed_count', 'pin_locked_until'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();

  /** A signed-in user whose PIN is 1234. */
  async function userWithPin(): Promise<SignedIn> {
    const me = await signIn(world);
    assert.deepEqual(ok(await setPin(me, { pin: '1234' })), { hasPin: true });
    return me;
  }

  /** Asks for a fresh OTP for the caller's own phone, as the app does before a PIN change. */
  async function freshOtp(me: SignedIn): Promise<string> {
    // The sign-in used up its code but keeps the 60 s resend window closed: a minute later.
    passOtpResendWindow(world);
    ok(await post(world, 'requestOtp', { phone: me.phone }));
    return (await readSms(world, e164(me.phone))).code;
  }

  describe('setTransactionPin', () => {
    it('sets the first PIN without an OTP', async () => {
      const me = await signIn(world);
      assert.equal(await hasPin(me), false);
      assert.deepEqual(ok(await setPin(me, { pin: '4821' })), { hasPin: true });
      assert.equal(await hasPin(me), true);
      assert.equal(await check(me.userId, '4821'), 'ok');
    });

    for (const pin of ['123', '12345', 'abcd', '12a4', ' 1234', '', 1234]) {
      it(`refuses the PIN ${JSON.stringify(pin)} with 400 at data.pin`, async () => {
        const me = await signIn(world);
        const error = failure(await setPin(me, { pin }));
        assert.equal(error.status, 400);
        assert.equal(error.code, 'VALIDATION_ERROR');
        assert.ok(issuePaths(error.details).includes('data.pin'), JSON.stringify(error.details));
        assert.equal(await hasPin(me), false);
      });
    }

    it('refuses unknown fields and needs a bearer token', async () => {
      const me = await signIn(world);
      const unknown = failure(await setPin(me, { pin: '1234', userId: me.userId }));
      assert.equal(unknown.status, 400);
      assert.equal(unknown.code, 'VALIDATION_ERROR');
      const anonymous = failure(await post(world, 'setTransactionPin', { pin: '1234' }));
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.code, 'UNAUTHENTICATED');
      assert.equal(await hasPin(me), false);
    });

    it('needs otpCode to change an existing PIN (400 at data.otpCode)', async () => {
      const me = await userWithPin();
      const error = failure(await setPin(me, { pin: '5678' }));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.deepEqual(issuePaths(error.details), ['data.otpCode']);
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it('refuses a malformed otpCode with 400 at data.otpCode', async () => {
      const me = await userWithPin();
      const error = failure(await setPin(me, { pin: '5678', otpCode: '12' }));
      assert.equal(error.status, 400);
      assert.ok(issuePaths(error.details).includes('data.otpCode'));
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it('refuses a wrong otpCode with 403 FORBIDDEN and keeps the old PIN', async () => {
      const me = await userWithPin();
      const code = await freshOtp(me);
      const error = failure(await setPin(me, { pin: '5678', otpCode: otherCode(code) }));
      assert.equal(error.status, 403);
      assert.equal(error.code, 'FORBIDDEN');
      assert.equal(await check(me.userId, '1234'), 'ok');
      assert.deepEqual(await check(me.userId, '5678'), {
        code: 'INVALID_PIN',
        details: { attemptsLeft: 4 },
      });
    });

    it('refuses an otpCode when none was requested (the sign-in code is used up)', async () => {
      const me = await userWithPin();
      const error = failure(await setPin(me, { pin: '5678', otpCode: '123456' }));
      assert.equal(error.status, 403);
      assert.equal(error.code, 'FORBIDDEN');
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it('changes the PIN with a fresh right OTP; only the new PIN is accepted', async () => {
      const me = await userWithPin();
      const code = await freshOtp(me);
      assert.deepEqual(ok(await setPin(me, { pin: '5678', otpCode: code })), { hasPin: true });
      assert.equal(await check(me.userId, '5678'), 'ok');
      assert.deepEqual(await check(me.userId, '1234'), {
        code: 'INVALID_PIN',
        details: { attemptsLeft: 4 },
      });
      // The OTP was used up by the change.
      const again = failure(await setPin(me, { pin: '9999', otpCode: code }));
      assert.equal(again.status, 403);
      assert.equal(await check(me.userId, '5678'), 'ok');
    });

    it("refuses another user's OTP", async () => {
      const me = await userWithPin();
      const someoneElse = await signIn(world);
      const theirCode = await freshOtp(someoneElse);
      const error = failure(await setPin(me, { pin: '5678', otpCode: theirCode }));
      assert.equal(error.status, 403);
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it('stores the PIN only as a hash, different for two users with the same PIN', async () => {
      const alice = await userWithPin();
      const bob = await userWithPin();
      const a = await pinState(alice.userId);
      const b = await pinState(bob.userId);
      assert.ok(a.pin_hash !== null && b.pin_hash !== null);
      assert.notEqual(a.pin_hash, '1234');
      // The current pepper's version, then the HMAC (decision 0035).
      assert.match(a.pin_hash, /^[0-9a-f]{8}\.[0-9a-f]{64}$/);
      assert.notEqual(a.pin_hash, b.pin_hash);
    });
  });

  describe('verifyTransactionPin', () => {
    it('answers PIN_NOT_SET before a PIN is set', async () => {
      const me = await signIn(world);
      assert.deepEqual(await check(me.userId, '1234'), { code: 'PIN_NOT_SET', details: undefined });
    });

    it('accepts the right PIN', async () => {
      const me = await userWithPin();
      assert.equal(await check(me.userId, '1234'), 'ok');
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it('counts wrong PINs down 4, 3, 2, 1, then locks for 30 minutes', async () => {
      const me = await userWithPin();
      for (const attemptsLeft of [4, 3, 2, 1]) {
        assert.deepEqual(await check(me.userId, '0000'), { code: 'INVALID_PIN', details: { attemptsLeft } });
      }
      const locked = await check(me.userId, '0000');
      assert.ok(locked !== 'ok');
      assert.equal(locked.code, 'PIN_LOCKED');
      const retryAfterSeconds = locked.details?.retryAfterSeconds as number;
      assert.ok(
        retryAfterSeconds > 1790 && retryAfterSeconds <= 1800,
        `retryAfterSeconds ${retryAfterSeconds}`,
      );

      // The lock is in the database, 30 minutes ahead of the service's clock.
      const state = await pinState(me.userId);
      assert.ok(state.pin_locked_until !== null, 'users.pin_locked_until is set');
      const aheadSeconds = (state.pin_locked_until.getTime() - world.ctx.clock.now().getTime()) / 1000;
      assert.ok(aheadSeconds > 1790 && aheadSeconds <= 1800, `locked for ${aheadSeconds} s`);

      // While locked, even the right PIN is refused.
      const right = await check(me.userId, '1234');
      assert.ok(right !== 'ok');
      assert.equal(right.code, 'PIN_LOCKED');
      assert.ok((right.details?.retryAfterSeconds as number) <= retryAfterSeconds);
    });

    it('unlocks after 30 minutes of the sandbox clock, with a fresh count', async () => {
      const me = await userWithPin();
      for (let i = 0; i < 5; i++) await check(me.userId, '0000');
      await advanceClock(world, 29 * 60);
      assert.equal((await check(me.userId, '1234')) === 'ok', false, 'still locked after 29 minutes');
      await advanceClock(world, 60);
      assert.equal(await check(me.userId, '1234'), 'ok');
      assert.deepEqual(await check(me.userId, '0000'), {
        code: 'INVALID_PIN',
        details: { attemptsLeft: 4 },
      });
      const state = await pinState(me.userId);
      assert.equal(state.pin_locked_until, null);
    });

    it('resets the count when the right PIN is entered', async () => {
      const me = await userWithPin();
      for (const attemptsLeft of [4, 3, 2]) {
        assert.deepEqual(await check(me.userId, '9999'), { code: 'INVALID_PIN', details: { attemptsLeft } });
      }
      assert.equal(await check(me.userId, '1234'), 'ok');
      assert.equal((await pinState(me.userId)).pin_failed_count, 0);
      // Four more wrong PINs do not lock, because the count started again.
      for (const attemptsLeft of [4, 3, 2, 1]) {
        assert.deepEqual(await check(me.userId, '9999'), { code: 'INVALID_PIN', details: { attemptsLeft } });
      }
      assert.equal(await check(me.userId, '1234'), 'ok');
    });

    it("counts per user: one user's lock does not touch another's PIN", async () => {
      const locked = await userWithPin();
      const other = await userWithPin();
      for (let i = 0; i < 5; i++) await check(locked.userId, '0000');
      assert.equal(await check(other.userId, '1234'), 'ok');
    });

    it('gives exactly 4 INVALID_PIN and 16 PIN_LOCKED for 20 concurrent wrong PINs', async () => {
      const me = await userWithPin();
      const results = await Promise.all(Array.from({ length: 20 }, () => check(me.userId, '0000')));
      const codes = results.map((r) => (r === 'ok' ? 'ok' : r.code));
      assert.equal(codes.filter((c) => c === 'INVALID_PIN').length, 4, codes.join(','));
      assert.equal(codes.filter((c) => c === 'PIN_LOCKED').length, 16, codes.join(','));
      const attemptsLeft = results
        .filter((r) => r !== 'ok' && r.code === 'INVALID_PIN')
        .map((r) => (r === 'ok' ? -1 : r.details?.attemptsLeft))
        .sort();
      assert.deepEqual(attemptsLeft, [1, 2, 3, 4]);
      assert.notEqual((await pinState(me.userId)).pin_locked_until, null);
      const right = await check(me.userId, '1234');
      assert.ok(right !== 'ok' && right.code === 'PIN_LOCKED');
    });

    it('keeps the lock in the database, where a second connection (a restarted service) sees it', {
      skip: onPostgres() ? false : 'needs DATABASE_URL: PGlite here is one in-memory connection',
    }, async () => {
      const me = await userWithPin();
      for (let i = 0; i < 5; i++) await check(me.userId, '0000');
      const url = world.ctx.database.url;
      assert.ok(url !== undefined);
      // A new connection pool and a fresh clock, sharing nothing with the world but the database.
      const restarted = await openDatabase({ kind: 'postgres', url, poolMax: 2 });
      try {
        const using = {
          db: restarted.db,
          clock: systemClock,
          pepper: hashKeys(world.ctx.config.secrets.pepper),
          sharedPinReads: createSharedPinReads(restarted.db, restarted.batching),
        };
        const right = await check(me.userId, '1234', using);
        assert.ok(right !== 'ok' && right.code === 'PIN_LOCKED', JSON.stringify(right));
      } finally {
        await restarted.close();
      }
    });
  });
});
