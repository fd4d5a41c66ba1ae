import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createWorld, get, ok, type World } from '../helpers/world.ts';
import { type Buyer, bought, buyer, mtn } from './purchase-support.ts';

// What a purchase's record says it bought (issue 26, item 4): money as ₦1,000.00, the names a person
// knows ("Ikeja Electric", "DStv Padi", "Bet9ja") and never a provider id or a price written twice.
// The wallet history shows the same words.

const naira = /₦\d{1,3}(?:,\d{3})*\.\d{2}/g;
/** A price as providers write it into names: N4,400 or 1900 Naira. */
const providerPrice = /\bN\d|\d\s*Naira\b/;

describe('purchase descriptions', () => {
  let world: World;
  let user: Buyer;
  before(async () => {
    world = await createWorld();
    user = await buyer(world, 100_000);
  });
  after(() => world.close());

  const described = async (operation: string, input: Record<string, unknown>) => {
    const done = await bought(world, user, operation, input);
    assert.equal(done.status, 'success');
    assert.doesNotMatch(done.description, providerPrice, done.description);
    assert.ok((done.description.match(naira) ?? []).length <= 1, `one price at most: ${done.description}`);
    const wallet = ok(
      await get<{ items: Array<{ purchaseId?: string; description: string }> }>(
        world,
        'listTransactions',
        { kind: 'purchase' },
        { token: user.accessToken },
      ),
    );
    assert.equal(wallet.items.find((i) => i.purchaseId === done.id)?.description, done.description);
    orders.set(done.description, done.order);
    return done.description;
  };
  const orders = new Map<string, unknown>();

  it('airtime: the face value and the network by name', async () => {
    assert.match(
      await described('buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 1_500.5 }),
      /^₦1,500\.50 MTN airtime to 0803\d{7}$/,
    );
  });

  it('electricity: the disco as people call it, the meter type and the meter', async () => {
    assert.equal(
      await described('buyElectricity', {
        plan: 'ikeja-electric',
        meter: '45012345675',
        type: 'prepaid',
        amount: 2_000,
        phone: mtn('5'),
      }),
      '₦2,000.00 Ikeja Electric prepaid electricity for meter 45012345675',
    );
    // What was ordered comes back in the buy operation's terms, for "Buy again".
    assert.deepEqual(orders.get('₦2,000.00 Ikeja Electric prepaid electricity for meter 45012345675'), {
      provider: 'ikeja-electric',
      type: 'prepaid',
      faceValue: 2_000,
    });
  });

  it('cable: the bouquet without the price in its catalogue name', async () => {
    const plan = (await world.ctx.vtuProviders.bills.cablePlans('dstv')).find(
      (p) => p.planId === 'dstv-padi',
    )!;
    assert.equal(plan.name, 'DStv Padi N4,400', 'the catalogue writes the price into the name');
    assert.equal(
      await described('subscribeCable', {
        identifier: 'dstv',
        iuc: '7012345675',
        plan_id: plan.planId,
        amount: Number(plan.wholesaleKobo) / 100,
        phone: mtn('5'),
      }),
      'DStv Padi for smartcard 7012345675',
    );
    assert.deepEqual(orders.get('DStv Padi for smartcard 7012345675'), {
      provider: 'dstv',
      plan: 'dstv-padi',
      type: 'change',
      faceValue: 4_400,
    });
  });

  it('data: the bundle and the network once, without the price', async () => {
    const plan = (await world.ctx.vtuProviders.data.dataPlans('mtn'))[0]!;
    const description = await described('buyData', {
      network: 'mtn',
      plan_id: plan.planId,
      phone: mtn('5'),
      amount: Number(plan.wholesaleKobo) / 100,
    });
    assert.match(description, /^MTN .+ data to 0803\d{7}$/);
    assert.doesNotMatch(description, /MTN.*MTN/);
  });

  it('betting: the company by name', async () => {
    assert.equal(
      await described('fundBet', { betting_company: 'bet9ja', customer_id: '12345675', amount: 1_000 }),
      '₦1,000.00 to Bet9ja account 12345675',
    );
  });

  it('exam pins: how many of which', async () => {
    const item = (await world.ctx.vtuProviders.bills.educationItems()).find((i) => i.exam === 'waec')!;
    assert.equal(
      await described('buyEducationPin', {
        exam: 'waec',
        variation: item.variation,
        quantity: 2,
        amount: (Number(item.wholesaleKobo) * 2) / 100,
        phone: mtn('5'),
      }),
      '2 × WASSCE Result Checker PIN',
    );
  });
});
