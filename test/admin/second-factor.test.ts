import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import {
  type ApiResponse,
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
import { notificationsOf } from '../schedules/support.ts';
import { advance, codeAt, enrolAndConfirm, wrongCode } from './totp-support.ts';

// The administrators' second factor (API.md section 17.4, decision 0039) over HTTP, with
// ADMIN_SECOND_FACTOR=totp: enrolment, confirmation, verification for 15 minutes of the sandbox's
// clock, the lock after five wrong codes (PIN_LOCKED, as the PIN's), a code never accepted twice, and
// every other admin operation refused with SECOND_FACTOR_REQUIRED until the session is verified. The
// races (wrong codes counted once each, one code used once) prove something only on PostgreSQL, where
// they are split across two services on one database.

type Enrolment = { secret: string; otpauthUrl: string };
type Verified = { verifiedUntil: string };

const e164 = (phone: string) => `+234${phone.slice(1)}`;

describe(`the admins' second factor (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhones = [uniquePhone(), uniquePhone(), uniquePhone(), uniquePhone()];
  let world: World;
  let twin: World;
  before(async () => {
    const env = { ADMIN_PHONES: adminPhones.map(e164).join(','), ADMIN_SECOND_FACTOR: 'totp' };
    world = await createWorld({ env });
    twin = onPostgres() ? await createWorld({ env, sameDatabaseAs: world }) : world;
  });
  after(async () => {
    if (twin !== world) await twin.close();
    await world.close();
  });

  const enrol = (admin: SignedIn) =>
    post<Enrolment>(world, 'adminEnrolTotp', {}, { token: admin.accessToken });
  const confirm = (admin: SignedIn, code: string, on = world) =>
    post<Verified>(on, 'adminConfirmTotp', { code }, { token: admin.accessToken });
  const verify = (admin: SignedIn, code: string, on = world) =>
    post<Verified>(on, 'adminVerifyTotp', { code }, { token: admin.accessToken });
  /** An admin operation that is neither of the second factor's own: the alerts' list. */
  const listAlerts = (admin: SignedIn) =>
    get(world, 'adminListAlerts', { limit: 5 }, { token: admin.accessToken });

  it('refuses every admin operation before enrolment, saying enrolment is needed', async () => {
    const admin = await signIn(world, adminPhones[0]);
    const refused = failure(await listAlerts(admin));
    assert.equal(refused.status, 403);
    assert.equal(refused.code, 'SECOND_FACTOR_REQUIRED');
    assert.deepEqual(refused.details, { enrolled: false });
    const markup = failure(
      await post(world, 'adminSetMarkup', { service: 'airtime', flat: 1 }, { token: admin.accessToken }),
    );
    assert.equal(markup.code, 'SECOND_FACTOR_REQUIRED', 'a POST too, before anything is done');
    // Verifying before a confirmed secret exists is a conflict, not a wrong code.
    assert.equal(failure(await verify(admin, '123456')).code, 'CONFLICT');
  });

  it('enrols (the secret once), confirms with a code, and opens admin operations for 15 minutes', async () => {
    const admin = await signIn(world, adminPhones[1]);
    const first = ok(await enrol(admin));
    assert.match(first.secret, /^[A-Z2-7]{32}$/, 'base32 of 20 bytes');
    const url = new URL(first.otpauthUrl);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.host, 'totp');
    assert.equal(url.searchParams.get('secret'), first.secret);
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
    // Not confirmed yet: enrolling again replaces the secret, and the first one no longer works.
    const { secret } = ok(await enrol(admin));
    assert.notEqual(secret, first.secret);
    const stale = failure(await confirm(admin, codeAt(world, first.secret)));
    assert.equal(stale.status, 403);
    assert.equal(stale.code, 'FORBIDDEN');
    assert.deepEqual(stale.details, { reason: 'wrong_code', attemptsLeft: 4 });

    const before = world.ctx.clock.now().getTime();
    const { verifiedUntil } = ok(await confirm(admin, codeAt(world, secret)));
    const lasts = new Date(verifiedUntil).getTime() - before;
    assert.ok(lasts >= 15 * 60 * 1000 && lasts < 15 * 60 * 1000 + 5_000, `15 minutes, not ${lasts} ms`);
    ok(await listAlerts(admin));

    // Confirmed: no new secret, and the stored one is sealed, never the base32 text.
    const again = failure(await enrol(admin));
    assert.equal(again.status, 409);
    assert.equal(again.code, 'CONFLICT');
    const row = await world.ctx.db
      .selectFrom('admin_totp')
      .selectAll()
      .where('user_id', '=', admin.userId)
      .executeTakeFirstOrThrow();
    assert.ok(!row.secret_sealed.includes(secret));
    assert.ok(!Buffer.from(row.secret_sealed, 'base64').toString('latin1').includes(secret));
    assert.equal(row.failed_count, 0, 'the right code forgot the wrong one');

    // Fifteen minutes later the session's second factor has lapsed: a refreshed token of the same
    // session is refused until a new code verifies it.
    advance(world, 15 * 60 + 1);
    const refreshed = ok(
      await post<{ accessToken: string }>(world, 'refreshSession', { refreshToken: admin.refreshToken }),
    );
    const later = { ...admin, accessToken: refreshed.accessToken };
    const lapsed = failure(await listAlerts(later));
    assert.equal(lapsed.code, 'SECOND_FACTOR_REQUIRED');
    assert.deepEqual(lapsed.details, { enrolled: true });
    ok(await verify(later, codeAt(world, secret)));
    ok(await listAlerts(later));
  });

  it('verifies each session on its own, and never accepts a code twice', async () => {
    const first = await signIn(world, adminPhones[2]);
    const second = await signInAgain(world, adminPhones[2]!);
    const secret = await enrolAndConfirm(world, first);
    const confirmedCode = codeAt(world, secret);
    const refused = failure(await listAlerts(second));
    assert.equal(
      refused.code,
      'SECOND_FACTOR_REQUIRED',
      "another session is not verified by the first's code",
    );
    assert.deepEqual(refused.details, { enrolled: true });
    const replay = failure(await verify(second, confirmedCode));
    assert.equal(replay.code, 'FORBIDDEN', 'the code that confirmed is used');
    advance(world, 30);
    const fresh = codeAt(world, secret);
    ok(await verify(second, fresh));
    ok(await listAlerts(second));
    const again = failure(await verify(second, fresh));
    assert.equal(again.code, 'FORBIDDEN', 'the same code again is a replay');
    // An older code (one step back, still inside the window) is refused as well: its step is used.
    const older = failure(await verify(second, codeAt(world, secret, -1)));
    assert.equal(older.code, 'FORBIDDEN');
    advance(world, 30);
    // The next step's code is a fresh one.
    ok(await verify(second, codeAt(world, secret)));
  });

  it('locks after five wrong codes for 30 minutes (423 PIN_LOCKED), even to the right code', async () => {
    const admin = await signIn(world, adminPhones[3]);
    const secret = await enrolAndConfirm(world, admin);
    advance(world, 30);
    const right = codeAt(world, secret);
    const answers: ApiResponse[] = [];
    for (let i = 0; i < 5; i += 1) answers.push(await verify(admin, wrongCode(right)));
    assert.deepEqual(
      answers.slice(0, 4).map((a) => failure(a).details),
      [4, 3, 2, 1].map((attemptsLeft) => ({ reason: 'wrong_code', attemptsLeft })),
    );
    const locked = failure(answers[4]!);
    assert.equal(locked.status, 423);
    assert.equal(locked.code, 'PIN_LOCKED');
    assert.deepEqual(locked.details, { retryAfterSeconds: 30 * 60 });
    assert.equal(answers[4]!.headers.get('retry-after'), String(30 * 60));
    const stillLocked = failure(await verify(admin, right));
    assert.equal(stillLocked.code, 'PIN_LOCKED');
    assert.equal(failure(await confirm(admin, right)).code, 'CONFLICT', 'confirmed already');
    advance(world, 30 * 60);
    // The access token lapsed meanwhile (15 minutes): the session goes on under a refreshed one.
    const { accessToken } = ok(
      await post<{ accessToken: string }>(world, 'refreshSession', { refreshToken: admin.refreshToken }),
    );
    ok(await verify({ ...admin, accessToken }, codeAt(world, secret)));
  });

  it('counts racing wrong codes once each, and lets one code through once when raced', async () => {
    const phone = uniquePhone();
    const env = { ADMIN_PHONES: e164(phone), ADMIN_SECOND_FACTOR: 'totp' };
    // A world of its own, so that this admin is one: the same database on PostgreSQL for both services.
    const own = await createWorld({ env });
    const ownTwin = onPostgres() ? await createWorld({ env, sameDatabaseAs: own }) : own;
    try {
      const admin = await signIn(own, phone);
      const { secret } = ok(await post<Enrolment>(own, 'adminEnrolTotp', {}, { token: admin.accessToken }));
      ok(await post(own, 'adminConfirmTotp', { code: codeAt(own, secret) }, { token: admin.accessToken }));
      advance(own, 30);
      if (ownTwin !== own) advance(ownTwin, 30);
      const right = codeAt(own, secret);
      const racing = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          post(
            i % 2 === 0 ? own : ownTwin,
            'adminVerifyTotp',
            { code: wrongCode(right) },
            { token: admin.accessToken },
          ),
        ),
      );
      const codes = racing.map((a) => failure(a));
      const wrong = codes.filter((c) => c.code === 'FORBIDDEN');
      assert.deepEqual(
        wrong.map((c) => (c.details as { attemptsLeft: number }).attemptsLeft).sort(),
        [1, 2, 3, 4],
        'each wrong code counted once, in one order',
      );
      assert.equal(codes.filter((c) => c.code === 'PIN_LOCKED').length, 6);

      // Another admin's right code, raced on both services: accepted once.
      const phone2 = uniquePhone();
      const env2 = { ADMIN_PHONES: e164(phone2), ADMIN_SECOND_FACTOR: 'totp' };
      const other = await createWorld({ env: env2 });
      const otherTwin = onPostgres() ? await createWorld({ env: env2, sameDatabaseAs: other }) : other;
      try {
        const admin2 = await signIn(other, phone2);
        const { secret: secret2 } = ok(
          await post<Enrolment>(other, 'adminEnrolTotp', {}, { token: admin2.accessToken }),
        );
        ok(
          await post(
            other,
            'adminConfirmTotp',
            { code: codeAt(other, secret2) },
            { token: admin2.accessToken },
          ),
        );
        advance(other, 30);
        if (otherTwin !== other) advance(otherTwin, 30);
        const code = codeAt(other, secret2);
        const raced = await Promise.all(
          Array.from({ length: 4 }, (_, i) =>
            post(i % 2 === 0 ? other : otherTwin, 'adminVerifyTotp', { code }, { token: admin2.accessToken }),
          ),
        );
        assert.equal(raced.filter((a) => a.status === 200).length, 1, 'one code, one use');
        assert.deepEqual(
          raced.filter((a) => a.status !== 200).map((a) => failure(a).code),
          Array(3).fill('FORBIDDEN'),
        );
      } finally {
        if (otherTwin !== other) await otherTwin.close();
        await other.close();
      }
    } finally {
      if (ownTwin !== own) await ownTwin.close();
      await own.close();
    }
  });

  it("needs the admin role for the second factor's own operations", async () => {
    const user = await signIn(world);
    for (const name of ['adminEnrolTotp', 'adminConfirmTotp', 'adminVerifyTotp']) {
      const refused = failure(
        await post(world, name, name === 'adminEnrolTotp' ? {} : { code: '123456' }, {
          token: user.accessToken,
        }),
      );
      assert.equal(refused.status, 403, name);
      assert.equal(refused.code, 'FORBIDDEN', name);
    }
    const malformed = failure(
      await post(
        world,
        'adminVerifyTotp',
        { code: '12345' },
        { token: (await signIn(world, adminPhones[0])).accessToken },
      ),
    );
    assert.equal(malformed.code, 'VALIDATION_ERROR');
    assert.equal(
      failure(await post(world, 'adminVerifyTotp', { code: '123456' }, { idempotencyKey: randomUUID() }))
        .code,
      'UNAUTHENTICATED',
    );
  });
});

// An administrator's lost authenticator, reset by another administrator (four eyes, decision 0039):
// the enrolment removed and every session of theirs ended, their admin operations refused until they
// enrol again, the reset in the audit log and in their inbox. On PostgreSQL the races are split
// across two services on one database: two admins resetting each other at once, and two resetting
// the same one.
describe(`an admin's lost authenticator, reset by another (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  const adminPhones = Array.from({ length: 7 }, () => uniquePhone());
  let world: World;
  let twin: World;
  before(async () => {
    const env = { ADMIN_PHONES: adminPhones.map(e164).join(','), ADMIN_SECOND_FACTOR: 'totp' };
    world = await createWorld({ env });
    twin = onPostgres() ? await createWorld({ env, sameDatabaseAs: world }) : world;
  });
  after(async () => {
    if (twin !== world) await twin.close();
    await world.close();
  });

  type Reset = { adminId: string; revoked: number };
  const reset = (by: SignedIn, adminId: string, on = world) =>
    post<Reset>(
      on,
      'adminResetTotp',
      { adminId, reason: 'lost phone, confirmed in person' },
      { token: by.accessToken },
    );
  const listAlerts = (admin: SignedIn) =>
    get(world, 'adminListAlerts', { limit: 5 }, { token: admin.accessToken });

  it('removes the enrolment and ends the sessions; the admin enrols again, and is told', async () => {
    const lost = await signIn(world, adminPhones[0]);
    const secondDevice = await signInAgain(world, adminPhones[0]!);
    const lostSecret = await enrolAndConfirm(world, lost);
    const other = await signIn(world, adminPhones[1]);
    await enrolAndConfirm(world, other);

    const done = ok(await reset(other, lost.userId));
    assert.deepEqual(done, { adminId: lost.userId, revoked: 2 }, 'both sessions of theirs ended');
    for (const session of [lost, secondDevice])
      assert.equal(failure(await listAlerts(session)).code, 'UNAUTHENTICATED');
    assert.equal(
      failure(await post(world, 'refreshSession', { refreshToken: lost.refreshToken })).code,
      'UNAUTHENTICATED',
      'the refresh token ended with the session',
    );
    // The resetting admin's own session goes on.
    ok(await listAlerts(other));
    const gone = await world.ctx.db
      .selectFrom('admin_totp')
      .select('user_id')
      .where('user_id', '=', lost.userId)
      .executeTakeFirst();
    assert.equal(gone, undefined);

    // Signed in again (an SMS to their phone), the admin's operations wait for a new enrolment.
    const back = await signInAgain(world, adminPhones[0]!);
    const refused = failure(await listAlerts(back));
    assert.deepEqual(
      [refused.status, refused.code, refused.details],
      [403, 'SECOND_FACTOR_REQUIRED', { enrolled: false }],
    );
    // The lost authenticator's codes open nothing: there is no secret for them.
    advance(world, 30);
    assert.equal(
      failure(
        await post(
          world,
          'adminVerifyTotp',
          { code: codeAt(world, lostSecret) },
          { token: back.accessToken },
        ),
      ).code,
      'CONFLICT',
    );
    const newSecret = await enrolAndConfirm(world, back);
    assert.notEqual(newSecret, lostSecret);
    ok(await listAlerts(back));

    // In the audit log, with the reason, under the admin who reset it.
    const audit = ok(
      await get<{ items: Array<{ adminId: string; input: unknown; outcome: string }> }>(
        world,
        'adminListAuditLog',
        { operation: 'adminResetTotp', adminId: other.userId, limit: 10 },
        { token: back.accessToken },
      ),
    );
    assert.deepEqual(
      audit.items.map((row) => [row.adminId, row.input, row.outcome]),
      [[other.userId, { adminId: lost.userId, reason: 'lost phone, confirmed in person' }, 'ok']],
    );
    // And in the admin's inbox (security mail, which cannot be switched off).
    await runDomainEvents(world);
    const told = (await notificationsOf(world, back)).filter((n) => n.kind === 'second_factor_reset');
    assert.equal(told.length, 1);
    assert.doesNotMatch(told[0]!.body, /confirmed in person/, "the operators' reason is theirs");
  });

  it('refuses your own (403 four_eyes), and 404 for anyone not an admin, unknown or not enrolled', async () => {
    const admin = await signIn(world, adminPhones[2]);
    await enrolAndConfirm(world, admin);
    const own = failure(await reset(admin, admin.userId));
    assert.deepEqual([own.status, own.code, own.details], [403, 'FORBIDDEN', { reason: 'four_eyes' }]);
    const person = await signIn(world);
    const unenrolled = await signIn(world, adminPhones[3]);
    for (const [adminId, what] of [
      [person.userId, 'a person who is no admin'],
      [randomUUID(), 'nobody'],
      [unenrolled.userId, 'an admin with no enrolment'],
    ] as const) {
      const missing = failure(await reset(admin, adminId));
      assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND'], what);
    }
    // Nothing of the caller changed.
    ok(await listAlerts(admin));
    // An admin whose own session is not verified cannot reset anyone's.
    const refused = failure(await reset(unenrolled, admin.userId));
    assert.equal(refused.code, 'SECOND_FACTOR_REQUIRED');
    ok(await listAlerts(admin));
    // Neither can a person who is not an admin.
    assert.equal(failure(await reset(person, admin.userId)).code, 'FORBIDDEN');
    // The refusals are in the audit log too, with their codes.
    const rows = await world.ctx.db
      .selectFrom('audit_log')
      .select(['admin_id', 'outcome'])
      .where('operation', '=', 'adminResetTotp')
      .where('admin_id', 'in', [admin.userId, unenrolled.userId])
      .execute();
    assert.deepEqual(rows.map((row) => row.outcome).sort(), [
      'FORBIDDEN',
      'NOT_FOUND',
      'NOT_FOUND',
      'NOT_FOUND',
      'SECOND_FACTOR_REQUIRED',
    ]);
  });

  it('lets one of two admins resetting each other at once win, and one reset of one admin', async () => {
    const first = await signIn(world, adminPhones[4]);
    const second = await signIn(twin, adminPhones[5]);
    await enrolAndConfirm(world, first);
    await enrolAndConfirm(world, second);
    const mutual = await Promise.all([reset(first, second.userId, world), reset(second, first.userId, twin)]);
    assert.deepEqual(
      mutual.map((a) => a.status).sort(),
      [200, 401],
      'the loser finds its own session ended, rather than both losing their factor',
    );
    const left = await world.ctx.db
      .selectFrom('admin_totp')
      .select('user_id')
      .where('user_id', 'in', [first.userId, second.userId])
      .execute();
    assert.equal(left.length, 1, "the winner's enrolment stands");
    const winner = mutual[0]!.status === 200 ? first : second;
    const loser = winner === first ? second : first;
    ok(await listAlerts(winner));

    // The loser, enrolled again, and a third admin both reset the winner at once: one reset, once.
    const loserBack = await signInAgain(world, loser === first ? adminPhones[4]! : adminPhones[5]!);
    await enrolAndConfirm(world, loserBack);
    const third = await signIn(twin, adminPhones[6]);
    await enrolAndConfirm(world, third);
    const resetsAudited = () =>
      world.ctx.db
        .selectFrom('audit_log')
        .select(['id', 'outcome'])
        .where('operation', '=', 'adminResetTotp')
        .where('admin_id', 'in', [loserBack.userId, third.userId])
        .execute();
    const earlier = new Set((await resetsAudited()).map((row) => row.id));
    const raced = await Promise.all([
      reset(loserBack, winner.userId, world),
      reset(third, winner.userId, twin),
    ]);
    assert.deepEqual(raced.map((a) => a.status).sort(), [200, 404]);
    const done = raced.find((a) => a.status === 200)!;
    assert.equal(ok<Reset>(done).revoked, 1);
    const audited = (await resetsAudited()).filter((row) => !earlier.has(row.id));
    assert.deepEqual(audited.map((row) => row.outcome).sort(), ['NOT_FOUND', 'ok']);
  });
});

describe('ADMIN_SECOND_FACTOR', () => {
  it('is none in the sandbox and totp outside it, and production needs ADMIN_TOTP_KEY for totp', () => {
    assert.equal(loadConfig({ NODE_ENV: 'test', SANDBOX: '1' }).adminSecondFactor.mode, 'none');
    assert.equal(
      loadConfig({ NODE_ENV: 'test', SANDBOX: '1', ADMIN_SECOND_FACTOR: 'totp' }).adminSecondFactor.mode,
      'totp',
    );
    assert.throws(
      () => loadConfig({ NODE_ENV: 'test', SANDBOX: '1', ADMIN_SECOND_FACTOR: 'sms' }),
      /ADMIN_SECOND_FACTOR/,
    );
    assert.throws(
      () => loadConfig({ NODE_ENV: 'test', SANDBOX: '1', ADMIN_TOTP_KEY: 'short' }),
      /ADMIN_TOTP_KEY/,
    );
  });
});
