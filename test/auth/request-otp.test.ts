import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createHttpSmsGateway, type SmsSender } from '../../src/providers/sms/sms-gateway.ts';
import { SANDBOX_SMS_API_KEY } from '../../src/sandbox/state.ts';
import {
  createWorld,
  failure,
  ok,
  passOtpResendWindow,
  post,
  readSms,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { advanceClock, e164, issuePaths, lastSms } from './support.ts';

// requestOtp (API.md section 4): one 6-digit code per phone per 60 s, sent by SMS, whatever shape
// the phone number arrives in.

describe('requestOtp', () => {
  let world: World;
  let realSend: SmsSender['send'];
  /** Every SMS the service handed to the gateway in this file, in order. */
  const sent: Array<{ to: string; text: string }> = [];

  before(async () => {
    world = await createWorld();
    // A counting wrapper around the real gateway client (which still sends to the sandbox), so
    // that "exactly one SMS" is observed directly rather than inferred from the last message. Put on
    // the client itself: the auth module holds the client it was built with.
    const sms = world.ctx.sms;
    realSend = sms.send.bind(sms);
    sms.send = async (to, text) => {
      sent.push({ to, text });
      await realSend(to, text);
    };
  });
  after(async () => {
    world.ctx.sms.send = realSend;
    await world.close();
  });

  const sentTo = (phone: string) => sent.filter((sms) => sms.to === phone);

  it('sends a 6-digit code by SMS and answers expiresInSeconds 300', async () => {
    const phone = uniquePhone();
    const result = ok(await post<{ expiresInSeconds: number }>(world, 'requestOtp', { phone }));
    assert.deepEqual(result, { expiresInSeconds: 300 });
    const sms = await readSms(world, e164(phone));
    assert.equal(sms.phone, e164(phone));
    assert.match(sms.code, /^\d{6}$/);
    assert.ok(sms.message.includes(sms.code), `the SMS text carries the code: ${sms.message}`);
    assert.equal(sentTo(e164(phone)).length, 1);
  });

  it('accepts 0803..., 2348031... and +234803... and they all reach the same E.164 user', async () => {
    const local = uniquePhone();
    const international = e164(local);
    const shapes = [local, international.slice(1), international];
    const userIds = new Set<string>();
    // Each round asks with one shape and signs in with the next, so every shape is used both ways.
    for (const [index, asked] of shapes.entries()) {
      const signedInWith = shapes[(index + 1) % shapes.length]!;
      // A used code keeps the 60 s resend window closed; each round comes a minute later.
      if (index > 0) passOtpResendWindow(world);
      ok(await post(world, 'requestOtp', { phone: asked }));
      const sms = await readSms(world, international);
      assert.equal(sms.phone, international);
      const session = ok(
        await post<{ user: { id: string; phone: string } }>(world, 'verifyOtp', {
          phone: signedInWith,
          code: sms.code,
        }),
      );
      assert.equal(session.user.phone, international);
      userIds.add(session.user.id);
    }
    assert.equal(userIds.size, 1, 'the three shapes are one user');
    assert.deepEqual(
      sentTo(international).map((sms) => sms.to),
      [international, international, international],
    );
    const rows = await world.ctx.db
      .selectFrom('users')
      .select('phone')
      .where('phone', 'in', [...shapes])
      .execute();
    assert.deepEqual(rows, [{ phone: international }]);
  });

  it('keeps the 60-second window closed after the code is used to sign in', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, phone);
    ok(await post(world, 'verifyOtp', { phone, code }));
    const error = failure(await post(world, 'requestOtp', { phone }));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'RATE_LIMITED');
    passOtpResendWindow(world);
    ok(await post(world, 'requestOtp', { phone }));
  });

  it('sends at most 10 codes per phone in 24 hours', async () => {
    const phone = uniquePhone();
    for (let sent = 1; sent <= 10; sent++) {
      ok(await post(world, 'requestOtp', { phone }));
      passOtpResendWindow(world);
    }
    const error = failure(await post(world, 'requestOtp', { phone }));
    assert.equal(error.status, 429);
    assert.equal(error.code, 'RATE_LIMITED');
    const retryAfterSeconds = (error.details as { retryAfterSeconds: number }).retryAfterSeconds;
    // The window started with the first code, 10 minutes and a few seconds ago.
    assert.ok(
      retryAfterSeconds > 23 * 3600 && retryAfterSeconds <= 24 * 3600,
      `retry after ${retryAfterSeconds} s`,
    );
    world.ctx.sandboxClock!.advance(retryAfterSeconds);
    ok(await post(world, 'requestOtp', { phone }));
  });

  it('does not store a 429 under the Idempotency-Key: the same key works once the wait is over', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const key = randomUUID();
    const limited = await post(world, 'requestOtp', { phone }, { idempotencyKey: key });
    assert.equal(limited.status, 429);
    passOtpResendWindow(world);
    const retried = await post(world, 'requestOtp', { phone }, { idempotencyKey: key });
    assert.equal(retried.status, 200);
    assert.equal(retried.headers.get('idempotent-replayed'), null);
  });

  it('counts the 60-second limit per phone, not per spelling of it', async () => {
    const local = uniquePhone();
    ok(await post(world, 'requestOtp', { phone: local }));
    for (const phone of [e164(local), e164(local).slice(1)]) {
      const error = failure(await post(world, 'requestOtp', { phone }));
      assert.equal(error.status, 429);
      assert.equal(error.code, 'RATE_LIMITED');
    }
    assert.equal(sentTo(e164(local)).length, 1);
  });

  for (const [label, phone] of [
    ['a Lagos landline', '014627000'],
    ['an 11-digit landline', '02012345678'],
    ['10 digits without the leading 0', '8031234567'],
    ['10 digits with the leading 0', '0803123456'],
    ['12 digits', '080312345678'],
    ['letters', '0803ABCDEFG'],
    ['words', 'not-a-phone'],
    ['a UK number', '+447911123456'],
    ['a +234 landline', '+23412345678'],
    ['an empty string', ''],
    ['a number instead of a string', 8031234567],
  ] as const) {
    it(`refuses ${label} with 400 VALIDATION_ERROR at data.phone and sends nothing`, async () => {
      const sentBefore = sent.length;
      const error = failure(await post(world, 'requestOtp', { phone }));
      assert.equal(error.status, 400);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(issuePaths(error.details).includes('data.phone'), JSON.stringify(error.details));
      assert.equal(sent.length, sentBefore, 'no SMS for invalid input');
    });
  }

  it('refuses a missing phone and unknown fields with 400 and sends nothing', async () => {
    const sentBefore = sent.length;
    const missing = failure(await post(world, 'requestOtp', {}));
    assert.equal(missing.status, 400);
    assert.equal(missing.code, 'VALIDATION_ERROR');
    assert.ok(issuePaths(missing.details).includes('data.phone'));
    const unknown = failure(await post(world, 'requestOtp', { phone: uniquePhone(), channel: 'voice' }));
    assert.equal(unknown.status, 400);
    assert.equal(unknown.code, 'VALIDATION_ERROR');
    assert.equal(sent.length, sentBefore);
  });

  it('refuses a request without an Idempotency-Key and sends nothing', async () => {
    const phone = uniquePhone();
    const error = failure(await post(world, 'requestOtp', { phone }, { idempotencyKey: null }));
    assert.equal(error.status, 400);
    assert.equal(error.code, 'IDEMPOTENCY_KEY_REQUIRED');
    assert.equal(sentTo(e164(phone)).length, 0);
    assert.equal(await lastSms(world, e164(phone)), null);
  });

  it('answers a second request within 60 s with 429 RATE_LIMITED and a Retry-After header', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const first = await readSms(world, e164(phone));

    const response = await post(world, 'requestOtp', { phone });
    const error = failure(response);
    assert.equal(error.status, 429);
    assert.equal(error.code, 'RATE_LIMITED');
    const retryAfter = Number(response.headers.get('retry-after'));
    assert.ok(
      Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60,
      `Retry-After ${retryAfter}`,
    );
    assert.equal(error.details?.retryAfterSeconds, retryAfter);

    await advanceClock(world, 30);
    const later = await post(world, 'requestOtp', { phone });
    assert.equal(failure(later).status, 429);
    const laterRetryAfter = Number(later.headers.get('retry-after'));
    assert.ok(laterRetryAfter >= 1 && laterRetryAfter <= 30, `Retry-After after 30 s: ${laterRetryAfter}`);

    // Nothing was sent by the refused requests: the last SMS is still the first one.
    assert.equal(sentTo(e164(phone)).length, 1);
    assert.deepEqual(await readSms(world, e164(phone)), first);
    // The refused requests did not replace the code either.
    ok(await post(world, 'verifyOtp', { phone, code: first.code }));
  });

  it('sends a new code after 60 s, and the old code no longer works', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const first = await readSms(world, e164(phone));
    await advanceClock(world, 60);
    ok(await post(world, 'requestOtp', { phone }));
    const second = await readSms(world, e164(phone));
    const texts = sentTo(e164(phone)).map((sms) => sms.text);
    assert.equal(texts.length, 2);
    assert.ok(texts[1]!.includes(second.code), 'the phone shows the second SMS');
    // A one-in-a-million draw can repeat the code; then "the old code" is the new one.
    if (second.code !== first.code) {
      const error = failure(await post(world, 'verifyOtp', { phone, code: first.code }));
      assert.equal(error.status, 401);
      assert.equal(error.code, 'UNAUTHENTICATED');
    }
    ok(await post(world, 'verifyOtp', { phone, code: second.code }));
  });

  it('answers 502 when the SMS gateway is unreachable and frees the slot for an immediate retry', async () => {
    const phone = uniquePhone();
    // The real gateway client, pointed at a port where nothing listens: a genuine network failure.
    // Put on the client the auth module holds, as the counting wrapper above is.
    const unreachable = createHttpSmsGateway({
      baseUrl: 'http://127.0.0.1:9/__sandbox/sms-gateway',
      apiKey: SANDBOX_SMS_API_KEY,
      senderId: world.ctx.config.sms.senderId,
      timeoutMs: world.ctx.config.sms.timeoutMs,
    });
    const counted = world.ctx.sms.send;
    world.ctx.sms.send = unreachable.send;
    let response: Awaited<ReturnType<typeof post>>;
    try {
      response = await post(world, 'requestOtp', { phone });
    } finally {
      world.ctx.sms.send = counted;
    }
    const error = failure(response);
    assert.equal(error.status, 502);
    assert.equal(error.code, 'UPSTREAM_UNAVAILABLE');
    assert.equal(await lastSms(world, e164(phone)), null, 'nothing reached the phone');
    // The failed send did not use up the 60 s slot: asking again at once sends a working code.
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, e164(phone));
    ok(await post(world, 'verifyOtp', { phone, code }));
  });

  it('sends exactly one SMS when 10 requests for a new phone race (the others get 429)', async () => {
    const phone = uniquePhone();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(world, 'requestOtp', { phone })),
    );
    const statuses = responses.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 429, 429, 429, 429, 429, 429, 429, 429, 429]);
    for (const response of responses.filter((r) => r.status === 429)) {
      assert.equal(failure(response).code, 'RATE_LIMITED');
      assert.ok(Number(response.headers.get('retry-after')) >= 1);
    }
    assert.equal(sentTo(e164(phone)).length, 1);
    // The one code that was sent is the one that is stored.
    const { code } = await readSms(world, e164(phone));
    ok(await post(world, 'verifyOtp', { phone, code }));
  });

  it('sends exactly one SMS when 10 requests race after the 60 s window reopens', async () => {
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const first = await readSms(world, e164(phone));
    await advanceClock(world, 61);
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => post(world, 'requestOtp', { phone })),
    );
    assert.equal(responses.filter((r) => r.status === 200).length, 1);
    assert.equal(responses.filter((r) => r.status === 429).length, 9);
    assert.equal(sentTo(e164(phone)).length, 2);
    const second = await readSms(world, e164(phone));
    if (second.code !== first.code) {
      assert.equal(failure(await post(world, 'verifyOtp', { phone, code: first.code })).status, 401);
    }
    ok(await post(world, 'verifyOtp', { phone, code: second.code }));
  });
});
