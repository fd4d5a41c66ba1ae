import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { UserView } from '../../src/auth/users.ts';
import { notificationEmailJob } from '../../src/notifications/jobs.ts';
import { e164 } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, get, ok, post, readSms, type SignedIn, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import { lock, saver } from '../savings/support.ts';

// Transactional email against a real SMTP server started here (smtp-server), each message parsed
// with mailparser: only to a verified address, only for kinds switched on, retried through an outage.

describe(`transactional email (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let smtp: SMTPServer;
  const received: ParsedMail[] = [];
  /** While true the server refuses every message with a temporary failure (an outage). */
  let refusing = false;

  before(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData(stream, _session, callback) {
        if (refusing) {
          stream.resume();
          stream.on('end', () =>
            callback(Object.assign(new Error('try again later'), { responseCode: 451 })),
          );
          return;
        }
        simpleParser(stream)
          .then((mail) => {
            received.push(mail);
            callback();
          })
          .catch(callback);
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    const { port } = smtp.server.address() as AddressInfo;
    world = await createWorld({
      env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_FROM: 'billrail <no-reply@billrail.test>' },
    });
  });
  after(async () => {
    await world.close();
    await new Promise<void>((resolve) => smtp.close(resolve));
  });

  const to = (address: string) =>
    received.filter((m) => m.to !== undefined && JSON.stringify(m.to).includes(address));

  async function verifiedSaver(address: string): Promise<SignedIn> {
    const user = await saver(world, 5_000);
    const set = ok(
      await post<UserView>(
        world,
        'updateProfile',
        { email: address.toUpperCase() },
        { token: user.accessToken },
      ),
    );
    assert.deepEqual([set.email, set.emailVerified], [address, false]);
    const [codeMail] = to(address);
    assert.ok(codeMail !== undefined, 'the code was emailed');
    const code = /\b(\d{6})\b/.exec(codeMail.text ?? '')![1]!;
    const wrong = code === '000000' ? '111111' : '000000';
    const refused = expectError(
      await post(world, 'verifyEmail', { code: wrong }, { token: user.accessToken }),
      400,
      'VALIDATION_ERROR',
    );
    assert.equal(refused.details?.attemptsLeft, 4);
    const verified = ok(await post<UserView>(world, 'verifyEmail', { code }, { token: user.accessToken }));
    assert.equal(verified.emailVerified, true);
    assert.equal(
      ok(await get<UserView>(world, 'getMe', {}, { token: user.accessToken })).emailVerified,
      true,
    );
    expectError(
      await post(world, 'verifyEmail', { code }, { token: user.accessToken }),
      400,
      'VALIDATION_ERROR',
    );
    return user;
  }

  it('emails a verified address each event, in HTML and text, from the configured sender', async () => {
    const user = await verifiedSaver('ada@example.test');
    await lock(world, user, 1_000);
    await runDomainEvents(world);
    const { done, failed } = await runQueuedJobs(world, notificationEmailJob);
    assert.deepEqual([done.length > 0, failed.length], [true, 0]);
    const mail = to('ada@example.test').find((m) => m.subject === 'Savings locked');
    assert.ok(mail !== undefined, JSON.stringify(to('ada@example.test').map((m) => m.subject)));
    assert.match(mail.text ?? '', /₦1,000\.00 is locked for 30 days/);
    assert.match(String(mail.html), /<h1[^>]*>Savings locked<\/h1>/);
    assert.match(String(mail.html), /₦1,000\.00 is locked for 30 days/);
    assert.equal(mail.from?.value[0]?.address, 'no-reply@billrail.test');
  });

  it('sends nothing to an unverified address, nor for a kind switched off', async () => {
    const unverified = await saver(world, 2_000);
    ok(await post(world, 'updateProfile', { email: 'bola@example.test' }, { token: unverified.accessToken }));
    await lock(world, unverified, 500);

    const choosy = await verifiedSaver('chidi@example.test');
    const settings = ok(
      await post<{ email: Record<string, boolean>; push: Record<string, boolean> }>(
        world,
        'updateNotificationSettings',
        { email: { lock_created: false } },
        { token: choosy.accessToken },
      ),
    );
    assert.deepEqual(
      [settings.email.lock_created, settings.email.lock_broken, settings.push.lock_created],
      [false, true, true],
    );
    assert.deepEqual(
      ok(await get(world, 'getNotificationSettings', {}, { token: choosy.accessToken })),
      settings,
    );
    expectError(
      await post(
        world,
        'updateNotificationSettings',
        { email: { lock_created: 'no' } },
        { token: choosy.accessToken },
      ),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await post(
        world,
        'updateNotificationSettings',
        { sms: { lock_created: false } },
        { token: choosy.accessToken },
      ),
      400,
      'VALIDATION_ERROR',
    );
    const created = await lock(world, choosy, 500);
    ok(await post(world, 'breakSavingsLock', { lockId: created.id }, { token: choosy.accessToken }));
    await runDomainEvents(world);
    await runQueuedJobs(world, notificationEmailJob);
    assert.deepEqual(
      to('bola@example.test').map((m) => m.subject),
      ['Your billrail verification code'],
    );
    assert.deepEqual(
      to('chidi@example.test')
        .map((m) => m.subject)
        .filter((s) => !s?.includes('verification')),
      ['Savings lock broken'],
    );
  });

  it('retries through an SMTP outage and delivers once after it', async () => {
    const user = await verifiedSaver('dayo@example.test');
    await lock(world, user, 700);
    await runDomainEvents(world);
    refusing = true;
    const during = await runQueuedJobs(world, notificationEmailJob);
    refusing = false;
    assert.equal(during.failed.length, 1, 'the job fails, for pg-boss to retry');
    assert.equal(to('dayo@example.test').filter((m) => m.subject === 'Savings locked').length, 0);
    // The retry (pg-boss runs it again after its backoff; here at once).
    await world.ctx.jobs.runNow(notificationEmailJob, during.failed[0]!.data);
    assert.equal(to('dayo@example.test').filter((m) => m.subject === 'Savings locked').length, 1);
  });

  it('always sends security mail (PIN changed, sign-in from a new device), which cannot be switched off', async () => {
    const user = await verifiedSaver('efe@example.test');
    expectError(
      await post(
        world,
        'updateNotificationSettings',
        { email: { pin_changed: false } },
        { token: user.accessToken },
      ),
      400,
      'VALIDATION_ERROR',
    );
    const settings = ok(
      await get<{ email: Record<string, boolean> }>(
        world,
        'getNotificationSettings',
        {},
        { token: user.accessToken },
      ),
    );
    assert.deepEqual([settings.email.pin_changed, settings.email.new_device_sign_in], [true, true]);
    // Everything that can be switched off, off.
    const off = Object.fromEntries(
      Object.keys(settings.email)
        .filter(
          (k) =>
            ![
              'pin_changed',
              'new_device_sign_in',
              'account_frozen',
              'account_unfrozen',
              'second_factor_reset',
              'account_closing',
              'account_closure_cancelled',
            ].includes(k),
        )
        .map((k) => [k, false]),
    );
    ok(await post(world, 'updateNotificationSettings', { email: off }, { token: user.accessToken }));

    // The first PIN is no news; changing it is.
    ok(await post(world, 'setTransactionPin', { pin: '2580' }, { token: user.accessToken }));
    world.ctx.sandboxClock!.advance(61);
    ok(await post(world, 'requestOtp', { phone: user.phone }));
    const { code } = await readSms(world, e164(user.phone));
    ok(await post(world, 'setTransactionPin', { pin: '1357', otpCode: code }, { token: user.accessToken }));

    // A sign-in from a browser this user never used; then from it again.
    const android = { 'user-agent': 'Mozilla/5.0 (Linux; Android 14; SM-A155F) Chrome/131.0 Mobile' };
    for (let i = 0; i < 2; i++) {
      world.ctx.sandboxClock!.advance(61);
      ok(await post(world, 'requestOtp', { phone: user.phone }));
      const sms = await readSms(world, e164(user.phone));
      ok(await post(world, 'verifyOtp', { phone: user.phone, code: sms.code }, { headers: android }));
    }
    await runDomainEvents(world);
    await runQueuedJobs(world, notificationEmailJob);
    const security = to('efe@example.test').filter((m) => !m.subject?.includes('verification'));
    assert.deepEqual(security.map((m) => m.subject).sort(), [
      'New sign-in to your account',
      'Your transaction PIN was changed',
    ]);
    assert.match(security.find((m) => m.subject?.startsWith('New'))!.text ?? '', /Android 14/);
    for (const m of security) assert.doesNotMatch(`${m.text}${m.html}`, /1357|2580/, 'never the PIN');
  });
});
