import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import { onPostgres } from '../helpers/database.ts';
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
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { bought, buyCall, buyer, mtn } from '../vtu/purchase-support.ts';

// listEducationPins (API.md section 16): the exam pins of one exam at the price buyEducationPin
// charges, read through the catalogue cache (one provider call per 30 minutes, stale on failure,
// 502 with nothing cached).

type Pin = { variation: string; name: string; amount: number };

describe(`listEducationPins (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  const adminPhone = uniquePhone();
  let providerCalls = 0;
  let providerFailing = false;

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
    const bills = world.ctx.vtuProviders.bills;
    const original = bills.educationItems.bind(bills);
    bills.educationItems = async () => {
      providerCalls += 1;
      if (providerFailing) throw new VtuProviderError(bills.name, 'did not answer (test)');
      return original();
    };
  });
  after(() => world.close());

  const pins = async (user: SignedIn, exam: string) =>
    ok(await get<{ items: Pin[] }>(world, 'listEducationPins', { exam }, { token: user.accessToken })).items;

  it('lists the pins of one exam at the price buyEducationPin charges, markup applied', async () => {
    ok(
      await post(
        world,
        'adminSetMarkup',
        { service: 'education', flat: 50, percent: 2.5 },
        { token: admin.accessToken },
      ),
    );
    const user = await buyer(world, 50_000);
    const waec = await pins(user, 'waec');
    // The sandbox's WAEC result checker sells at ₦3,900 wholesale: ₦3,900 + ₦50 + 2.5 % (₦97.50).
    assert.deepEqual(waec, [{ variation: 'waecdirect', name: 'WASSCE Result Checker PIN', amount: 4_047.5 }]);
    const done = await bought(world, user, 'buyEducationPin', {
      exam: 'waec',
      variation: waec[0]!.variation,
      quantity: 1,
      amount: waec[0]!.amount,
      phone: mtn('5'),
    });
    assert.equal(done.status, 'success');
    assert.equal(done.amount, 4_047.5);

    const jamb = await pins(user, 'jamb');
    assert.deepEqual(
      jamb.map((p) => p.variation),
      ['utme', 'de'],
    );
    assert.ok(jamb.every((p) => p.amount === 6_405));
  });

  it('buyEducationPin prices from the same cached list, so it charges what was listed while the provider cannot list', async () => {
    const user = await buyer(world, 50_000);
    const [neco] = await pins(user, 'neco');
    assert.deepEqual(neco, { variation: 'neco-result', name: 'NECO Result Checker Token', amount: 1_382.5 });
    const before = providerCalls;
    providerFailing = true;
    try {
      const one = await bought(world, user, 'buyEducationPin', {
        exam: 'neco',
        variation: neco!.variation,
        quantity: 1,
        amount: neco!.amount,
        phone: mtn('5'),
      });
      assert.equal(one.amount, 1_382.5);
      // Several pins cost that many times the listed price: the markup, flat part included, is per pin.
      const listedTwice = 2 * neco!.amount;
      const refused = failure(
        await buyCall(world, user, 'buyEducationPin', {
          exam: 'neco',
          variation: neco!.variation,
          quantity: 2,
          amount: 2_715,
          phone: mtn('5'),
        }),
      );
      assert.equal(refused.status, 409);
      assert.equal(refused.code, 'PRICE_CHANGED');
      assert.deepEqual(refused.details, { amount: listedTwice });
      const two = await bought(world, user, 'buyEducationPin', {
        exam: 'neco',
        variation: neco!.variation,
        quantity: 2,
        amount: listedTwice,
        phone: mtn('5'),
      });
      assert.equal(two.status, 'success');
      assert.equal(two.amount, 2_765);
    } finally {
      providerFailing = false;
    }
    assert.equal(providerCalls, before, 'no purchase asked the provider for its list');
  });

  it('refuses an exam it does not sell pins of (400 on query.exam) and needs a signed-in caller', async () => {
    const user = await signIn(world);
    expectValidationAt(
      await get(world, 'listEducationPins', { exam: 'gce' }, { token: user.accessToken }),
      'query.exam',
    );
    expectValidationAt(await get(world, 'listEducationPins', {}, { token: user.accessToken }), 'query.exam');
    expectError(await get(world, 'listEducationPins', { exam: 'waec' }), 401, 'UNAUTHENTICATED');
  });

  it('asks the provider once per 30 minutes and answers from the stale copy while it is down', async () => {
    const user = await signIn(world);
    await pins(user, 'neco');
    const before = providerCalls;
    await pins(user, 'nabteb');
    await pins(user, 'waec-registration');
    assert.equal(providerCalls, before, 'every exam is read from the one cached list');

    world.ctx.sandboxClock!.advance(31 * 60);
    providerFailing = true;
    try {
      const fresh = await signIn(world);
      const neco = await pins(fresh, 'neco');
      assert.equal(providerCalls, before + 1, 'the stale copy is refreshed once');
      assert.equal(neco.length, 1);
      assert.equal(neco[0]!.variation, 'neco-result');
    } finally {
      providerFailing = false;
    }
  });

  it('answers 502 UPSTREAM_UNAVAILABLE when the provider fails with nothing cached', async () => {
    const empty = await createWorld();
    try {
      const bills = empty.ctx.vtuProviders.bills;
      bills.educationItems = async () => {
        throw new VtuProviderError(bills.name, 'did not answer (test)');
      };
      const user = await signIn(empty);
      expectError(
        await get(empty, 'listEducationPins', { exam: 'waec' }, { token: user.accessToken }),
        502,
        'UPSTREAM_UNAVAILABLE',
      );
    } finally {
      await empty.close();
    }
  });
});
