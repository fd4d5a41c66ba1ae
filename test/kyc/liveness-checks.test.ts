import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { advanceClock } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  type World,
} from '../helpers/world.ts';
import {
  expectError,
  expectValidationAt,
  FRESH_STATUS,
  getStatus,
  submissions,
  type TierView,
} from './kyc-support.ts';

// Tier 1's face check belongs to the person who started it (issue 25 item 7): getKycLivenessUrl
// issues a one-time state that the provider's page hands back with its token, and submitKycTier1
// takes a widget's token only with a state of a check the caller started, unused and unexpired; a
// token is accepted once. The sandbox's magic tokens keep working without a state. And the sandbox
// page hands its token back only to a path of its own origin.

type LivenessUrl = { url: string; state: string; expiresAt: string };

describe(`Tier 1 liveness checks (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  const startCheck = async (user: SignedIn) =>
    ok(await get<LivenessUrl>(world, 'getKycLivenessUrl', {}, { token: user.accessToken }));

  /** What the provider's widget ends with: a token that verifies as passed (or failed) once. */
  async function widgetToken(outcome: 'pass' | 'fail' = 'pass'): Promise<string> {
    const response = await fetch(`${world.baseUrl}/__sandbox/kyc/liveness/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome }),
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { token: string }).token;
  }

  const submit = (user: SignedIn, data: Record<string, unknown>) =>
    post<TierView>(world, 'submitKycTier1', data, { token: user.accessToken });

  describe('the sandbox page’s return path', () => {
    const page = (query: string) =>
      fetch(`${world.baseUrl}/__sandbox/liveness?${query}`, { redirect: 'manual' });

    // As they arrive on the wire: a browser strips a tab or newline from a URL it is sent to, so
    // `/%09/evil.example` would become `//evil.example`, another host.
    for (const query of [
      'return=/%09/evil.example',
      'return=/%09evil',
      'return=/%0Aevil',
      'return=/%0D/evil.example',
      'return=/%5Cevil.example',
      'return=%5C%5Cevil.example',
      'return=%5C/evil',
      'return=/%5C/evil.example',
      'return=%2F%2Fevil.example',
      'return=/%252F%252Fevil.example',
      'return=%252F%252Fevil.example',
      'return=//evil.example',
      'return=///evil.example',
      'return=https://evil.example',
      'return=https:evil.example',
      'return=javascript:alert(1)',
      'return=%20//evil.example',
      'return=verify',
      'return=',
    ]) {
      it(`refuses ${query} with a 400 page and no redirect`, async () => {
        const response = await page(query);
        assert.equal(response.status, 400);
        assert.equal(response.headers.get('location'), null);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
        assert.match(await response.text(), /not a page of this service/);
      });
    }

    for (const query of ['', 'return=/verify', 'return=%2Fverify', 'return=/verify?tab=1&x=%2F']) {
      it(`serves the page for ${query === '' ? 'no return path' : query}`, async () => {
        const response = await page(query);
        assert.equal(response.status, 200);
        assert.match(await response.text(), /Liveness check/);
      });
    }
  });

  it('getKycLivenessUrl starts a check: a one-time state, in the url too, that expires', async () => {
    const user = await signIn(world);
    const first = await startCheck(user);
    const second = await startCheck(user);
    assert.match(first.state, /^[A-Za-z0-9_-]{32,}$/);
    assert.notEqual(first.state, second.state);
    const url = new URL(first.url, world.baseUrl);
    assert.equal(url.pathname, '/__sandbox/liveness');
    assert.equal(url.searchParams.get('state'), first.state);
    const minutes = (Date.parse(first.expiresAt) - Date.now()) / 60_000;
    assert.ok(minutes > 25 && minutes <= 31, `expires in ${minutes} minutes`);
  });

  it('approves a widget token with the state of a check the caller started', async () => {
    const user = await signIn(world);
    const { state } = await startCheck(user);
    assert.deepEqual(ok(await submit(user, { livenessToken: await widgetToken(), state })), {
      tier: 1,
      status: 'approved',
    });
    assert.equal((await getStatus(world, user)).tier, 1);
  });

  it('refuses a widget token without a state with 400 at data.state, and records nothing', async () => {
    const user = await signIn(world);
    const token = await widgetToken();
    expectValidationAt(await submit(user, { livenessToken: token }), 'data.state');
    assert.deepEqual(await getStatus(world, user), FRESH_STATUS);
    // The token was not spent: with a check of one's own it still counts.
    const { state } = await startCheck(user);
    assert.equal(ok(await submit(user, { livenessToken: token, state })).status, 'approved');
  });

  it('refuses another person’s check: the token and state of A submitted by B change nothing', async () => {
    const a = await signIn(world);
    const b = await signIn(world);
    const { state } = await startCheck(a);
    const token = await widgetToken();
    expectValidationAt(await submit(b, { livenessToken: token, state }), 'data.state');
    // B with a state of B's own check cannot take A's token either once A has used it (below).
    assert.deepEqual(await getStatus(world, b), FRESH_STATUS);
    assert.equal((await submissions(world, b.userId)).length, 0);
    // Nothing was spent: A's own check still goes through.
    assert.equal(ok(await submit(a, { livenessToken: token, state })).status, 'approved');
  });

  it('accepts a token once: the same token again, by anyone, is 409 and changes nothing', async () => {
    const a = await signIn(world);
    const b = await signIn(world);
    const token = await widgetToken('fail');
    assert.equal(
      ok(await submit(a, { livenessToken: token, state: (await startCheck(a)).state })).status,
      'rejected',
    );
    // A again, with a new check of A's own; and B with a check of B's own.
    expectError(
      await submit(a, { livenessToken: token, state: (await startCheck(a)).state }),
      409,
      'CONFLICT',
    );
    expectError(
      await submit(b, { livenessToken: token, state: (await startCheck(b)).state }),
      409,
      'CONFLICT',
    );
    assert.deepEqual(
      (await submissions(world, a.userId)).map((s) => s.status),
      ['rejected'],
    );
    assert.deepEqual(await getStatus(world, b), FRESH_STATUS);
  });

  it('uses a state once: a second token with the same state is 409 and changes nothing', async () => {
    const user = await signIn(world);
    const { state } = await startCheck(user);
    assert.equal(
      ok(await submit(user, { livenessToken: await widgetToken('fail'), state })).status,
      'rejected',
    );
    const second = await widgetToken('pass');
    expectError(await submit(user, { livenessToken: second, state }), 409, 'CONFLICT');
    assert.equal((await getStatus(world, user)).tiers[0]?.status, 'rejected');
    assert.equal((await submissions(world, user.userId)).length, 1);
    // A new check takes the unspent token.
    const fresh = await startCheck(user);
    assert.equal(ok(await submit(user, { livenessToken: second, state: fresh.state })).status, 'approved');
  });

  it('keeps at most 5 open checks a user: a sixth retires the oldest, whose state is then refused', async () => {
    const user = await signIn(world);
    const states: string[] = [];
    for (let i = 0; i < 7; i++) states.push((await startCheck(user)).state);
    const open = await world.ctx.db
      .selectFrom('kyc_liveness_checks')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', user.userId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(open.n), 5);
    for (const retired of states.slice(0, 2)) {
      expectValidationAt(
        await submit(user, { livenessToken: await widgetToken(), state: retired }),
        'data.state',
      );
    }
    assert.deepEqual(await submissions(world, user.userId), []);
    // The oldest of those kept still counts.
    assert.equal(
      ok(await submit(user, { livenessToken: await widgetToken(), state: states[2]! })).status,
      'approved',
    );
  });

  it('refuses an unknown or expired state with 400 at data.state', async () => {
    const user = await signIn(world);
    const token = await widgetToken();
    expectValidationAt(await submit(user, { livenessToken: token, state: 'A'.repeat(43) }), 'data.state');
    const { state } = await startCheck(user);
    await advanceClock(world, 31 * 60);
    // A new session (the access token may have expired meanwhile); the check has, 30 minutes on.
    const later = await signInAgain(world, user.phone);
    expectValidationAt(await submit(later, { livenessToken: token, state }), 'data.state');
    assert.deepEqual(await getStatus(world, later), FRESH_STATUS);
  });

  it('keeps the sandbox’s magic tokens working without a state, for many people', async () => {
    for (let i = 0; i < 3; i += 1) {
      const user = await signIn(world);
      assert.equal(ok(await submit(user, { livenessToken: 'sandbox-fail' })).status, 'rejected');
      assert.equal(ok(await submit(user, { livenessToken: 'sandbox-pass' })).status, 'approved');
    }
  });

  it('refuses a state that is not a string of the right shape with 400 at data.state', async () => {
    const user = await signIn(world);
    for (const state of ['', 42, 'x'.repeat(500)]) {
      expectValidationAt(await submit(user, { livenessToken: 'sandbox-pass', state }), 'data.state');
    }
  });
});
