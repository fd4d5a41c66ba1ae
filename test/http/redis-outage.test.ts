import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

// Redis holds the rate limit's counts and the catalogue cache: what the API processes share, but not
// what the service needs to serve. Out of reach (refused, or a partition where nothing answers), every
// request is still answered at once, the catalogue from the provider, and the rate limit is counted
// per process until Redis is back. The service reaches Redis through a TCP relay the test cuts.

const skip = process.env.REDIS_URL ? false : 'needs Redis (REDIS_URL)';
const LIMIT = 30;
/** requestOtp's requests a minute per phone (RATE_LIMIT_PHONE_PER_MINUTE, decision 0029). */
const PHONE_LIMIT = 3;
/** Far above a Redis command's bound (1 s): an answer slower than this waited on Redis. */
const promptMs = 5_000;

type Relay = { url: string; cut(mode: 'refused' | 'silent'): void; restore(): void; close(): Promise<void> };

async function startRelay(target: URL): Promise<Relay> {
  const sockets = new Set<net.Socket>();
  let mode: 'open' | 'refused' | 'silent' = 'open';
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client)).on('error', () => client.destroy());
    if (mode === 'refused') return void client.destroy();
    if (mode === 'silent') return;
    const upstream = net.connect(Number(target.port || 6379), target.hostname);
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream)).on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (chunk) => mode === 'open' && upstream.write(chunk));
    upstream.on('data', (chunk) => mode === 'open' && client.write(chunk));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  const dropAll = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: url.toString(),
    cut(next) {
      mode = next;
      if (next === 'refused') dropAll();
    },
    restore() {
      // A partition's connections end by the network's timeouts; the client connects again.
      if (mode === 'silent') dropAll();
      mode = 'open';
    },
    async close() {
      dropAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('Redis out of reach', { skip }, () => {
  let relay: Relay;
  let world: World;
  let user: SignedIn;

  before(async () => {
    relay = await startRelay(new URL(process.env.REDIS_URL!));
    world = await createWorld({
      env: {
        REDIS_URL: relay.url,
        RATE_LIMIT_PER_MINUTE: String(LIMIT),
        RATE_LIMIT_PHONE_PER_MINUTE: String(PHONE_LIMIT),
      },
    });
    user = await signIn(world);
  });
  after(async () => {
    await world?.close();
    await relay?.close();
  });

  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const answer = await call();
    const ms = performance.now() - started;
    assert.ok(ms < promptMs, `answered in ${Math.round(ms)} ms`);
    return answer;
  };

  // A partition first, while the service's connections to Redis are up (its sign-in used them): each
  // command on them must give up, not wait for an answer that never comes.
  for (const mode of ['silent', 'refused'] as const) {
    it(`${mode}: requests are answered at once, the catalogue from the provider`, async () => {
      relay.cut(mode);
      try {
        ok(await timed(() => get(world, 'getWallet', {}, { token: user.accessToken })));
        const plans = ok(
          await timed(() =>
            get<{ items: unknown[] }>(
              world,
              'listDataPlans',
              { network: 'mtn' },
              { token: user.accessToken },
            ),
          ),
        );
        assert.ok(plans.items.length > 0);
        ok(await timed(() => post(world, 'requestOtp', { phone: uniquePhone() })));
      } finally {
        relay.restore();
      }
    });
  }

  it('counts the rate limit in the process while Redis is out of reach', async () => {
    const someone = await signIn(world);
    relay.cut('refused');
    try {
      const statuses: number[] = [];
      for (let i = 0; i <= LIMIT; i++)
        statuses.push((await get(world, 'getMe', {}, { token: someone.accessToken })).status);
      assert.deepEqual(statuses.slice(0, LIMIT), Array(LIMIT).fill(200));
      assert.equal(statuses[LIMIT], 429, 'the call past the limit');
    } finally {
      relay.restore();
    }
  });

  it('counts the per-phone limit in the process while Redis is out of reach', async () => {
    const phone = uniquePhone();
    relay.cut('refused');
    try {
      const answers = [];
      for (let i = 0; i <= PHONE_LIMIT; i++) answers.push(await post(world, 'requestOtp', { phone }));
      assert.equal(answers[0]!.status, 200);
      // Within the 60 s resend window the database refuses, saying when; past the per-phone limit
      // the refusal comes before the database, without those details.
      for (const answer of answers.slice(1, PHONE_LIMIT)) {
        assert.equal(typeof failure(answer).details?.retryAfterSeconds, 'number');
      }
      const past = answers[PHONE_LIMIT]!;
      assert.equal(past.status, 429, 'the request past the per-phone limit');
      assert.equal(failure(past).details, undefined);
      assert.match(past.headers.get('retry-after') ?? '', /^\d+$/);
    } finally {
      relay.restore();
    }
  });
});
