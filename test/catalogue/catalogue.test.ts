import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { encodeJson } from '../../src/catalogue/cache.ts';
import { koboToNaira } from '../../src/money.ts';
import { type VtuProvider, VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, get, ok, type SignedIn, signIn, type World } from '../helpers/world.ts';

// The catalogue operations (SPEC.md "Endpoints", "Limits": refresh at most every 30 minutes) through
// HTTP against the sandbox providers: the normalised lists, and the cache in front of the providers
// (one call per key per 30 minutes, single-flight, stale on failure, 502 with nothing cached). On
// Redis when REDIS_URL is set, in memory otherwise.

const BOUNDED = { timeout: 60_000 };
const onRedis = process.env.REDIS_URL !== undefined && process.env.REDIS_URL !== '';

type Item = { id: string; name: string };
type DataPlan = {
  plan_id: string;
  network: string;
  planType: string;
  name: string;
  validity: string | null;
  amount: number;
};
type CablePlan = { plan_id: string; identifier: string; name: string; amount: number };
type Items<T> = { items: T[] };

type Method = 'networks' | 'dataPlans' | 'cableProviders' | 'cablePlans' | 'discos' | 'bettingCompanies';

/**
 * Counts a provider method's calls by their first argument ('' without one) and can make it fail as
 * an unreachable provider does. The original is kept for the expected values.
 */
function instrument(provider: VtuProvider, method: Method) {
  const original = (provider[method] as (...args: unknown[]) => Promise<unknown>).bind(provider);
  const calls: string[] = [];
  const control = {
    calls,
    failing: false,
    original,
    count: (arg = '') => calls.filter((c) => c === arg).length,
  };
  (provider as unknown as Record<Method, unknown>)[method] = async (...args: unknown[]) => {
    calls.push(String(args[0] ?? ''));
    if (control.failing) throw new VtuProviderError(provider.name, 'did not answer (test)');
    return original(...args);
  };
  return control;
}

describe(`catalogue operations (${onPostgres() ? 'PostgreSQL' : 'PGlite'}, ${onRedis ? 'Redis' : 'memory'} cache)`, () => {
  let world: World;
  let user: SignedIn;
  let data: {
    networks: ReturnType<typeof instrument>;
    dataPlans: ReturnType<typeof instrument>;
  };
  let bills: Record<
    'networks' | 'cableProviders' | 'cablePlans' | 'discos' | 'bettingCompanies',
    ReturnType<typeof instrument>
  >;

  /** A list operation's items, as the signed-in user reads them. */
  async function list<T>(operation: string, query: Record<string, string> = {}): Promise<T[]> {
    return ok(await get<Items<T>>(world, operation, query, { token: user.accessToken })).items;
  }

  before(async () => {
    world = await createWorld();
    user = await signIn(world);
    const { data: dataProvider, bills: billsProvider } = world.ctx.vtuProviders;
    data = {
      networks: instrument(dataProvider, 'networks'),
      dataPlans: instrument(dataProvider, 'dataPlans'),
    };
    bills = {
      networks: instrument(billsProvider, 'networks'),
      cableProviders: instrument(billsProvider, 'cableProviders'),
      cablePlans: instrument(billsProvider, 'cablePlans'),
      discos: instrument(billsProvider, 'discos'),
      bettingCompanies: instrument(billsProvider, 'bettingCompanies'),
    };
  });
  after(() => world.close());

  /** Moves the clock and signs a new user in: access tokens live 15 minutes. */
  async function advance(seconds: number) {
    world.ctx.sandboxClock!.advance(seconds);
    user = await signIn(world);
  }

  it('needs a signed-in caller (401 without a token)', BOUNDED, async () => {
    for (const operation of ['listAirtimeNetworks', 'listDataNetworks', 'listElectricityPlans']) {
      const error = failure(await get(world, operation));
      assert.equal(error.status, 401, operation);
      assert.equal(error.code, 'UNAUTHENTICATED');
    }
  });

  it('lists the airtime and data networks of the routed providers', BOUNDED, async () => {
    const airtime = await list<Item>('listAirtimeNetworks');
    assert.deepEqual(airtime, await bills.networks.original('airtime'));
    assert.deepEqual(
      airtime.map((n) => n.id),
      ['mtn', 'glo', 'airtel', '9mobile'],
    );
    const dataNetworks = await list<Item>('listDataNetworks');
    assert.deepEqual(dataNetworks, await data.networks.original('data'));
    assert.equal(bills.networks.count('airtime'), 1, 'airtime networks come from the bills provider');
    assert.equal(data.networks.count('data'), 1, 'data networks come from the data provider');
  });

  it(
    'lists data plans with a string plan_id and the retail price in naira, never the wholesale',
    BOUNDED,
    async () => {
      const plans = await list<DataPlan>('listDataPlans', { network: 'mtn' });
      const wholesale = (await data.dataPlans.original('mtn')) as Array<{
        planId: string;
        planType: string;
        name: string;
        validity: string | null;
        wholesaleKobo: bigint;
      }>;
      assert.ok(plans.length > 0);
      assert.deepEqual(
        plans,
        wholesale.map((p) => ({
          plan_id: p.planId,
          network: 'mtn',
          planType: p.planType,
          name: p.name,
          validity: p.validity,
          // No markup configured: retail equals wholesale.
          amount: koboToNaira(p.wholesaleKobo),
        })),
      );
      for (const plan of plans) {
        assert.equal(typeof plan.plan_id, 'string');
        assert.deepEqual(Object.keys(plan).sort(), [
          'amount',
          'name',
          'network',
          'planType',
          'plan_id',
          'validity',
        ]);
      }
    },
  );

  it('lists plan types with their plan counts, and the plans of one type', BOUNDED, async () => {
    const types = await list<{ planType: string; plans: number }>('listDataPlanTypes', { network: 'mtn' });
    assert.deepEqual(
      types.map((t) => t.planType),
      ['SME', 'CG', 'GIFTING'],
    );
    const all = await list<DataPlan>('listDataPlans', { network: 'mtn' });
    for (const type of types) {
      const plans = await list<DataPlan>('listDataPlansForCategory', {
        network: 'mtn',
        planType: type.planType,
      });
      assert.equal(plans.length, type.plans);
      assert.deepEqual(
        plans,
        all.filter((p) => p.planType === type.planType),
      );
    }
    // The category is matched whatever its case.
    assert.equal(
      (await list('listDataPlansForCategory', { network: 'mtn', planType: 'cg' })).length,
      types[1]!.plans,
    );
    assert.equal(data.dataPlans.count('mtn'), 1, 'every read above was served by one provider call');
  });

  it(
    'refuses an unknown network, plan type or cable provider with 400 naming the field',
    BOUNDED,
    async () => {
      const token = { token: user.accessToken };
      const badNetwork = failure(await get(world, 'listDataPlans', { network: 'etisalat' }, token));
      assert.equal(badNetwork.status, 400);
      assert.equal(badNetwork.code, 'VALIDATION_ERROR');
      assert.deepEqual((badNetwork.details as { issues: Array<{ path: string[] }> }).issues[0]!.path, [
        'query',
        'network',
      ]);

      const missing = failure(await get(world, 'listDataPlanTypes', {}, token));
      assert.equal(missing.status, 400);
      assert.deepEqual((missing.details as { issues: Array<{ path: string[] }> }).issues[0]!.path, [
        'query',
        'network',
      ]);

      const badType = failure(
        await get(world, 'listDataPlansForCategory', { network: 'mtn', planType: 'PLATINUM' }, token),
      );
      assert.equal(badType.status, 400);
      assert.equal(badType.code, 'VALIDATION_ERROR');
      assert.deepEqual((badType.details as { issues: Array<{ path: string[] }> }).issues[0]!.path, [
        'query',
        'planType',
      ]);

      const callsBefore = bills.cablePlans.calls.length;
      const badCable = failure(await get(world, 'listCablePlans', { identifier: 'nosuchtv' }, token));
      assert.equal(badCable.status, 400);
      assert.equal(badCable.code, 'VALIDATION_ERROR');
      assert.deepEqual((badCable.details as { issues: Array<{ path: string[] }> }).issues[0]!.path, [
        'query',
        'identifier',
      ]);
      assert.equal(
        bills.cablePlans.calls.length,
        callsBefore,
        'an unknown provider never reaches the provider',
      );

      const unknownParameter = failure(await get(world, 'listCableProviders', { page: '2' }, token));
      assert.equal(unknownParameter.status, 400);
    },
  );

  it('lists cable providers and their plans at retail naira', BOUNDED, async () => {
    const providers = await list<Item>('listCableProviders');
    assert.deepEqual(providers, await bills.cableProviders.original());
    assert.deepEqual(
      providers.map((p) => p.id),
      ['dstv', 'gotv', 'startimes', 'showmax'],
    );
    const plans = await list<CablePlan>('listCablePlans', { identifier: 'dstv' });
    const wholesale = (await bills.cablePlans.original('dstv')) as Array<{
      planId: string;
      name: string;
      wholesaleKobo: bigint;
    }>;
    assert.deepEqual(
      plans,
      wholesale.map((p) => ({
        plan_id: p.planId,
        identifier: 'dstv',
        name: p.name,
        amount: koboToNaira(p.wholesaleKobo),
      })),
    );
  });

  it('lists the discos and the betting companies', BOUNDED, async () => {
    const discos = await list<Item>('listElectricityPlans');
    assert.deepEqual(discos, await bills.discos.original());
    assert.ok(discos.some((d) => d.id === 'ikeja-electric'));
    const companies = await list<Item>('listBetCompanies');
    assert.deepEqual(companies, await bills.bettingCompanies.original());
    assert.ok(companies.some((c) => c.id === 'bet9ja'));
  });

  it('serves a second read from the cache without calling the provider', BOUNDED, async () => {
    await list('listElectricityPlans');
    const calls = bills.discos.count();
    assert.ok(calls >= 1);
    for (let i = 0; i < 3; i++) await list('listElectricityPlans');
    assert.equal(bills.discos.count(), calls);
  });

  it('makes exactly one provider call for 20 concurrent cold reads of one key', BOUNDED, async () => {
    assert.equal(bills.cablePlans.count('gotv'), 0, 'gotv is cold');
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        get<Items<CablePlan>>(world, 'listCablePlans', { identifier: 'gotv' }, { token: user.accessToken }),
      ),
    );
    const first = ok(answers[0]!);
    for (const answer of answers) assert.deepEqual(ok(answer), first);
    assert.ok(first.items.length > 0);
    assert.equal(bills.cablePlans.count('gotv'), 1);
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when the provider fails with nothing cached', BOUNDED, async () => {
    assert.equal(data.dataPlans.count('glo'), 0, 'glo is cold');
    data.dataPlans.failing = true;
    try {
      const error = failure(
        await get(world, 'listDataPlans', { network: 'glo' }, { token: user.accessToken }),
      );
      assert.equal(error.status, 502);
      assert.equal(error.code, 'UPSTREAM_UNAVAILABLE');
      assert.equal(data.dataPlans.count('glo'), 1);
    } finally {
      data.dataPlans.failing = false;
    }
    // A failure is not cached: the next read asks again and succeeds.
    assert.ok((await list('listDataPlans', { network: 'glo' })).length > 0);
    assert.equal(data.dataPlans.count('glo'), 2);
  });

  it('fetches again once 30 minutes have passed, not before', BOUNDED, async () => {
    await list('listCablePlans', { identifier: 'startimes' });
    assert.equal(bills.cablePlans.count('startimes'), 1);
    await advance(30 * 60 - 1);
    await list('listCablePlans', { identifier: 'startimes' });
    assert.equal(bills.cablePlans.count('startimes'), 1, 'still fresh a second before 30 minutes');
    await advance(1);
    await list('listCablePlans', { identifier: 'startimes' });
    assert.equal(bills.cablePlans.count('startimes'), 2, 'refreshed at 30 minutes');
    await list('listCablePlans', { identifier: 'startimes' });
    assert.equal(bills.cablePlans.count('startimes'), 2, 'and cached again');
  });

  it('serves the stale value when a refresh fails', BOUNDED, async () => {
    const before = await list<DataPlan>('listDataPlans', { network: 'airtel' });
    const calls = data.dataPlans.count('airtel');
    await advance(30 * 60);
    data.dataPlans.failing = true;
    try {
      assert.deepEqual(await list<DataPlan>('listDataPlans', { network: 'airtel' }), before);
      assert.equal(data.dataPlans.count('airtel'), calls + 1, 'the refresh was tried');
    } finally {
      data.dataPlans.failing = false;
    }
    // The stale value was not made fresh by the failure: the next read refreshes.
    assert.deepEqual(await list<DataPlan>('listDataPlans', { network: 'airtel' }), before);
    assert.equal(data.dataPlans.count('airtel'), calls + 2);
  });

  describe('across processes (Redis)', {
    skip: onRedis ? false : 'REDIS_URL is not set: the Redis cache path is not exercised',
  }, () => {
    let redis: Redis;
    const prefix = () => `${world.ctx.rateLimitNamespace}catalogue:`;
    before(() => {
      redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: 2 });
    });
    after(async () => {
      // This world's keys only: other worlds may share the Redis.
      const keys = await redis.keys(`${prefix()}*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    });

    it('keeps values in Redis with kobo as strings', BOUNDED, async () => {
      await list('listCablePlans', { identifier: 'dstv' });
      const stored = await redis.get(`${prefix()}value:bills:cable-plans:dstv`);
      assert.ok(stored !== null);
      const entry = JSON.parse(stored) as { json: string; fetchedAtMs: number };
      assert.match(entry.json, /"wholesaleKobo":\{"\$bigint":"\d+"\}/);
      assert.equal(typeof entry.fetchedAtMs, 'number');
    });

    it('serves the stale value while another process holds the refresh lock', BOUNDED, async () => {
      const key = 'bills:cable-plans:showmax';
      const stale = [{ planId: 'stale-plan', provider: 'showmax', name: 'Stale', wholesaleKobo: 123_45n }];
      const longAgo = world.ctx.clock.now().getTime() - 31 * 60 * 1000;
      await redis.set(
        `${prefix()}value:${key}`,
        JSON.stringify({ json: encodeJson(stale), fetchedAtMs: longAgo }),
      );
      await redis.set(`${prefix()}lock:${key}`, 'another-process', 'PX', 60_000);
      const calls = bills.cablePlans.count('showmax');
      assert.deepEqual(await list('listCablePlans', { identifier: 'showmax' }), [
        { plan_id: 'stale-plan', identifier: 'showmax', name: 'Stale', amount: 123.45 },
      ]);
      assert.equal(bills.cablePlans.count('showmax'), calls, 'the lock holder refreshes, not us');
      // Once the other process is done (its lock gone), a read refreshes from the provider.
      await redis.del(`${prefix()}lock:${key}`);
      const fresh = await list<CablePlan>('listCablePlans', { identifier: 'showmax' });
      assert.ok(fresh.every((p) => p.plan_id !== 'stale-plan'));
      assert.equal(bills.cablePlans.count('showmax'), calls + 1);
    });

    it(
      "with nothing cached, waits for the lock holder's value instead of calling the provider",
      BOUNDED,
      async () => {
        const key = 'data:data-plans:9mobile';
        await redis.set(`${prefix()}lock:${key}`, 'another-process', 'PX', 60_000);
        const reading = get<Items<DataPlan>>(
          world,
          'listDataPlans',
          { network: '9mobile' },
          { token: user.accessToken },
        );
        const written = [
          {
            planId: 'p1',
            network: '9mobile',
            planType: 'SME',
            name: 'From the other process',
            validity: null,
            wholesaleKobo: 10_000n,
          },
        ];
        await redis.set(
          `${prefix()}value:${key}`,
          JSON.stringify({ json: encodeJson(written), fetchedAtMs: world.ctx.clock.now().getTime() }),
        );
        assert.deepEqual(ok(await reading).items, [
          {
            plan_id: 'p1',
            network: '9mobile',
            planType: 'SME',
            name: 'From the other process',
            validity: null,
            amount: 100,
          },
        ]);
        assert.equal(data.dataPlans.count('9mobile'), 0);
        await redis.del(`${prefix()}lock:${key}`);
      },
    );
  });
});
