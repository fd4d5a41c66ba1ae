import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

// Ending sessions at once (API.md section 17.4, decision 0040): an operator ends one person's
// sessions, or everyone's but their own. Access tokens are read per request (no cache in any
// process), so a token ended answers 401 from the very next request, on the service that ended it
// and on another service on the same database (PostgreSQL); the refresh token is refused too.

const e164 = (phone: string) => `+234${phone.slice(1)}`;

describe(`ending sessions (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhone = uniquePhone();
  let world: World;
  /** A second service on the same database (PostgreSQL); the same service on PGlite. */
  let twin: World;
  before(async () => {
    const env = { ADMIN_PHONES: e164(adminPhone) };
    world = await createWorld({ env });
    twin = onPostgres() ? await createWorld({ env, sameDatabaseAs: world }) : world;
  });
  after(async () => {
    if (twin !== world) await twin?.close();
    await world?.close();
  });

  const revoke = (admin: SignedIn, input: Record<string, unknown>) =>
    post<{ revoked: number }>(world, 'adminRevokeSessions', input, { token: admin.accessToken });
  const meStatus = async (on: World, user: SignedIn) =>
    (await get(on, 'getMe', {}, { token: user.accessToken })).status;
  const refreshStatus = async (user: SignedIn) =>
    (await post(world, 'refreshSession', { refreshToken: user.refreshToken })).status;

  it("ends one person's sessions at once, on every service, and no one else's", async () => {
    const admin = await signIn(world, adminPhone);
    const phone = uniquePhone();
    const phoneSession = await signIn(world, phone);
    const laptopSession = await signInAgain(world, phone);
    const other = await signIn(world);
    for (const session of [phoneSession, laptopSession, other]) {
      assert.equal(await meStatus(twin, session), 200, 'alive on the other service before');
    }

    const ended = ok(await revoke(admin, { userId: phoneSession.userId }));
    assert.deepEqual(ended, { revoked: 2 });
    for (const session of [phoneSession, laptopSession]) {
      assert.equal(await meStatus(world, session), 401, 'ended here');
      assert.equal(await meStatus(twin, session), 401, 'ended on the other service at once');
      assert.equal(await refreshStatus(session), 401, 'its refresh token is refused');
    }
    assert.equal(await meStatus(twin, other), 200, 'another person is untouched');
    assert.equal(await meStatus(world, admin), 200);

    // Again: nothing left to end. An unknown person is told apart from one with no session.
    assert.deepEqual(ok(await revoke(admin, { userId: phoneSession.userId })), { revoked: 0 });
    const nobody = failure(await revoke(admin, { userId: randomUUID() }));
    assert.deepEqual([nobody.status, nobody.code], [404, 'NOT_FOUND']);
    // The person signs in again as usual.
    const back = await signInAgain(world, phone);
    assert.equal(await meStatus(twin, back), 200);
  });

  it("ends everyone's sessions but the calling operator's own", async () => {
    const admin = await signInAgain(world, adminPhone);
    const adminElsewhere = await signInAgain(world, adminPhone);
    const people = [await signIn(world), await signIn(world)];
    const live = await world.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('revoked_at', 'is', null)
      .execute();

    const ended = ok(await revoke(admin, { all: true }));
    assert.equal(ended.revoked, live.length - 1, 'every session alive but the caller’s');
    assert.equal(await meStatus(twin, admin), 200, 'the operator keeps the session they called from');
    for (const session of [adminElsewhere, ...people]) {
      assert.equal(await meStatus(twin, session), 401);
      assert.equal(await refreshStatus(session), 401);
    }
    const left = await world.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('revoked_at', 'is', null)
      .execute();
    assert.equal(left.length, 1);
  });

  it('is an operator’s, with exactly one of userId and all', async () => {
    const person = await signIn(world);
    const refused = failure(await revoke(person, { userId: person.userId }));
    assert.deepEqual([refused.status, refused.code], [403, 'FORBIDDEN']);
    assert.equal(await meStatus(world, person), 200, 'nothing ended');

    const admin = await signInAgain(world, adminPhone);
    for (const input of [{}, { all: false }, { userId: person.userId, all: true }, { userId: 'someone' }]) {
      const invalid = failure(await revoke(admin, input));
      assert.deepEqual([invalid.status, invalid.code], [400, 'VALIDATION_ERROR'], JSON.stringify(input));
    }
    assert.equal(await meStatus(world, person), 200, 'nothing ended');
  });
});
