import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWorld, failure, get, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { e164, issuePaths } from './support.ts';

// getMe and updateProfile (API.md section 4).

type UserView = {
  id: string;
  phone: string;
  email: string | null;
  firstName: string | null;
  lastName: string | null;
  nameVerified: boolean;
  kycTier: number;
  hasPin: boolean;
  referralCode: string;
  roles: string[];
  ussdEnabled: boolean;
};

describe('getMe and updateProfile', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const getMe = (me: SignedIn) => get<UserView>(world, 'getMe', {}, { token: me.accessToken });
  const update = (me: SignedIn, data: Record<string, unknown>) =>
    post<UserView>(world, 'updateProfile', data, { token: me.accessToken });

  it('getMe returns exactly the documented fields', async () => {
    const me = await signIn(world);
    const view = ok(await getMe(me));
    assert.deepEqual(Object.keys(view).sort(), [
      'email',
      // API.md section 10: getMe carries emailVerified.
      'emailVerified',
      'firstName',
      // API.md section 17.4: whether an operator froze the account.
      'frozen',
      'hasPin',
      'id',
      'kycTier',
      'lastName',
      // API.md section 4: the names are the verified ones once Tier 2 is approved.
      'nameVerified',
      'phone',
      // API.md section 16: the price level whose markups the user pays (null by default).
      'priceLevel',
      'referralCode',
      'roles',
      // API.md section 17.6: whether the person switched the USSD channel on (off by default).
      'ussdEnabled',
    ]);
    assert.equal(view.id, me.userId);
    assert.equal(view.phone, e164(me.phone));
    assert.equal(view.ussdEnabled, false, 'USSD is off until the person switches it on');
  });

  it('getMe refuses unknown query parameters', async () => {
    const me = await signIn(world);
    const error = failure(await get(world, 'getMe', { userId: me.userId }, { token: me.accessToken }));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'VALIDATION_ERROR');
  });

  it('accepts Yoruba and Igbo names with tone marks, typed composed or decomposed, and stores them NFC', async () => {
    const me = await signIn(world);
    const decomposed = 'Ade\u0301ba\u0301yo\u0323\u0300'; // Adébáyọ̀ typed as letters + combining marks
    const updated = ok(await update(me, { firstName: decomposed, lastName: 'Ẹ́mẹ́ka' }));
    assert.equal(updated.firstName, decomposed.normalize('NFC'));
    assert.equal(updated.lastName, 'Ẹ́mẹ́ka'.normalize('NFC'));
    // A combining mark cannot start a name.
    const error = failure(await update(me, { firstName: '\u0301Ade' }));
    assert.equal(error.status, 400);
  });

  it('trims names, lowercases the email and returns the updated user', async () => {
    const me = await signIn(world);
    const updated = ok(
      await update(me, {
        firstName: '  Adaeze ',
        lastName: ' Okafor-Nwosu  ',
        email: 'Ada.Okafor@Example.COM',
      }),
    );
    assert.equal(updated.firstName, 'Adaeze');
    assert.equal(updated.lastName, 'Okafor-Nwosu');
    assert.equal(updated.email, 'ada.okafor@example.com');
    assert.deepEqual(ok(await getMe(me)), updated);
    const row = await world.ctx.db
      .selectFrom('users')
      .select(['first_name', 'last_name', 'email'])
      .where('id', '=', me.userId)
      .executeTakeFirstOrThrow();
    assert.deepEqual(row, {
      first_name: 'Adaeze',
      last_name: 'Okafor-Nwosu',
      email: 'ada.okafor@example.com',
    });
  });

  it('accepts letters beyond ASCII, apostrophes, spaces and 60 characters', async () => {
    const me = await signIn(world);
    const long = 'A'.repeat(60);
    const updated = ok(await update(me, { firstName: 'Ọlámídé', lastName: "O'Neil Bello" }));
    assert.equal(updated.firstName, 'Ọlámídé');
    assert.equal(updated.lastName, "O'Neil Bello");
    assert.equal(ok(await update(me, { lastName: long })).lastName, long);
  });

  for (const [label, data, path] of [
    ['digits in the first name', { firstName: 'Ada1' }, 'data.firstName'],
    ['an empty first name', { firstName: '' }, 'data.firstName'],
    ['a first name of spaces only', { firstName: '   ' }, 'data.firstName'],
    ['markup in the last name', { lastName: '<script>' }, 'data.lastName'],
    ['a 61-character last name', { lastName: 'B'.repeat(61) }, 'data.lastName'],
    ['a name that is not a string', { firstName: 42 }, 'data.firstName'],
    ['an invalid email', { email: 'not-an-email' }, 'data.email'],
    ['an email without a domain', { email: 'ada@' }, 'data.email'],
    ['an empty email', { email: '' }, 'data.email'],
  ] as const) {
    it(`refuses ${label} with 400 at ${path} and changes nothing`, async () => {
      const me = await signIn(world);
      ok(await update(me, { firstName: 'Chidi', lastName: 'Eze', email: 'chidi@example.com' }));
      const before = ok(await getMe(me));
      const error = failure(await update(me, data));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(issuePaths(error.details).includes(path), JSON.stringify(error.details));
      assert.deepEqual(ok(await getMe(me)), before);
    });
  }

  it('refuses a valid field sent together with an invalid one, as a whole', async () => {
    const me = await signIn(world);
    const error = failure(await update(me, { firstName: 'Ngozi', email: 'nope' }));
    assert.equal(error.status, 400);
    assert.deepEqual(issuePaths(error.details), ['data.email']);
    assert.equal(ok(await getMe(me)).firstName, null);
  });

  for (const field of ['phone', 'kycTier', 'roles', 'hasPin', 'referralCode', 'id']) {
    it(`refuses the unknown or read-only field ${field} with 400`, async () => {
      const me = await signIn(world);
      const before = ok(await getMe(me));
      const values: Record<string, unknown> = {
        phone: '+2348039999999',
        kycTier: 3,
        roles: ['user', 'admin'],
        hasPin: true,
        referralCode: 'AAAAAAAA',
        id: '00000000-0000-7000-8000-000000000000',
      };
      const error = failure(await update(me, { firstName: 'Emeka', [field]: values[field] }));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.deepEqual(ok(await getMe(me)), before);
    });
  }

  it('keeps the other fields on a partial update', async () => {
    const me = await signIn(world);
    ok(await update(me, { firstName: 'Tunde' }));
    ok(await update(me, { lastName: 'Bakare' }));
    ok(await update(me, { email: 'tunde@example.com' }));
    const view = ok(await update(me, { firstName: 'Babatunde' }));
    assert.equal(view.firstName, 'Babatunde');
    assert.equal(view.lastName, 'Bakare');
    assert.equal(view.email, 'tunde@example.com');
    assert.equal(view.phone, e164(me.phone));
    assert.equal(view.kycTier, 0);
    // An empty update changes nothing.
    assert.deepEqual(ok(await update(me, {})), view);
  });

  it("changes only the caller's own profile", async () => {
    const alice = await signIn(world);
    const bob = await signIn(world);
    ok(await update(bob, { firstName: 'Bola' }));
    ok(await update(alice, { firstName: 'Amaka' }));
    assert.equal(ok(await getMe(bob)).firstName, 'Bola');
    assert.equal(ok(await getMe(alice)).firstName, 'Amaka');
  });

  it('freezes the names once Tier 2 verifies them: nameVerified, and 409 CONFLICT for either name', async () => {
    const me = await kycUser(world, { firstName: 'Adaeze', lastName: 'Okafor' });
    assert.equal(ok(await getMe(me)).nameVerified, false);
    await userAtTier(world, 2, me);
    const verified = ok(await getMe(me));
    assert.deepEqual(
      [verified.firstName, verified.lastName, verified.nameVerified],
      ['Adaeze', 'Okafor', true],
    );
    for (const data of [
      { firstName: 'Billrail' },
      { lastName: 'Customer Care Refunds' },
      { firstName: 'Billrail', lastName: 'Customer Care Refunds', email: 'refunds@example.com' },
    ]) {
      const error = failure(await update(me, data));
      assert.equal(error.status, 409);
      assert.equal(error.code, 'CONFLICT');
      assert.match(error.message, /verified/);
      assert.deepEqual(ok(await getMe(me)), verified, 'nothing changed, not even the email sent alongside');
    }
    // The email is not part of the verified identity: it may still change.
    const emailed = ok(await update(me, { email: 'adaeze@example.com' }));
    assert.equal(emailed.email, 'adaeze@example.com');
    assert.deepEqual([emailed.firstName, emailed.lastName, emailed.nameVerified], ['Adaeze', 'Okafor', true]);
  });

  it('needs a bearer token', async () => {
    for (const response of [
      await get(world, 'getMe'),
      await post(world, 'updateProfile', { firstName: 'Nobody' }),
    ]) {
      const error = failure(response);
      assert.equal(error.status, 401);
      assert.equal(error.code, 'UNAUTHENTICATED');
    }
  });
});
