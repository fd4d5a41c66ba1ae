import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { refreshSession } from '../../src/auth/sessions.ts';
import { AppError } from '../../src/errors.ts';
import {
  type ApiResponse,
  createWorld,
  failure,
  get,
  ok,
  post,
  signIn,
  signInAgain,
  type World,
} from '../helpers/world.ts';
import { advanceClock } from './support.ts';

// refreshSession and signOut (API.md section 4): access tokens live 15 minutes, refresh tokens 30
// days; refreshing rotates the refresh token, and presenting a rotated one revokes the session.

type Tokens = { accessToken: string; refreshToken: string; expiresInSeconds: number };

const DAY_SECONDS = 24 * 60 * 60;

describe('sessions', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const getMe = (token: string) => get<{ id: string }>(world, 'getMe', {}, { token });
  const refresh = (refreshToken: string) => post<Tokens>(world, 'refreshSession', { refreshToken });

  function assertUnauthenticated(response: ApiResponse, what: string): void {
    const error = failure(response);
    assert.equal(error.status, 401, what);
    assert.equal(error.code, 'UNAUTHENTICATED', what);
  }

  const sessionRow = (userId: string) =>
    world.ctx.db.selectFrom('sessions').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();

  describe('refreshSession', () => {
    it('returns new working tokens and retires the old access token', async () => {
      const me = await signIn(world);
      const tokens = ok(await refresh(me.refreshToken));
      assert.equal(tokens.expiresInSeconds, 900);
      assert.notEqual(tokens.accessToken, me.accessToken);
      assert.notEqual(tokens.refreshToken, me.refreshToken);
      assert.equal(ok(await getMe(tokens.accessToken)).id, me.userId);
      assertUnauthenticated(await getMe(me.accessToken), 'the old access token');
      // The new refresh token is itself refreshable.
      const next = ok(await refresh(tokens.refreshToken));
      assert.equal(ok(await getMe(next.accessToken)).id, me.userId);
    });

    it('revokes the whole session when a rotated refresh token is presented again', async () => {
      const me = await signIn(world);
      const other = await signInAgain(world, me.phone);
      const second = ok(await refresh(me.refreshToken));
      const third = ok(await refresh(second.refreshToken));
      assert.equal(ok(await getMe(third.accessToken)).id, me.userId);

      // The first refresh token was rotated: presenting it again is a replay.
      assertUnauthenticated(await refresh(me.refreshToken), 'the reused refresh token');
      assertUnauthenticated(await getMe(third.accessToken), 'the newest access token');
      assertUnauthenticated(await refresh(third.refreshToken), 'the newest refresh token');
      assertUnauthenticated(await refresh(second.refreshToken), 'the intermediate refresh token');

      const sessions = await world.ctx.db
        .selectFrom('sessions')
        .select(['revoked_at', 'revoked_reason'])
        .where('user_id', '=', me.userId)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      assert.equal(sessions.filter((s) => s.revoked_reason === 'refresh_token_reuse').length, 1);
      // The user's other session (another device) is untouched.
      assert.equal(ok(await getMe(other.accessToken)).id, me.userId);
      ok(await refresh(other.refreshToken));
    });

    it('lets exactly one of 10 concurrent refreshes with one token succeed', async () => {
      const me = await signIn(world);
      const responses = await Promise.all(Array.from({ length: 10 }, () => refresh(me.refreshToken)));
      const winners = responses.filter((r) => r.status === 200);
      assert.equal(winners.length, 1);
      for (const loser of responses.filter((r) => r.status !== 200)) {
        assertUnauthenticated(loser, 'a concurrent refresh');
      }
      // The losers presented a token that had just been rotated, which the contract treats as
      // reuse: the whole session is revoked, the winner's new tokens included.
      const [winner] = winners;
      const tokens = ok(winner!);
      assertUnauthenticated(await getMe(tokens.accessToken), "the winner's access token");
      assertUnauthenticated(await refresh(tokens.refreshToken), "the winner's refresh token");
      assert.equal((await sessionRow(me.userId)).revoked_reason, 'refresh_token_reuse');
    });

    it('lets exactly one of 10 refreshes that overlap in the database succeed', async () => {
      // Calling the domain function directly puts all ten transactions on the pool at once (over
      // HTTP the server spreads them out), so only the row lock can make one of them win.
      const me = await signIn(world);
      const deps = { db: world.ctx.db, clock: world.ctx.clock };
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, () => refreshSession(deps, me.refreshToken)),
      );
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      for (const result of results) {
        if (result.status === 'rejected') {
          assert.ok(result.reason instanceof AppError, String(result.reason));
          assert.equal(result.reason.code, 'UNAUTHENTICATED');
        }
      }
    });

    it('accepts a refresh token until 30 days and refuses it after', async () => {
      const early = await signIn(world);
      const late = await signIn(world);
      await advanceClock(world, 30 * DAY_SECONDS - 120);
      const tokens = ok(await refresh(early.refreshToken));
      assert.equal(ok(await getMe(tokens.accessToken)).id, early.userId);
      await advanceClock(world, 121);
      assertUnauthenticated(await refresh(late.refreshToken), 'a refresh token older than 30 days');
    });

    it('refuses an expired refresh token even before the purge job has deleted it', async () => {
      const me = await signIn(world);
      world.ctx.sandboxClock!.advance(30 * DAY_SECONDS + 1);
      const rows = await world.ctx.db
        .selectFrom('refresh_tokens')
        .innerJoin('sessions', 'sessions.id', 'refresh_tokens.session_id')
        .select('refresh_tokens.token_hash')
        .where('sessions.user_id', '=', me.userId)
        .execute();
      assert.equal(rows.length, 1, 'the expired refresh token is still stored');
      assertUnauthenticated(await refresh(me.refreshToken), 'an expired but unpurged refresh token');
    });

    it('refuses unknown and malformed refresh tokens', async () => {
      const unknown = failure(await refresh('x'.repeat(43)));
      assert.equal(unknown.status, 401);
      assert.equal(unknown.code, 'UNAUTHENTICATED');
      for (const refreshToken of ['', 'short', 'x'.repeat(201)]) {
        const error = failure(await refresh(refreshToken));
        assert.equal(error.status, 400);
        assert.equal(error.code, 'VALIDATION_ERROR');
      }
      assert.equal(failure(await post(world, 'refreshSession', {})).status, 400);
    });
  });

  describe('access token expiry', () => {
    it('accepts the access token until 15 minutes and refuses it at 901 s; refreshing still works', async () => {
      const me = await signIn(world);
      await advanceClock(world, 899);
      assert.equal(ok(await getMe(me.accessToken)).id, me.userId);
      await advanceClock(world, 2);
      assertUnauthenticated(await getMe(me.accessToken), 'an access token older than 15 minutes');
      const tokens = ok(await refresh(me.refreshToken));
      assert.equal(ok(await getMe(tokens.accessToken)).id, me.userId);
    });

    it('refuses an access token after 901 s', async () => {
      const me = await signIn(world);
      await advanceClock(world, 901);
      assertUnauthenticated(await getMe(me.accessToken), 'an access token older than 15 minutes');
    });

    it('checks the expiry on every use, not only through the purge job', async () => {
      // The clock endpoint also runs the purge job, which deletes expired tokens; moving the clock
      // directly shows that an expired token is refused even while its row still exists (the job
      // runs only every 15 minutes in production).
      const me = await signIn(world);
      world.ctx.sandboxClock!.advance(901);
      const rows = await world.ctx.db
        .selectFrom('access_tokens')
        .innerJoin('sessions', 'sessions.id', 'access_tokens.session_id')
        .select('access_tokens.token_hash')
        .where('sessions.user_id', '=', me.userId)
        .execute();
      assert.equal(rows.length, 1, 'the expired access token is still stored');
      assertUnauthenticated(await getMe(me.accessToken), 'an expired but unpurged access token');
    });
  });

  describe('signOut', () => {
    it('revokes the access and refresh tokens of the session and leaves other sessions alone', async () => {
      const phoneSession = await signIn(world);
      const laptopSession = await signInAgain(world, phoneSession.phone);
      assert.equal(laptopSession.userId, phoneSession.userId);

      assert.deepEqual(ok(await post(world, 'signOut', {}, { token: phoneSession.accessToken })), {
        ok: true,
      });
      assertUnauthenticated(await getMe(phoneSession.accessToken), 'the signed-out access token');
      assertUnauthenticated(await refresh(phoneSession.refreshToken), 'the signed-out refresh token');
      assertUnauthenticated(
        await post(world, 'signOut', {}, { token: phoneSession.accessToken }),
        'signing out twice',
      );

      assert.equal(ok(await getMe(laptopSession.accessToken)).id, laptopSession.userId);
      const tokens = ok(await refresh(laptopSession.refreshToken));
      assert.equal(ok(await getMe(tokens.accessToken)).id, laptopSession.userId);
    });

    it('revokes a refreshed session too', async () => {
      const me = await signIn(world);
      const tokens = ok(await refresh(me.refreshToken));
      ok(await post(world, 'signOut', {}, { token: tokens.accessToken }));
      assertUnauthenticated(await getMe(tokens.accessToken), 'the access token');
      assertUnauthenticated(await refresh(tokens.refreshToken), 'the refresh token');
    });

    it('judges each token presented at the same moment on its own (tokens are looked up in batches)', async () => {
      const users = await Promise.all([signIn(world), signIn(world), signIn(world)]);
      ok(await post(world, 'signOut', {}, { token: users[1]!.accessToken }));
      const answers = await Promise.all([
        ...users.map((u) => getMe(u.accessToken)),
        getMe(users[0]!.accessToken),
        getMe('x'.repeat(43)),
      ]);
      assert.equal(ok(answers[0]!).id, users[0]!.userId);
      assertUnauthenticated(answers[1]!, 'the signed-out token beside live ones');
      assert.equal(ok(answers[2]!).id, users[2]!.userId);
      assert.equal(ok(answers[3]!).id, users[0]!.userId, 'one token twice in a batch');
      assertUnauthenticated(answers[4]!, 'an unknown token beside live ones');
    });

    it('needs a bearer token and takes no fields', async () => {
      assertUnauthenticated(await post(world, 'signOut', {}), 'signOut without a token');
      const me = await signIn(world);
      const error = failure(await post(world, 'signOut', { everywhere: true }, { token: me.accessToken }));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      // The refused call did not sign out.
      assert.equal(ok(await getMe(me.accessToken)).id, me.userId);
    });
  });
});
