import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consumeOtp } from '../../src/auth/otp.ts';
import { hashKeys } from '../../src/shared/keyed-hash.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  readSms,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { advanceClock, e164, issuePaths, otherCode } from './support.ts';

// verifyOtp (API.md section 4): the SMS code signs in, creating the user on first sign-in. Codes
// live 5 minutes, allow 5 attempts and work once.

type UserView = {
  id: string;
  phone: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  kycTier: number;
  hasPin: boolean;
  referralCode: string;
  roles: string[];
};
type Session = { accessToken: string; refreshToken: string; expiresInSeconds: number; user: UserView };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('verifyOtp', () => {
  let world: World;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  /** Asks for a code and returns it as the phone received it. */
  async function codeFor(phone: string): Promise<string> {
    ok(await post(world, 'requestOtp', { phone }));
    return (await readSms(world, e164(phone))).code;
  }

  const referredBy = async (userId: string) =>
    (
      await world.ctx.db
        .selectFrom('users')
        .select('referred_by_code')
        .where('id', '=', userId)
        .executeTakeFirstOrThrow()
    ).referred_by_code;

  it('creates the user on first sign-in with tier 0, no PIN, a referral code and role user', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    const countBefore = await world.ctx.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('phone', '=', e164(phone))
      .executeTakeFirstOrThrow();
    assert.equal(Number(countBefore.n), 0);

    const session = ok(await post<Session>(world, 'verifyOtp', { phone, code }));
    assert.equal(session.expiresInSeconds, 900);
    assert.ok(session.accessToken.length >= 20);
    assert.ok(session.refreshToken.length >= 20);
    assert.notEqual(session.accessToken, session.refreshToken);
    assert.match(session.user.id, UUID);

    const me = ok(await get<UserView>(world, 'getMe', {}, { token: session.accessToken }));
    assert.deepEqual(me, {
      id: session.user.id,
      phone: e164(phone),
      email: null,
      emailVerified: false,
      firstName: null,
      lastName: null,
      nameVerified: false,
      kycTier: 0,
      hasPin: false,
      referralCode: me.referralCode,
      roles: ['user'],
      // API.md section 16: the default prices until an operator puts the user on a level.
      priceLevel: null,
      // API.md section 17.4: not frozen until an operator freezes the account.
      frozen: false,
      // API.md section 17.6: USSD is off until the person switches it on.
      ussdEnabled: false,
    });
    assert.match(me.referralCode, /^[A-Z2-9]{8}$/);
    assert.deepEqual(session.user, me);
    // The first sign-in also opens the user's wallet.
    const wallet = ok(await get(world, 'getWallet', {}, { token: session.accessToken }));
    assert.deepEqual(wallet, {
      balance: 0,
      lockedSavings: 0,
      lockedBonus: 0,
      checkinAccrued: 0,
      heldBalance: 0,
      currency: 'NGN',
    });
  });

  it('signs the same phone in again as the same user, with a second independent session', async () => {
    const phone = uniquePhone();
    const first = await signIn(world, phone);
    const second = await signInAgain(world, phone);
    assert.equal(second.userId, first.userId);
    assert.notEqual(second.accessToken, first.accessToken);
    const users = await world.ctx.db
      .selectFrom('users')
      .select('id')
      .where('phone', '=', e164(phone))
      .execute();
    assert.deepEqual(users, [{ id: first.userId }]);
    for (const session of [first, second]) {
      const me = ok(await get<UserView>(world, 'getMe', {}, { token: session.accessToken }));
      assert.equal(me.id, first.userId);
    }
  });

  it('refuses a wrong code with 401 and counts attemptsLeft down; after 5 even the right code fails', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    for (const attemptsLeft of [4, 3, 2, 1, 0]) {
      const error = failure(await post(world, 'verifyOtp', { phone, code: otherCode(code) }));
      assert.equal(error.status, 401);
      assert.equal(error.code, 'UNAUTHENTICATED');
      assert.deepEqual(error.details, { attemptsLeft });
    }
    const refused = failure(await post(world, 'verifyOtp', { phone, code }));
    assert.equal(refused.status, 401);
    assert.equal(refused.code, 'UNAUTHENTICATED');
    assert.deepEqual(refused.details, { attemptsLeft: 0 });
    const users = await world.ctx.db
      .selectFrom('users')
      .select('id')
      .where('phone', '=', e164(phone))
      .execute();
    assert.deepEqual(users, [], 'no user was created');

    // The lock-out is per code: a new code (after the 60 s resend interval) signs in.
    await advanceClock(world, 60);
    const fresh = await codeFor(phone);
    ok(await post(world, 'verifyOtp', { phone, code: fresh }));
  });

  it('lets 4 wrong attempts pass and still accepts the right code on the 5th', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    for (let i = 0; i < 4; i++) {
      assert.equal(failure(await post(world, 'verifyOtp', { phone, code: otherCode(code) })).status, 401);
    }
    ok(await post(world, 'verifyOtp', { phone, code }));
  });

  it('does not count malformed codes as attempts (400 at data.code)', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    for (const bad of ['12345', '1234567', 'abcdef', '', 123456]) {
      const error = failure(await post(world, 'verifyOtp', { phone, code: bad }));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(issuePaths(error.details).includes('data.code'), JSON.stringify(error.details));
    }
    const wrong = failure(await post(world, 'verifyOtp', { phone, code: otherCode(code) }));
    assert.deepEqual(wrong.details, { attemptsLeft: 4 });
  });

  it('refuses invalid phones and unknown fields with 400', async () => {
    const phone = failure(await post(world, 'verifyOtp', { phone: '+447911123456', code: '123456' }));
    assert.equal(phone.status, 400);
    assert.ok(issuePaths(phone.details).includes('data.phone'));
    const unknown = failure(
      await post(world, 'verifyOtp', { phone: uniquePhone(), code: '123456', role: 'admin' }),
    );
    assert.equal(unknown.status, 400);
    assert.equal(unknown.code, 'VALIDATION_ERROR');
  });

  it('refuses a code for a phone that never asked for one', async () => {
    const error = failure(await post(world, 'verifyOtp', { phone: uniquePhone(), code: '123456' }));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
  });

  it('accepts the code just before 5 minutes and refuses it after', async () => {
    const early = uniquePhone();
    const late = uniquePhone();
    const earlyCode = await codeFor(early);
    const lateCode = await codeFor(late);
    await advanceClock(world, 290);
    ok(await post(world, 'verifyOtp', { phone: early, code: earlyCode }));
    await advanceClock(world, 11);
    const error = failure(await post(world, 'verifyOtp', { phone: late, code: lateCode }));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
  });

  it('refuses the code after 301 s', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    await advanceClock(world, 301);
    const error = failure(await post(world, 'verifyOtp', { phone, code }));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
  });

  it('accepts a code once only', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    ok(await post(world, 'verifyOtp', { phone, code }));
    const error = failure(await post(world, 'verifyOtp', { phone, code }));
    assert.equal(error.status, 401);
    assert.equal(error.code, 'UNAUTHENTICATED');
  });

  it('accepts a code once only when 10 sign-ins with it race', async () => {
    const phone = uniquePhone();
    const code = await codeFor(phone);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post<Session>(world, 'verifyOtp', { phone, code })),
    );
    assert.equal(responses.filter((r) => r.status === 200).length, 1);
    assert.equal(responses.filter((r) => r.status === 401).length, 9);
    const sessions = await world.ctx.db
      .selectFrom('sessions')
      .innerJoin('users', 'users.id', 'sessions.user_id')
      .select('sessions.id')
      .where('users.phone', '=', e164(phone))
      .execute();
    assert.equal(sessions.length, 1);
  });

  it('consumes a code once when 10 checks of it overlap in the database', async () => {
    // Over HTTP the requests above are spread out by the server; calling the check directly puts
    // ten UPDATE/DELETE pairs on the pool at once, so only the DELETE's row count can pick one.
    const phone = uniquePhone();
    const code = await codeFor(phone);
    const deps = {
      db: world.ctx.db,
      clock: world.ctx.clock,
      pepper: hashKeys(world.ctx.config.secrets.pepper),
    };
    const results = await Promise.all(Array.from({ length: 10 }, () => consumeOtp(deps, e164(phone), code)));
    assert.equal(results.filter((r) => r.ok).length, 1, JSON.stringify(results));
  });

  describe('referralCode', () => {
    let referrer: SignedIn;
    let referrerCode: string;
    before(async () => {
      referrer = await signIn(world);
      referrerCode = ok(
        await get<UserView>(world, 'getMe', {}, { token: referrer.accessToken }),
      ).referralCode;
    });

    it("records another user's code for a new user", async () => {
      const newcomer = await signIn(world, uniquePhone(), { referralCode: referrerCode });
      assert.equal(await referredBy(newcomer.userId), referrerCode);
    });

    it('matches the code case-insensitively and ignores surrounding spaces', async () => {
      const newcomer = await signIn(world, uniquePhone(), {
        referralCode: ` ${referrerCode.toLowerCase()} `,
      });
      assert.equal(await referredBy(newcomer.userId), referrerCode);
    });

    it('refuses an unknown code on a first sign-in with 400 on referralCode, creates nobody, and keeps the SMS code usable', async () => {
      const phone = uniquePhone();
      const code = await codeFor(phone);
      // O, 0 and 1 are not in the referral alphabet, so this code can never exist.
      const refused = await post(world, 'verifyOtp', { phone, code, referralCode: 'NOSUCH01' });
      assert.equal(refused.status, 400);
      const error = failure(refused);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(issuePaths(error.details).includes('data.referralCode'), JSON.stringify(error.details));
      const users = await world.ctx.db
        .selectFrom('users')
        .select('id')
        .where('phone', '=', e164(phone))
        .execute();
      assert.equal(users.length, 0, 'nobody is created');
      // The person corrects the code and signs in with the same SMS: its use was rolled back.
      const signedIn = ok(
        await post<{ user: { id: string } }>(world, 'verifyOtp', { phone, code, referralCode: referrerCode }),
      );
      assert.equal(await referredBy(signedIn.user.id), referrerCode);
    });

    it('ignores any code on a later sign-in, even one that does not exist', async () => {
      const plain = await signIn(world);
      const again = await signInAgain(world, plain.phone, { referralCode: 'NOSUCH01' });
      assert.equal(again.userId, plain.userId);
      assert.equal(await referredBy(plain.userId), null);
    });

    it("never changes an existing user's referred_by_code", async () => {
      const other = await signIn(world);
      const otherCodeValue = ok(
        await get<UserView>(world, 'getMe', {}, { token: other.accessToken }),
      ).referralCode;
      // A user who signed up without a code cannot add one later.
      const plain = await signIn(world);
      await signInAgain(world, plain.phone, { referralCode: referrerCode });
      assert.equal(await referredBy(plain.userId), null);
      // A referred user cannot switch referrer.
      const referred = await signIn(world, uniquePhone(), { referralCode: referrerCode });
      const again = await signInAgain(world, referred.phone, { referralCode: otherCodeValue });
      assert.equal(again.userId, referred.userId);
      assert.equal(await referredBy(referred.userId), referrerCode);
    });

    it('does not let a user record their own code by signing in again', async () => {
      const me = await signIn(world);
      const myCode = ok(await get<UserView>(world, 'getMe', {}, { token: me.accessToken })).referralCode;
      await signInAgain(world, me.phone, { referralCode: myCode });
      assert.equal(await referredBy(me.userId), null);
    });
  });

  describe('ADMIN_PHONES', () => {
    it('gives the listed phone the roles user and admin', async () => {
      const admin = await signIn(world, adminPhone);
      const me = ok(await get<UserView>(world, 'getMe', {}, { token: admin.accessToken }));
      assert.deepEqual(me.roles, ['user', 'admin']);
      assert.equal(me.phone, e164(adminPhone));
    });

    it('recognises the admin whatever shape the phone is signed in with', async () => {
      const session = await signInAgain(world, e164(adminPhone));
      const me = ok(await get<UserView>(world, 'getMe', {}, { token: session.accessToken }));
      assert.deepEqual(me.roles, ['user', 'admin']);
    });

    it('gives every other phone the role user only', async () => {
      const someone = await signIn(world);
      const me = ok(await get<UserView>(world, 'getMe', {}, { token: someone.accessToken }));
      assert.deepEqual(me.roles, ['user']);
    });
  });
});
