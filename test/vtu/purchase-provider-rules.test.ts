import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { assertLedgerOk, walletKobo } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, type World } from '../helpers/world.ts';
import { bought, buyCall, buyer, mtn, recordedPurchases } from './purchase-support.ts';

// A rule of the provider a purchase is routed to is checked before the debit (API.md section 2:
// "raised before any debit"), not found out by the adapter after it: the data vendor sells airtime
// only in whole naira, so with airtime routed to it ₦100.50 is refused with nothing charged or
// recorded, where VTpass (the default route) takes it.

describe(`purchases check the routed provider's amounts before the debit (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld({ env: { VTU_ROUTES: 'airtime=data' } });
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  it('airtime routed to the data vendor: ₦100.50 is a 400 naming data.amount, nothing debited or recorded', async () => {
    assert.equal(world.ctx.config.vtu.routes.airtime, 'data');
    const user = await buyer(world, 1_000);
    const refused = failure(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100.5 }),
    );
    assert.deepEqual([refused.status, refused.code], [400, 'VALIDATION_ERROR'], JSON.stringify(refused));
    const issues = (refused.details as { issues: Array<{ path: string[] }> }).issues;
    assert.deepEqual(
      issues.map((issue) => issue.path),
      [['data', 'amount']],
    );
    assert.equal(await walletKobo(world, user.userId), 100_000n, 'nothing debited');
    assert.equal(await recordedPurchases(world, user.userId), 0, 'no purchase recorded');
  });

  it('airtime routed to the data vendor: ₦100 is sold by it', async () => {
    const user = await buyer(world, 1_000);
    const done = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
    assert.equal(done.status, 'success');
    assert.equal(done.provider, 'data');
    assert.equal(done.amount, 100);
    assert.equal(await walletKobo(world, user.userId), 90_000n);
  });
});
