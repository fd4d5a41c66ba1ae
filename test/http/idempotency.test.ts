import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { canonicalJson } from '../../src/http/canonical-json.ts';
import {
  IDEMPOTENCY_TTL_SECONDS,
  idempotencyPurgeJob,
  requestHash,
} from '../../src/http/idempotency-store.ts';
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
import { buyer, mtn, PIN } from '../vtu/purchase-support.ts';

// Idempotency keys (API.md section 3), each rule seen from a client and checked against what the
// server actually did: a replay must not execute again, and a refusal must not execute at all.

type Sent = { status: number; replayed: boolean; text: string; body: unknown };

/** A POST with full control over the key, returning the raw text so replays can be compared exactly. */
async function send(
  world: World,
  operation: string,
  data: Record<string, unknown>,
  options: { key?: string | null; token?: string } = {},
): Promise<Sent> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.key !== null) headers['idempotency-key'] = options.key ?? randomUUID();
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${world.baseUrl}/_serverFn/${operation}`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ data }),
  });
  const text = await response.text();
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    text,
    body: JSON.parse(text),
  };
}

const errorCode = (sent: Sent) => (sent.body as { error?: { code?: string } }).error?.code;

async function firstName(world: World, token: string): Promise<string | null> {
  return ok(await get<{ firstName: string | null }>(world, 'getMe', {}, { token })).firstName;
}

/** When the sandbox last texted the phone: a new time means requestOtp really ran again. */
async function smsSentAt(world: World, phone: string): Promise<string> {
  const response = await fetch(`${world.baseUrl}/__sandbox/sms?phone=${encodeURIComponent(phone)}`);
  const body = (await response.json()) as { data: { sentAt: string } };
  return body.data.sentAt;
}

async function storedKeys(world: World, scope: string, keys: string[]): Promise<string[]> {
  const rows = await world.ctx.db
    .selectFrom('idempotency_keys')
    .select('key')
    .where('scope', '=', scope)
    .where('key', 'in', keys)
    .execute();
  return rows.map((r) => r.key).sort();
}

describe('idempotency keys', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world?.close());

  it('refuses a POST without a UUID key with 400 IDEMPOTENCY_KEY_REQUIRED and executes nothing', async () => {
    const user = await signIn(world);
    const uuid = randomUUID();
    const badKeys: Array<string | null> = [
      null,
      '',
      'abc',
      'not-a-uuid-at-all',
      uuid.replaceAll('-', ''),
      `{${uuid}}`,
      `${uuid}0`,
      `g${uuid.slice(1)}`,
      `${uuid},${randomUUID()}`,
    ];
    for (const key of badKeys) {
      const sent = await send(
        world,
        'updateProfile',
        { firstName: 'Nokey' },
        { key, token: user.accessToken },
      );
      assert.equal(sent.status, 400, `key ${JSON.stringify(key)}`);
      assert.equal(errorCode(sent), 'IDEMPOTENCY_KEY_REQUIRED', `key ${JSON.stringify(key)}`);
    }
    assert.equal(await firstName(world, user.accessToken), null);
    // A public operation needs the key too.
    const phone = uniquePhone();
    const anonymous = await send(world, 'requestOtp', { phone }, { key: null });
    assert.equal(anonymous.status, 400);
    assert.equal(errorCode(anonymous), 'IDEMPOTENCY_KEY_REQUIRED');
    const sms = await fetch(`${world.baseUrl}/__sandbox/sms?phone=${phone}`);
    assert.equal(sms.status, 404, 'no SMS may have been sent');
  });

  it('replays the first response for the same key, operation and body without executing again', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    const first = await send(world, 'updateProfile', { firstName: 'Ada' }, { key, token: user.accessToken });
    assert.equal(first.status, 200);
    assert.equal(first.replayed, false);
    ok(await post(world, 'updateProfile', { firstName: 'Bola' }, { token: user.accessToken }));

    const replay = await send(world, 'updateProfile', { firstName: 'Ada' }, { key, token: user.accessToken });
    assert.equal(replay.status, first.status);
    assert.equal(replay.text, first.text);
    assert.equal(replay.replayed, true);
    assert.equal((replay.body as { data: { firstName: string } }).data.firstName, 'Ada');
    assert.equal(await firstName(world, user.accessToken), 'Bola');

    // The key is a UUID, whatever its letter case; the body is compared as JSON, whatever its key order.
    const upper = await send(
      world,
      'updateProfile',
      { firstName: 'Ada' },
      { key: key.toUpperCase(), token: user.accessToken },
    );
    assert.equal(upper.replayed, true);
    assert.equal(upper.text, first.text);
    const key2 = randomUUID();
    const two = await send(
      world,
      'updateProfile',
      { firstName: 'Cy', lastName: 'Dee' },
      { key: key2, token: user.accessToken },
    );
    const reordered = await send(
      world,
      'updateProfile',
      { lastName: 'Dee', firstName: 'Cy' },
      { key: key2, token: user.accessToken },
    );
    assert.equal(reordered.replayed, true);
    assert.equal(reordered.text, two.text);
  });

  it('refuses the same key with a different body with 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    ok(
      await post(
        world,
        'updateProfile',
        { firstName: 'Ada' },
        { token: user.accessToken, idempotencyKey: key },
      ),
    );
    const reused = await send(world, 'updateProfile', { firstName: 'Eve' }, { key, token: user.accessToken });
    assert.equal(reused.status, 422);
    assert.equal(errorCode(reused), 'IDEMPOTENCY_KEY_REUSED');
    assert.equal(reused.replayed, false);
    assert.equal(await firstName(world, user.accessToken), 'Ada');
  });

  it('refuses the same key with a different operation with 422 and does not run it', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    ok(await post(world, 'updateProfile', {}, { token: user.accessToken, idempotencyKey: key }));
    const reused = await send(world, 'signOut', {}, { key, token: user.accessToken });
    assert.equal(reused.status, 422);
    assert.equal(errorCode(reused), 'IDEMPOTENCY_KEY_REUSED');
    // signOut did not run: the session still works.
    ok(await get(world, 'getMe', {}, { token: user.accessToken }));
  });

  it('scopes keys to the caller: another user reusing a key executes normally', async () => {
    const alice = await signIn(world);
    const bob = await signIn(world);
    const key = randomUUID();
    const forAlice = await send(
      world,
      'updateProfile',
      { firstName: 'Ada' },
      { key, token: alice.accessToken },
    );
    assert.equal(forAlice.status, 200);
    const forBob = await send(world, 'updateProfile', { firstName: 'Ada' }, { key, token: bob.accessToken });
    assert.equal(forBob.status, 200);
    assert.equal(forBob.replayed, false);
    assert.equal((forBob.body as { data: { id: string } }).data.id, bob.userId);
    assert.equal(await firstName(world, bob.accessToken), 'Ada');
    assert.deepEqual(await storedKeys(world, alice.userId, [key]), [key]);
    assert.deepEqual(await storedKeys(world, bob.userId, [key]), [key]);
  });

  it('stores and replays a 4xx answer', async () => {
    const user = await buyer(world, 1_000);
    const wrong = '0000';
    assert.notEqual(wrong, PIN);
    const order = { network: 'mtn', phone: mtn('5'), amount: 100, pin: wrong };
    const key = randomUUID();
    const first = await send(world, 'buyAirtime', order, { key, token: user.accessToken });
    assert.equal(first.status, 403);
    assert.deepEqual((first.body as { error: { details: unknown } }).error.details, { attemptsLeft: 4 });

    const replay = await send(world, 'buyAirtime', order, { key, token: user.accessToken });
    assert.equal(replay.status, 403);
    assert.equal(replay.text, first.text);
    assert.equal(replay.replayed, true);
    // The replay did not count as an attempt: a new key's wrong PIN is the second one.
    const second = failure(await post(world, 'buyAirtime', order, { token: user.accessToken }));
    assert.deepEqual(second.details, { attemptsLeft: 3 });
  });

  it('never stores a verifyOtp answer: the same key runs again, and the used code is refused without tokens', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, phone);
    const key = randomUUID();
    const first = await send(world, 'verifyOtp', { phone, code }, { key });
    assert.equal(first.status, 200);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), [], 'nothing kept under the key');

    // Whoever sends the same key, phone and code again (the client whose answer was lost, or anyone
    // who learnt all three) runs the sign-in again and is refused: the code is used up.
    const again = await send(world, 'verifyOtp', { phone, code }, { key });
    assert.equal(again.status, 401);
    assert.equal(again.replayed, false);
    assert.equal(errorCode(again), 'UNAUTHENTICATED');
    assert.deepEqual((again.body as { error: { details: unknown } }).error.details, { attemptsLeft: 0 });
    assert.doesNotMatch(again.text, /accessToken|refreshToken/);
    for (const token of [
      (first.body as { data: { accessToken: string } }).data.accessToken,
      (first.body as { data: { refreshToken: string } }).data.refreshToken,
    ]) {
      assert.ok(!again.text.includes(token));
    }
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);
    // A refusal is not kept either: nothing of verifyOtp stays under a key.
    const wrongKey = randomUUID();
    const wrong = await send(
      world,
      'verifyOtp',
      { phone, code: code === '000000' ? '111111' : '000000' },
      { key: wrongKey },
    );
    assert.equal(wrong.status, 401);
    assert.deepEqual(await storedKeys(world, 'anonymous', [wrongKey]), []);
  });

  it('never stores a refreshSession answer: the same key runs again and the rotated token is refused', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    const first = await send(world, 'refreshSession', { refreshToken: user.refreshToken }, { key });
    assert.equal(first.status, 200);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);
    const rotated = (first.body as { data: { accessToken: string; refreshToken: string } }).data;

    // The retry presents the rotated token again: reuse, which revokes the whole session (API.md
    // section 4), so a client that lost the answer signs in again. No tokens come back.
    const again = await send(world, 'refreshSession', { refreshToken: user.refreshToken }, { key });
    assert.equal(again.status, 401);
    assert.equal(again.replayed, false);
    assert.equal(errorCode(again), 'UNAUTHENTICATED');
    assert.ok(!again.text.includes(rotated.accessToken));
    assert.ok(!again.text.includes(rotated.refreshToken));
    assert.equal(failure(await get(world, 'getMe', {}, { token: rotated.accessToken })).status, 401);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);
  });

  it('answers 409 IDEMPOTENCY_IN_PROGRESS while the first request runs, and frees a stale one', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    const data = { firstName: 'Ada' };
    const now = world.ctx.clock.now();
    // What the store holds while a first request with this key is being handled.
    await world.ctx.db
      .insertInto('idempotency_keys')
      .values({
        scope: user.userId,
        key,
        operation: 'updateProfile',
        request_hash: requestHash('updateProfile', canonicalJson(data)),
        state: 'in_progress',
        response_status: null,
        response_body: null,
        created_at: now,
        expires_at: new Date(now.getTime() + IDEMPOTENCY_TTL_SECONDS * 1000),
      })
      .execute();
    const busy = await send(world, 'updateProfile', data, { key, token: user.accessToken });
    assert.equal(busy.status, 409);
    assert.equal(errorCode(busy), 'IDEMPOTENCY_IN_PROGRESS');
    assert.equal(await firstName(world, user.accessToken), null);

    // A different body under that key is still a reuse, not a wait.
    const other = await send(world, 'updateProfile', { firstName: 'Eve' }, { key, token: user.accessToken });
    assert.equal(other.status, 422);

    // A request "in progress" for over five minutes died with its process: the key may run again.
    world.ctx.sandboxClock!.advance(5 * 60 + 1);
    const retried = await send(world, 'updateProfile', data, { key, token: user.accessToken });
    assert.equal(retried.status, 200);
    assert.equal(retried.replayed, false);
    assert.equal(await firstName(world, user.accessToken), 'Ada');
  });

  it('does not store a 5xx: the same key runs again once the failure is gone', async () => {
    const phone = uniquePhone();
    const key = randomUUID();
    await sql`alter table otp_codes rename to otp_codes_gone`.execute(world.ctx.db);
    let failed: Sent;
    try {
      failed = await send(world, 'requestOtp', { phone }, { key });
    } finally {
      await sql`alter table otp_codes_gone rename to otp_codes`.execute(world.ctx.db);
    }
    assert.equal(failed.status, 500);
    assert.equal(errorCode(failed), 'INTERNAL');
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);

    const retried = await send(world, 'requestOtp', { phone }, { key });
    assert.equal(retried.status, 200);
    assert.equal(retried.replayed, false);
    assert.match((await readSms(world, phone)).code, /^\d{6}$/);
  });

  it('lets exactly one of several concurrent identical requests run', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    const data = { firstName: 'Once' };
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () => send(world, 'updateProfile', data, { key, token: user.accessToken })),
    );
    const executed = attempts.filter((a) => a.status === 200 && !a.replayed);
    assert.equal(executed.length, 1, JSON.stringify(attempts.map((a) => [a.status, a.replayed])));
    for (const attempt of attempts) {
      if (attempt.status === 409) assert.equal(errorCode(attempt), 'IDEMPOTENCY_IN_PROGRESS');
      else {
        assert.equal(attempt.status, 200);
        assert.equal(attempt.text, executed[0]?.text);
      }
    }
  });

  it('signs in once under concurrent verifyOtp with one key: the others wait (409) or are refused, none gets tokens', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, phone);
    const key = randomUUID();
    const attempts = await Promise.all(
      Array.from({ length: 8 }, () => send(world, 'verifyOtp', { phone, code }, { key })),
    );
    const signedIn = attempts.filter((a) => a.status === 200);
    assert.equal(signedIn.length, 1, JSON.stringify(attempts.map((a) => [a.status, a.replayed])));
    for (const attempt of attempts) {
      assert.equal(attempt.replayed, false);
      if (attempt.status === 409) assert.equal(errorCode(attempt), 'IDEMPOTENCY_IN_PROGRESS');
      else if (attempt.status !== 200) {
        // Ran after the first had finished and released the key: the code was used up by then.
        assert.equal(attempt.status, 401);
        assert.doesNotMatch(attempt.text, /accessToken/);
      }
    }
    const winner = signedIn[0];
    assert.ok(winner !== undefined);
    const userId = (winner.body as { data: { user: { id: string } } }).data.user.id;
    const sessions = await world.ctx.db
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<bigint>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(sessions.n), 1);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);
  });

  // The tests below move this world's clock forward by days; each signs in its own users.

  it('frees a key after 24 hours (the clock advance also purges it)', async () => {
    const phone = uniquePhone();
    const key = randomUUID();
    ok(await post(world, 'requestOtp', { phone }, { idempotencyKey: key }));
    const firstSentAt = await smsSentAt(world, phone);
    const replay = await send(world, 'requestOtp', { phone }, { key });
    assert.equal(replay.replayed, true);
    assert.equal(await smsSentAt(world, phone), firstSentAt);

    const advanced = await fetch(`${world.baseUrl}/__sandbox/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ advanceSeconds: IDEMPOTENCY_TTL_SECONDS + 1 }),
    });
    assert.equal(advanced.status, 200);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), []);

    const again = await send(world, 'requestOtp', { phone }, { key });
    assert.equal(again.status, 200);
    assert.equal(again.replayed, false);
    assert.notEqual(await smsSentAt(world, phone), firstSentAt);
  });

  it('treats an expired key that is not purged yet as a new key', async () => {
    const key = randomUUID();
    ok(await post(world, 'requestOtp', { phone: uniquePhone() }, { idempotencyKey: key }));
    // Only the clock moves: no job runs, so the expired row is still there.
    world.ctx.sandboxClock!.advance(IDEMPOTENCY_TTL_SECONDS + 1);
    assert.deepEqual(await storedKeys(world, 'anonymous', [key]), [key]);

    const otherPhone = uniquePhone();
    const reused = await send(world, 'requestOtp', { phone: otherPhone }, { key });
    assert.equal(reused.status, 200, reused.text);
    assert.equal(reused.replayed, false);
    assert.match((await readSms(world, otherPhone)).code, /^\d{6}$/);
  });

  it('deletes expired keys, and only those, in the clean-up job', async () => {
    const expired = [randomUUID(), randomUUID()];
    for (const key of expired)
      ok(await post(world, 'requestOtp', { phone: uniquePhone() }, { idempotencyKey: key }));
    world.ctx.sandboxClock!.advance(IDEMPOTENCY_TTL_SECONDS + 1);
    const fresh = randomUUID();
    ok(await post(world, 'requestOtp', { phone: uniquePhone() }, { idempotencyKey: fresh }));
    const all = [...expired, fresh];
    assert.deepEqual(await storedKeys(world, 'anonymous', all), [...all].sort());

    await world.ctx.jobs.runNow(idempotencyPurgeJob);
    assert.deepEqual(await storedKeys(world, 'anonymous', all), [fresh]);
  });
});
