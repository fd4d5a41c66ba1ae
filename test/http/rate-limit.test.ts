import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { createWorld, type SignedIn, signIn, uniquePhone, type World } from '../helpers/world.ts';

// RATE_LIMIT_PER_MINUTE counts a signed-in caller's requests per user, and
// RATE_LIMIT_ANONYMOUS_PER_MINUTE (a limit of its own, higher in production: decision 0029) an
// anonymous caller's per client address.
// Each address below is a different loopback address (127.0.0.x), so the buckets are real sockets'
// addresses and not a header the client could choose. With REDIS_URL set the counts live in Redis.

const LIMIT = 5;
const ANONYMOUS_LIMIT = 8;

type Answer = {
  status: number;
  retryAfter: string | undefined;
  body: { success: boolean; error?: { code: string } };
};

function request(
  world: World,
  options: { method: 'GET' | 'POST'; operation: string; from: string; token?: string; data?: object },
): Promise<Answer> {
  const url = new URL(`${world.baseUrl}/_serverFn/${options.operation}`);
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const payload = options.method === 'POST' ? JSON.stringify({ data: options.data ?? {} }) : undefined;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = randomUUID();
  }
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: Number(url.port),
        path: url.pathname,
        method: options.method,
        headers,
        localAddress: options.from,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => {
          const retryAfter = res.headers['retry-after'];
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
            body: JSON.parse(text) as Answer['body'],
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

function assertLimited(answer: Answer): void {
  assert.equal(answer.status, 429, JSON.stringify(answer.body));
  assert.equal(answer.body.success, false);
  assert.equal(answer.body.error?.code, 'RATE_LIMITED');
  assert.match(answer.retryAfter ?? '', /^\d+$/, 'Retry-After in whole seconds');
  const seconds = Number(answer.retryAfter);
  assert.ok(seconds >= 1 && seconds <= 60, `Retry-After ${seconds}`);
}

describe(`rate limiting (${process.env.REDIS_URL ? 'Redis' : 'memory'})`, () => {
  let world: World;
  let alice: SignedIn;
  let bob: SignedIn;
  before(async () => {
    world = await createWorld({
      env: {
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_ANONYMOUS_PER_MINUTE: String(ANONYMOUS_LIMIT),
      },
    });
    // Two sign-ins cost four anonymous requests from 127.0.0.1, under the limit; nothing else below
    // is sent anonymously from that address.
    alice = await signIn(world);
    bob = await signIn(world);
  });
  after(() => world?.close());

  it('answers the call after the limit with 429 RATE_LIMITED and Retry-After, per user', async () => {
    for (let i = 1; i <= LIMIT; i++) {
      const answer = await request(world, {
        method: 'GET',
        operation: 'getMe',
        from: '127.0.0.1',
        token: alice.accessToken,
      });
      assert.equal(answer.status, 200, `call ${i}`);
    }
    assertLimited(
      await request(world, {
        method: 'GET',
        operation: 'getMe',
        from: '127.0.0.1',
        token: alice.accessToken,
      }),
    );

    // The user is limited as one caller whatever address the call comes from, and a limited POST
    // does not run.
    assertLimited(
      await request(world, {
        method: 'POST',
        operation: 'updateProfile',
        from: '127.0.0.4',
        token: alice.accessToken,
        data: { firstName: 'Limited' },
      }),
    );
    const row = await world.ctx.db
      .selectFrom('users')
      .select('first_name')
      .where('id', '=', alice.userId)
      .executeTakeFirstOrThrow();
    assert.equal(row.first_name, null);
  });

  it('keeps the counts in Redis when REDIS_URL is set', { skip: !process.env.REDIS_URL }, async () => {
    const redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 2 });
    try {
      const keys = await redis.keys(`${world.ctx.rateLimitNamespace}*`);
      assert.ok(keys.length > 0, `no rate-limit keys under ${world.ctx.rateLimitNamespace}`);
    } finally {
      await redis.quit();
    }
  });

  it('does not limit another user', async () => {
    const answer = await request(world, {
      method: 'GET',
      operation: 'getMe',
      from: '127.0.0.1',
      token: bob.accessToken,
    });
    assert.equal(answer.status, 200);
  });

  it('limits unauthenticated calls per address, at their own limit', async () => {
    for (let i = 1; i <= ANONYMOUS_LIMIT; i++) {
      const answer = await request(world, {
        method: 'POST',
        operation: 'requestOtp',
        from: '127.0.0.2',
        data: { phone: uniquePhone() },
      });
      assert.equal(answer.status, 200, `call ${i}: ${JSON.stringify(answer.body)}`);
    }
    assertLimited(
      await request(world, {
        method: 'POST',
        operation: 'requestOtp',
        from: '127.0.0.2',
        data: { phone: uniquePhone() },
      }),
    );
    const elsewhere = await request(world, {
      method: 'POST',
      operation: 'requestOtp',
      from: '127.0.0.3',
      data: { phone: uniquePhone() },
    });
    assert.equal(elsewhere.status, 200);
  });
});
