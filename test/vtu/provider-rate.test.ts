import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Clock } from '../../src/clock.ts';
import {
  createProviderRates,
  databaseBucket,
  type RateBucket,
  redisBucket,
} from '../../src/vtu/provider-rate.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { type Buyer, buyCall, buyer, current, mtn } from './purchase-support.ts';

// A provider's send rate shared by every process (VTU_PROVIDER_RATE_<NAME>, decision 0052). The
// bucket's two homes (Redis, the database) keep one contract, and the database stands in while Redis
// is out of reach. Purchases over the rate wait their turn and are all delivered: the sandbox VTpass,
// set to refuse above twice the rate (providerLimitOf), refuses none, and its own log of when each
// purchase came shows them spread over the seconds the rate needs.

const database = onPostgres() ? 'PostgreSQL' : 'PGlite';
const redisUrl = process.env.REDIS_URL;

/** A provider name of this test's own, so that the rows and keys of one test never meet another's. */
const providerName = () => `test-${randomBytes(4).toString('hex')}`;

const at = (iso: string) => new Date(`2026-12-10T12:00:${iso}Z`);

/** The contract of a bucket, whichever holds it: the sends of a second, refilled whole as it changes. */
async function assertBucketContract(bucket: RateBucket): Promise<void> {
  const provider = providerName();
  assert.equal(
    await bucket.take(provider, 5, 3, at('00')),
    3,
    'the first take of a second gets what it asks',
  );
  assert.equal(await bucket.take(provider, 5, 3, at('00')), 2, 'the next gets what is left of the second');
  assert.equal(await bucket.take(provider, 5, 1, at('00')), 0, 'then nothing until the second changes');
  assert.equal(await bucket.take(provider, 5, 10, at('01')), 5, 'the next second is refilled whole');
  assert.equal(await bucket.take(provider, 5, 10, at('09')), 5, 'idle seconds do not add up to a burst');
  assert.equal(
    await bucket.take(provider, 5, 1, at('01')),
    0,
    'a process whose clock is behind takes from the latest second: it never refills an older one',
  );
  assert.equal(await bucket.take(provider, 5, 1, at('10')), 1);
  assert.equal(await bucket.take(provider, 2, 10, at('10')), 2, 'a lowered rate caps what is left');
  // Many takes at once share one second: exactly the rate is given out.
  const granted = await Promise.all(Array.from({ length: 20 }, () => bucket.take(provider, 7, 1, at('20'))));
  assert.equal(
    granted.reduce((sum, n) => sum + n, 0),
    7,
  );
}

/** A clock the test moves. */
function testClock(iso: string): Clock & { set(iso: string): void } {
  let now = new Date(iso);
  return {
    now: () => now,
    set(next) {
      now = new Date(next);
    },
  };
}

describe(`the shared bucket of a provider's sends (${database})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({ withoutRedis: true });
  });
  after(() => world.close());

  it('in the database: a row per provider, taken from by one UPDATE', async () => {
    await assertBucketContract(databaseBucket(world.ctx.db));
  });

  it('in Redis: one script per take', {
    skip: redisUrl === undefined && 'needs Redis (REDIS_URL)',
  }, async () => {
    const redis = new Redis(redisUrl!);
    try {
      await assertBucketContract(redisBucket(redis, `billrail-test-${randomBytes(4).toString('hex')}:`));
    } finally {
      await redis.quit();
    }
  });

  it('Redis out of reach: counted in the database, never unlimited, with one warning', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(line) });
    const limited = providerName();
    const clock = testClock('2026-12-10T12:00:00.500Z');
    const rates = createProviderRates({
      db: world.ctx.db,
      clock,
      logger,
      rates: { [limited]: 2 },
      // Nothing listens on port 1: every command is refused at once.
      redis: { url: 'redis://127.0.0.1:1', prefix: 'billrail-test-outage:' },
    });
    try {
      assert.deepEqual(await rates.take(limited, 3), {
        granted: 2,
        nextTurnAt: new Date('2026-12-10T12:00:01.000Z'),
      });
      assert.equal((await rates.take(limited, 3)).granted, 0, 'the second is spent');
      const row = await world.ctx.db
        .selectFrom('vtu_provider_rate')
        .select(['tokens', 'refilled_at'])
        .where('provider', '=', limited)
        .executeTakeFirstOrThrow();
      assert.deepEqual(row, { tokens: 0, refilled_at: new Date('2026-12-10T12:00:00.000Z') });
      clock.set('2026-12-10T12:00:01.100Z');
      assert.equal((await rates.take(limited, 3)).granted, 2, 'refilled in the database');
      assert.equal(
        (await rates.take(providerName(), 50)).granted,
        50,
        'a provider without a rate is not counted',
      );
      const warnings = lines.filter((line) => line.includes('counted in the database'));
      assert.equal(warnings.length, 1, 'one warning, not one per take');
    } finally {
      await rates.close();
    }
  });
});

/** The sandbox VTpass's limit and what it took, by its own clock (src/sandbox/rate-limits.ts). */
type SandboxLimit = { requestsPerSecondMax: number | null; purchases: string[]; refused: number };

async function sandboxLimit(sandbox: World, requestsPerSecondMax?: number | null): Promise<SandboxLimit> {
  const response = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/rate-limit`, {
    method: requestsPerSecondMax === undefined ? 'GET' : 'POST',
    ...(requestsPerSecondMax === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ requestsPerSecondMax }) }),
  });
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: SandboxLimit }).data;
}

/**
 * The provider's limit the sandbox is set to for a rate of ours: twice it. The rate starts at most
 * `rate` sends in a second of the service clock; a send started late in a second can reach the
 * provider in the next one, beside that second's own (decision 0052), so a provider counting strictly
 * per second must allow twice the rate for none to be refused, whatever the latency under a second.
 */
const providerLimitOf = (rate: number) => 2 * rate;

/**
 * What the sandbox took, by its own clock, is what `count` purchases at `rate` a second look like to
 * the provider: each once, none refused, no second above its limit, and spread over the seconds the
 * rate needs: the sends started in ceil(count / rate) seconds at least, of which the first may reach
 * the provider in the next.
 */
function assertTakenAtRate(taken: SandboxLimit, count: number, rate: number): void {
  assert.equal(taken.refused, 0, 'the provider refused none');
  assert.equal(taken.purchases.length, count, 'each sent once');
  const seconds = taken.purchases.map((iso) => Math.floor(Date.parse(iso) / 1000));
  const perSecond = Map.groupBy(seconds, (second) => second);
  for (const [second, sent] of perSecond) {
    assert.ok(sent.length <= providerLimitOf(rate), `${sent.length} purchases in second ${second}`);
  }
  const spanned = Math.max(...seconds) - Math.min(...seconds) + 1;
  assert.ok(spanned >= Math.ceil(count / rate) - 1, `${count} purchases in ${spanned} seconds`);
}

/**
 * Moves the sandbox clock to just past a whole second, so that a burst starts at the start of one:
 * a grant late in a second may reach the provider in the next, beside that second's own.
 */
function toStartOfSecond(world: World): void {
  const ms = world.ctx.sandboxClock!.now().getTime() % 1000;
  world.ctx.sandboxClock!.advance((1000 - ms + 5) / 1000);
}

/** `count` airtime purchases at once, the i-th through services[i % n]; every one accepted. */
async function burst(services: World[], user: Buyer, count: number): Promise<string[]> {
  const answers = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      buyCall(services[i % services.length]!, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 200,
      }),
    ),
  );
  return answers.map((answer) => {
    const accepted = ok(answer);
    assert.equal(accepted.status, 'processing');
    return accepted.id;
  });
}

describe(`purchases over a provider's rate (${database})`, () => {
  const rate = 2;
  let limited: World;
  let unlimited: World;
  before(async () => {
    limited = await createWorld({ env: { VTU_PROVIDER_RATE_BILLS: String(rate) } });
    unlimited = await createWorld();
  });
  after(async () => {
    await limited.close();
    await unlimited.close();
  });

  it('wait their turn: all delivered, none refused by the provider, spread at the rate', async () => {
    await sandboxLimit(limited, providerLimitOf(rate));
    const user = await buyer(limited, 10_000);
    toStartOfSecond(limited);
    const ids = await burst([limited], user, 7);
    await limited.ctx.modules.vtu.api.drained();
    for (const id of ids) assert.equal((await current(limited, user, id)).status, 'success');
    const taken = await sandboxLimit(limited);
    assertTakenAtRate(taken, 7, rate);
  });

  it("without the rate the provider's limit refuses some, and they stay processing (not failed)", async () => {
    await sandboxLimit(unlimited, 1);
    const user = await buyer(unlimited, 10_000);
    toStartOfSecond(unlimited);
    const ids = await burst([unlimited], user, 6);
    await unlimited.ctx.modules.vtu.api.drained();
    const taken = await sandboxLimit(unlimited);
    assert.ok(taken.refused > 0, 'sent faster than the provider takes');
    const statuses = await Promise.all(ids.map(async (id) => (await current(unlimited, user, id)).status));
    assert.equal(statuses.filter((s) => s === 'success').length, taken.purchases.length);
    assert.equal(
      statuses.filter((s) => s === 'processing').length,
      taken.refused,
      'a 429 is unknown, requeried',
    );
  });
});

const skip = !onPostgres() && 'needs PostgreSQL (DATABASE_URL): two services cannot share a PGlite';

describe(`two services share a provider's rate (${database}${redisUrl ? ' + Redis' : ''})`, { skip }, () => {
  const rate = 3;
  const count = 16;
  let services: World[];
  before(async () => {
    const first = await createWorld({ env: { VTU_PROVIDER_RATE_BILLS: String(rate) } });
    // One deployment: the same database, Redis keys, sandbox provider and clock.
    const second = await createWorld({
      sameDatabaseAs: first,
      rateLimitNamespace: first.ctx.rateLimitNamespace,
      clock: first.ctx.sandboxClock!,
      env: { VTU_PROVIDER_RATE_BILLS: String(rate), SANDBOX_VTU_BASE_URL: first.baseUrl },
    });
    services = [first, second];
  });
  after(async () => {
    for (const service of [...services].reverse()) await service.close();
  });

  it('a burst through both: every purchase delivered, none refused, spread at the one rate', async () => {
    const [first] = services;
    await sandboxLimit(first!, providerLimitOf(rate));
    const user = await buyer(first!, 20_000);
    toStartOfSecond(first!);
    const ids = await burst(services, user, count);
    for (const service of services) await service.ctx.modules.vtu.api.drained();
    for (const id of ids) assert.equal((await current(first!, user, id)).status, 'success');
    // Each service sent half: with a rate of its own each, they would have sent twice the rate, and
    // the provider would have refused some.
    assertTakenAtRate(await sandboxLimit(first!), count, rate);
  });
});
