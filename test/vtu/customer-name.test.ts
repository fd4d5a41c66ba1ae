import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createVerifiedCustomers, verifiedNameFreshMs } from '../../src/catalogue/verified-customers.ts';
import type { CustomerLookupRequest } from '../../src/providers/vtu/vtu-provider.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, get, ok, post, type World } from '../helpers/world.ts';
import { advanceClock, bought, buyer, current, mtn } from './purchase-support.ts';

// The customer's name on a bill's record (issue 26: a receipt says whose meter it is), through the
// sandbox bills provider: from the provider's own answer where it names the customer (IKEDC's
// customerName, KEDCO's CustomerName, also when it arrives with a later requery), else from the
// look-up the buy screen made of the same number just before paying; absent when neither gave one,
// and the purchase succeeds all the same.

/** A sandbox account number (meter, smartcard, customer id) ending in the digit that decides the outcome. */
const accountEnding = (last: string, length = 11) =>
  `${String(Math.floor(Math.random() * 10 ** (length - 1))).padStart(length - 1, '0')}${last}`;

describe(`the customer's name on a purchase (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  /** The name the provider holds for the number, asked of it directly (this fills no cache). */
  async function holder(request: CustomerLookupRequest): Promise<string> {
    const found = await world.ctx.vtuProviders.bills.verifyCustomer(request);
    assert.ok(found.found);
    return found.name;
  }

  const electricity = (plan: string, meter: string, type = 'prepaid') => ({
    plan,
    meter,
    type,
    amount: 1_500,
    phone: mtn('5'),
  });

  it("names an electricity purchase from the DisCo's answer, in either of its spellings, with no look-up", async () => {
    const user = await buyer(world, 20_000);
    for (const [disco, type] of [
      ['ikeja-electric', 'prepaid'],
      ['kano-electric', 'prepaid'],
      ['ikeja-electric', 'postpaid'],
    ] as const) {
      const meter = accountEnding('5');
      const done = await bought(world, user, 'buyElectricity', electricity(disco, meter, type));
      assert.equal(done.status, 'success', disco);
      const name = await holder({ service: 'electricity', disco, meter, meterType: type });
      assert.equal(done.customerName, name, `${disco} ${type}`);
    }
  });

  it('leaves the name out when the answer has none and nothing was looked up, and the purchase succeeds', async () => {
    const user = await buyer(world, 20_000);
    const done = await bought(world, user, 'buyElectricity', electricity('eko-electric', accountEnding('5')));
    assert.equal(done.status, 'success');
    assert.ok(done.token, 'the token came');
    assert.equal(done.customerName, undefined);
    assert.ok(!('customerName' in done), 'absent, not null or empty');
  });

  it("takes the name from the meter's look-up before paying when the DisCo's answer has none", async () => {
    const user = await buyer(world, 20_000);
    const meter = accountEnding('5');
    const found = ok(
      await post<{ name: string }>(
        world,
        'verifyMeter',
        { meter, plan: 'eko-electric', type: 'prepaid' },
        { token: user.accessToken },
      ),
    );
    const accepted = await bought(world, user, 'buyElectricity', electricity('eko-electric', meter));
    assert.equal(accepted.status, 'success');
    assert.equal(accepted.customerName, found.name);

    // The look-up named that meter at that DisCo as prepaid: another meter, or the same one looked up
    // at another DisCo, is not named by it.
    const other = await bought(
      world,
      user,
      'buyElectricity',
      electricity('eko-electric', accountEnding('5')),
    );
    assert.equal(other.customerName, undefined);
  });

  it('names a cable subscription and a betting funding from their look-ups, and neither without one', async () => {
    const user = await buyer(world, 100_000);
    const plan = (await world.ctx.vtuProviders.bills.cablePlans('dstv'))[0]!;
    const cable = (iuc: string) => ({
      identifier: 'dstv',
      iuc,
      plan_id: plan.planId,
      amount: Number(plan.wholesaleKobo) / 100,
      phone: mtn('5'),
    });
    const iuc = accountEnding('5', 10);
    const card = ok(
      await post<{ name: string }>(
        world,
        'verifyCableIUC',
        { identifier: 'dstv', iuc },
        { token: user.accessToken },
      ),
    );
    const subscribed = await bought(world, user, 'subscribeCable', cable(iuc));
    assert.equal(subscribed.status, 'success');
    assert.equal(subscribed.customerName, card.name);
    const unnamed = await bought(world, user, 'subscribeCable', cable(accountEnding('5', 10)));
    assert.equal(unnamed.status, 'success');
    assert.equal(unnamed.customerName, undefined);

    const company = (await world.ctx.vtuProviders.bills.bettingCompanies())[0]!;
    const customerId = accountEnding('5', 8);
    const account = ok(
      await post<{ name: string }>(
        world,
        'verifyBetAccount',
        { betting_company: company.id, customer_id: customerId },
        { token: user.accessToken },
      ),
    );
    const funded = await bought(world, user, 'fundBet', {
      betting_company: company.id,
      customer_id: customerId,
      amount: 1_000,
    });
    assert.equal(funded.status, 'success');
    assert.equal(funded.customerName, account.name);
    const listed = ok(
      await get<{ items: Array<{ id: string; customerName?: string }> }>(
        world,
        'listMyVtuTransactions',
        { service: 'betting' },
        { token: user.accessToken },
      ),
    );
    assert.equal(
      listed.items.find((item) => item.id === funded.id)?.customerName,
      account.name,
      'listed too',
    );
  });

  it('keeps the name that arrives with a later requery of a pending purchase', async () => {
    const user = await buyer(world, 20_000);
    const meter = accountEnding('2');
    const pending = await bought(world, user, 'buyElectricity', electricity('ikeja-electric', meter));
    assert.equal(pending.status, 'processing');
    assert.equal(pending.customerName, undefined, 'a pending answer names nobody');
    await advanceClock(world, 61);
    const done = await current(world, user, pending.id);
    assert.equal(done.status, 'success');
    assert.equal(
      done.customerName,
      await holder({ service: 'electricity', disco: 'ikeja-electric', meter, meterType: 'prepaid' }),
    );
  });
});

describe('the names the look-ups found lately', () => {
  const meter = (number: string): Extract<CustomerLookupRequest, { service: 'electricity' }> => ({
    service: 'electricity',
    disco: 'ikeja-electric',
    meter: number,
    meterType: 'prepaid',
  });

  it('names a number for 30 minutes after its look-up, then no longer', () => {
    let now = Date.parse('2026-12-01T10:00:00Z');
    const names = createVerifiedCustomers({ now: () => new Date(now) });
    names.remember(meter('45012345675'), 'OKAFOR ADAEZE');
    assert.equal(names.nameOf(meter('45012345675')), 'OKAFOR ADAEZE');
    assert.equal(names.nameOf({ ...meter('45012345675'), meterType: 'postpaid' }), undefined);
    assert.equal(
      names.nameOf({ service: 'betting', company: 'ikeja-electric', customerId: '45012345675' }),
      undefined,
    );
    now += verifiedNameFreshMs - 1;
    assert.equal(names.nameOf(meter('45012345675')), 'OKAFOR ADAEZE');
    now += 1;
    assert.equal(names.nameOf(meter('45012345675')), undefined);
  });

  it('keeps a bounded number of names, forgetting the least recently looked up first', () => {
    const names = createVerifiedCustomers({ now: () => new Date() }, 2);
    names.remember(meter('1'), 'ONE');
    names.remember(meter('2'), 'TWO');
    names.remember(meter('1'), 'ONE AGAIN');
    names.remember(meter('3'), 'THREE');
    assert.deepEqual(
      ['1', '2', '3'].map((n) => names.nameOf(meter(n))),
      ['ONE AGAIN', undefined, 'THREE'],
    );
  });
});
