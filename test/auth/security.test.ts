import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  type ApiResponse,
  call,
  createWorld,
  failure,
  get,
  ok,
  post,
  readSms,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { e164 } from './support.ts';

// Bearer authentication (API.md sections 1 and 4) and secrets at rest: tokens, PINs and OTPs are
// never stored in clear.

describe('authentication and secrets at rest', () => {
  let world: World;
  let me: SignedIn;
  before(async () => {
    world = await createWorld();
    me = await signIn(world);
  });
  after(() => world.close());

  function assertUnauthenticated(response: ApiResponse, what: string): void {
    const error = failure(response);
    assert.equal(error.status, 401, what);
    assert.equal(error.code, 'UNAUTHENTICATED', what);
  }

  /** Every authenticated operation of section 4, called with the given extra headers. */
  const protectedCalls = (headers: Record<string, string>) => [
    call(world, 'GET', 'getMe', {}, { headers }),
    call(world, 'GET', 'getWallet', {}, { headers }),
    call(world, 'POST', 'updateProfile', { firstName: 'Mallory' }, { headers }),
    call(world, 'POST', 'setTransactionPin', { pin: '0000' }, { headers }),
    call(world, 'POST', 'signOut', {}, { headers }),
  ];

  async function assertAllRefused(headers: Record<string, string>, what: string): Promise<void> {
    for (const response of await Promise.all(protectedCalls(headers))) assertUnauthenticated(response, what);
    // Nothing was changed by the refused calls, and the real session is still alive.
    const view = ok(
      await get<{ firstName: string | null; hasPin: boolean }>(world, 'getMe', {}, { token: me.accessToken }),
    );
    assert.equal(view.firstName, null, what);
    assert.equal(view.hasPin, false, what);
  }

  it('accepts the real token (the control case for the refusals below)', async () => {
    ok(await get(world, 'getMe', {}, { headers: { authorization: `Bearer ${me.accessToken}` } }));
  });

  it('refuses calls without an Authorization header', async () => {
    await assertAllRefused({}, 'no Authorization header');
  });

  it('refuses a random 43-character bearer token', async () => {
    await assertAllRefused(
      { authorization: `Bearer ${randomBytes(32).toString('base64url')}` },
      'random token',
    );
  });

  for (const [label, header] of [
    ['the token without a scheme', (t: string) => t],
    ['a Basic header', () => `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['a Token scheme', (t: string) => `Token ${t}`],
    ['Bearer with no token', () => 'Bearer '],
    ['Bearer alone', () => 'Bearer'],
    ['two spaces before the token', (t: string) => `Bearer  ${t}`],
    ['a token followed by junk', (t: string) => `Bearer ${t} junk`],
    ['the token with one character more', (t: string) => `Bearer ${t}A`],
    ['the token with one character less', (t: string) => `Bearer ${t.slice(0, -1)}`],
    ['an SQL-looking token', () => "Bearer ' or '1'='1"],
  ] as const) {
    it(`refuses a malformed header: ${label}`, async () => {
      await assertAllRefused({ authorization: header(me.accessToken) }, label);
    });
  }

  it('refuses the refresh token used as an access token', async () => {
    await assertAllRefused({ authorization: `Bearer ${me.refreshToken}` }, 'refresh token as bearer');
  });

  it('refuses an access token used as a refresh token, without harming the session', async () => {
    const session = await signIn(world);
    assertUnauthenticated(
      await post(world, 'refreshSession', { refreshToken: session.accessToken }),
      'access token as refresh token',
    );
    ok(await get(world, 'getMe', {}, { token: session.accessToken }));
    ok(await post(world, 'refreshSession', { refreshToken: session.refreshToken }));
  });

  it('stores access and refresh tokens only as hashes, and never their answers for replay', async () => {
    const session = await signIn(world);
    const refreshed = ok(
      await post<{ accessToken: string; refreshToken: string }>(world, 'refreshSession', {
        refreshToken: session.refreshToken,
      }),
    );
    const { session_id: sessionId } = await world.ctx.db
      .selectFrom('sessions')
      .select('id as session_id')
      .where('user_id', '=', session.userId)
      .executeTakeFirstOrThrow();
    const access = await world.ctx.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('session_id', '=', sessionId)
      .execute();
    const refresh = await world.ctx.db
      .selectFrom('refresh_tokens')
      .selectAll()
      .where('session_id', '=', sessionId)
      .execute();
    assert.equal(access.length, 1, 'one live access token per session');
    assert.equal(refresh.length, 2, 'the rotated refresh token is kept to detect reuse');
    for (const row of [...access, ...refresh]) assert.match(row.token_hash, /^[0-9a-f]{64}$/);

    // Answers that carry credentials are never kept for replay (API.md section 3): nothing of
    // verifyOtp or refreshSession is left under their Idempotency-Keys once they have answered.
    const stored = await world.ctx.db
      .selectFrom('idempotency_keys')
      .select('operation')
      .where('operation', 'in', ['verifyOtp', 'refreshSession'])
      .execute();
    assert.deepEqual(stored, [], 'no verifyOtp or refreshSession answer is kept');
    // Other answers are (so the look for clear tokens below reads a table that has rows).
    ok(await post(world, 'updateProfile', { firstName: 'Ada' }, { token: refreshed.accessToken }));

    const secrets = [
      session.accessToken,
      session.refreshToken,
      refreshed.accessToken,
      refreshed.refreshToken,
    ];
    for (const table of ['access_tokens', 'refresh_tokens', 'sessions', 'idempotency_keys'] as const) {
      const text = JSON.stringify(await world.ctx.db.selectFrom(table).selectAll().execute());
      for (const secret of secrets) assert.ok(!text.includes(secret), `${table} holds a token in clear`);
    }
  });

  it('stores the OTP only as a hash', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, e164(phone));
    const row = await world.ctx.db
      .selectFrom('otp_codes')
      .selectAll()
      .where('phone', '=', e164(phone))
      .executeTakeFirstOrThrow();
    assert.notEqual(row.code_hash, code);
    // The pepper's version, then the HMAC (decision 0035).
    assert.match(row.code_hash, /^[0-9a-f]{8}\.[0-9a-f]{64}$/);
    assert.ok(!Object.values(row).some((value) => value === code), 'no column holds the clear code');
  });

  it('stores the PIN only as a hash', async () => {
    const session = await signIn(world);
    ok(await post(world, 'setTransactionPin', { pin: '2580' }, { token: session.accessToken }));
    const row = await world.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', session.userId)
      .executeTakeFirstOrThrow();
    assert.ok(row.pin_hash !== null);
    assert.notEqual(row.pin_hash, '2580');
    assert.match(row.pin_hash, /^[0-9a-f]{8}\.[0-9a-f]{64}$/);
    assert.ok(!Object.values(row).some((value) => value === '2580'), 'no column holds the clear PIN');
  });

  it('never returns secrets of other users or internals in getMe', async () => {
    const view = ok(await get<Record<string, unknown>>(world, 'getMe', {}, { token: me.accessToken }));
    const text = JSON.stringify(view);
    for (const internal of ['pin_hash', 'pinHash', 'pin_failed_count', 'referred_by_code', 'token']) {
      assert.ok(!text.includes(internal), `getMe leaks ${internal}`);
    }
  });
});
