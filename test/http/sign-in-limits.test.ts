import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { until } from '../helpers/until.ts';
import {
  type ApiResponse,
  createWorld,
  failure,
  ok,
  post,
  readSms,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

// Sign-in behind a carrier address (API.md section 17.1, decision 0029): anonymous calls are counted
// per address with a limit sized for a carrier's shared address (CGNAT), and the sign-in operations
// per phone as well. The service runs with the limits an unconfigured start gets, not the test
// worlds' unbounded ones. It trusts one proxy hop, so each X-Forwarded-For below is a caller's
// address as our own load balancer would report it. With REDIS_URL set the counts live in Redis.

const defaults = loadConfig({ NODE_ENV: 'test', SANDBOX: '1' });
/** A carrier's shared address (RFC 6598, the CGNAT range). */
const CARRIER = '100.64.12.34';
const PEOPLE = 300;
const CONCURRENCY = 10;

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

/** Runs `work` on each item, `concurrency` at a time; the results in the items' order. */
async function eachConcurrently<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < items.length; index = next++) results[index] = await work(items[index]!);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

/** The three shapes of one number a client may send: 0803..., 234803... and +234803.... */
function shapes(local: string): string[] {
  const international = `234${local.slice(1)}`;
  return [local, international, `+${international}`];
}

function assertLimited(response: ApiResponse, label: string): void {
  assert.equal(response.status, 429, `${label}: ${JSON.stringify(response.body)}`);
  assert.equal(failure(response).code, 'RATE_LIMITED');
  const retryAfter = response.headers.get('retry-after') ?? '';
  assert.match(retryAfter, /^\d+$/, 'Retry-After in whole seconds');
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= 60, `Retry-After ${retryAfter}`);
}

/**
 * Waits until the service counts in Redis: until its connection is up, a process counts on its own
 * (rate-limit-store.ts), and the counts below must be one count. Probes from an address of its own.
 */
async function redisCounting(world: World): Promise<void> {
  const probe = '192.0.2.1';
  const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 2 });
  try {
    await until(async () => {
      await post(world, 'requestOtp', { phone: 'probe' }, from(probe));
      return (await redis.exists(`${world.ctx.rateLimitNamespace}ip:${probe}`)) === 1;
    }, 'a count in Redis');
  } finally {
    await redis.quit();
  }
}

describe(`sign-in limits behind a carrier address (${process.env.REDIS_URL ? 'Redis' : 'memory'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({
      env: {
        RATE_LIMIT_PER_MINUTE: String(defaults.rateLimitPerMinute),
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(defaults.rateLimitAnonymousPerMinute),
        RATE_LIMIT_PHONE_PER_MINUTE: String(defaults.rateLimitPhonePerMinute),
        TRUST_PROXY_HOPS: '1',
      },
    });
    if (process.env.REDIS_URL !== undefined) await redisCounting(world);
  });
  after(() => world?.close());

  it('runs with the default limits', () => {
    assert.equal(world.ctx.config.rateLimitPerMinute, 120);
    assert.equal(world.ctx.config.rateLimitAnonymousPerMinute, 1_500);
    assert.equal(world.ctx.config.rateLimitPhonePerMinute, 5);
  });

  it(`signs in ${PEOPLE} people behind one address within a minute`, async () => {
    const statuses = await eachConcurrently(
      Array.from({ length: PEOPLE }, () => uniquePhone()),
      CONCURRENCY,
      async (phone) => {
        const asked = await post(world, 'requestOtp', { phone }, from(CARRIER));
        if (asked.status !== 200) return `requestOtp ${asked.status}`;
        const { code } = await readSms(world, `+234${phone.slice(1)}`);
        const signedIn = await post(world, 'verifyOtp', { phone, code }, from(CARRIER));
        return signedIn.status === 200 ? 'signed in' : `verifyOtp ${signedIn.status}`;
      },
    );
    assert.deepEqual(
      statuses.filter((status) => status !== 'signed in'),
      [],
      'every sign-in went through',
    );
    // The address's count says all 600 calls fell in one window (a slower run would have started a
    // second window and proved less). The call below is the 601st: input that is no phone is a 400
    // VALIDATION_ERROR, counted against the address and never against a phone.
    const garbage = await post(world, 'requestOtp', { phone: 'not a phone' }, from(CARRIER));
    assert.equal(garbage.status, 400);
    assert.equal(failure(garbage).code, 'VALIDATION_ERROR');
    assert.equal(
      garbage.headers.get('x-ratelimit-remaining'),
      String(defaults.rateLimitAnonymousPerMinute - 2 * PEOPLE - 1),
    );
  });

  it('limits one phone asked for from many addresses, in any of its shapes', async () => {
    const phone = uniquePhone();
    const phoneShapes = shapes(phone);
    const limit = defaults.rateLimitPhonePerMinute;
    // Asking for codes: the first is sent; the next ones, within the 60 s resend window, are refused
    // by the database's own count, which says when a new code may be asked for; past the per-phone
    // limit the refusal comes before the database, without those details.
    const asks: ApiResponse[] = [];
    for (let i = 0; i <= limit; i++) {
      asks.push(await post(world, 'requestOtp', { phone: phoneShapes[i % 3] }, from(`10.1.0.${i + 1}`)));
    }
    assert.equal(asks[0]!.status, 200);
    for (const [i, ask] of asks.slice(1, limit).entries()) {
      assert.equal(ask.status, 429, `ask ${i + 2}`);
      assert.equal(typeof failure(ask).details?.retryAfterSeconds, 'number', 'the resend window');
    }
    assertLimited(asks[limit]!, 'the ask past the per-phone limit');
    assert.equal(failure(asks[limit]!).details, undefined, 'refused before the database');

    // Typing codes: wrong ones are counted by the code's own attempts (401), until the per-phone
    // limit refuses the next try, the right code too, from yet another address.
    const { code } = await readSms(world, phoneShapes[2]!);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < limit; i++) {
      const tried = await post(
        world,
        'verifyOtp',
        { phone: phoneShapes[i % 3], code: wrong },
        from(`10.2.0.${i + 1}`),
      );
      assert.equal(tried.status, 401, `try ${i + 1}: ${JSON.stringify(tried.body)}`);
    }
    assertLimited(
      await post(world, 'verifyOtp', { phone: phoneShapes[limit % 3], code }, from('10.2.0.99')),
      'the try past the per-phone limit',
    );

    // Another phone from the same addresses is not limited: the count is the phone's.
    const other = uniquePhone();
    ok(await post(world, 'requestOtp', { phone: other }, from('10.1.0.1')));
    const sms = await readSms(world, `+234${other.slice(1)}`);
    ok(await post(world, 'verifyOtp', { phone: other, code: sms.code }, from('10.2.0.1')));
  });

  it('answers input that is no phone with 400, never a per-phone limit', async () => {
    const limit = defaults.rateLimitPhonePerMinute;
    for (let i = 0; i <= limit + 1; i++) {
      for (const operation of ['requestOtp', 'verifyOtp']) {
        const answer = await post(world, operation, { phone: '0803', code: '123456' }, from('10.3.0.1'));
        assert.equal(answer.status, 400, `${operation} ${i + 1}: ${JSON.stringify(answer.body)}`);
        assert.equal(failure(answer).code, 'VALIDATION_ERROR');
      }
    }
  });

  it('still refuses a flood from one address past the anonymous limit', async () => {
    const flood = '198.51.100.7';
    const limit = defaults.rateLimitAnonymousPerMinute;
    // Cheap calls (input that is no phone) fill the address's minute.
    const statuses = await eachConcurrently(
      Array.from({ length: limit }, (_, i) => i),
      CONCURRENCY,
      async () => (await post(world, 'requestOtp', { phone: 'flood' }, from(flood))).status,
    );
    assert.deepEqual(
      statuses.filter((status) => status !== 400),
      [],
    );
    assertLimited(await post(world, 'requestOtp', { phone: uniquePhone() }, from(flood)), 'past the limit');
    // The address's neighbours are not.
    ok(await post(world, 'requestOtp', { phone: uniquePhone() }, from('198.51.100.8')));
  });

  it('keeps the per-phone counts in Redis when REDIS_URL is set', {
    skip: !process.env.REDIS_URL,
  }, async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 2 });
    try {
      const keys = await redis.keys(`${world.ctx.rateLimitNamespace}*phone:verifyOtp:+234*`);
      assert.ok(keys.length > 0, `no per-phone keys under ${world.ctx.rateLimitNamespace}`);
    } finally {
      await redis.quit();
    }
  });
});

describe('the sign-in limits in the configuration', () => {
  it('takes each limit as said, and refuses a bad one, naming it', () => {
    const said = loadConfig({
      NODE_ENV: 'test',
      SANDBOX: '1',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3000',
      RATE_LIMIT_PHONE_PER_MINUTE: '3',
    });
    assert.equal(said.rateLimitAnonymousPerMinute, 3000);
    assert.equal(said.rateLimitPhonePerMinute, 3);
    for (const variable of ['RATE_LIMIT_ANONYMOUS_PER_MINUTE', 'RATE_LIMIT_PHONE_PER_MINUTE']) {
      for (const value of ['0', '-1', '2.5', 'many', '1000001']) {
        assert.throws(
          () => loadConfig({ NODE_ENV: 'test', SANDBOX: '1', [variable]: value }),
          (error: unknown) => error instanceof ConfigError && error.message.includes(variable),
          `${variable}=${value}`,
        );
      }
    }
  });
});
