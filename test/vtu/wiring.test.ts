import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { startFloatTopUp } from '../../src/funding/float-top-ups.ts';
import { fundingDeps } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { sandboxPayments, startWebhookReceiver, type WebhookReceiver } from '../payments/helpers.ts';

// The VTU providers as the service builds them (src/context.ts): each adapter reaches its sandbox
// simulator over HTTP, routing follows SPEC.md item 3 unless configured, and a float top-up to a
// provider's configured bank account shows up in that simulator's balance.

describe(`VTU providers wired into the service (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let receiver: WebhookReceiver;
  before(async () => {
    world = await createWorld();
    receiver = await startWebhookReceiver();
  });
  after(async () => {
    await receiver.close();
    await world.close();
  });

  it('routes data, bills services and social to their providers by default', () => {
    assert.deepEqual(world.ctx.config.vtu.routes, {
      data: 'data',
      airtime: 'bills',
      cable: 'bills',
      electricity: 'bills',
      betting: 'bills',
      education: 'bills',
      airtime_to_cash: 'bills',
      social: 'social',
    });
    const routed = loadConfig({ VTU_ROUTES: 'data=bills,airtime=data' }).vtu.routes;
    assert.equal(routed.data, 'bills');
    assert.equal(routed.airtime, 'data');
    assert.throws(() => loadConfig({ VTU_ROUTES: 'lottery=bills' }), /VTU_ROUTES: unknown service lottery/);
    assert.throws(() => loadConfig({ VTU_ROUTES: 'data=elsewhere' }), /VTU_ROUTES/);
  });

  it('reaches every simulator over HTTP, and each routed provider offers the services routed to it', async () => {
    const { routes } = world.ctx.config.vtu;
    for (const [service, name] of Object.entries(routes)) {
      if (service === 'airtime_to_cash') continue; // VTpass sells no airtime-to-cash; no operation buys it yet.
      assert.ok(world.ctx.vtuProviders[name].services.has(service as never), `${name} offers ${service}`);
    }
    for (const provider of Object.values(world.ctx.vtuProviders)) {
      assert.ok((await provider.balance()) > 0n, `${provider.name} answers its balance`);
    }
    assert.ok((await world.ctx.vtuProviders.data.dataPlans('mtn')).length > 0);
    assert.ok((await world.ctx.vtuProviders.bills.discos()).length > 0);
    assert.ok((await world.ctx.vtuProviders.social.socialServices()).length > 0);
  });

  it('a settled float top-up to the bills account raises the bills simulator balance by that amount', async () => {
    const payments = sandboxPayments(world);
    payments.webhookUrlOverride = receiver.url;
    payments.transferSettleDelayMs = 0;
    const bills = world.ctx.vtuProviders.bills;
    const before = await bills.balance();
    const transfer = await startFloatTopUp(fundingDeps(world), {
      destination: { provider: 'bills', ...world.ctx.config.vtu.bills.funding },
      amountKobo: 2_500_000n,
      reason: 'float',
    });
    await receiver.waitFor((w) => w.event === 'transfer.success' && w.data.reference === transfer.reference);
    assert.equal((await bills.balance()) - before, 2_500_000n);
  });

  it('a float top-up settled, then reversed, leaves the bills simulator balance where it was', async () => {
    // The sandbox bank reverses transfers into an account number ending in 2.
    const reversing = await createWorld({
      env: { BILLS_FUNDING_ACCOUNT: '058:9900000022:Sandbox Bills Aggregator' },
    });
    try {
      const payments = sandboxPayments(reversing);
      payments.webhookUrlOverride = receiver.url;
      payments.transferSettleDelayMs = 0;
      payments.transferReversalDelayMs = 0;
      const bills = reversing.ctx.vtuProviders.bills;
      const before = await bills.balance();
      const transfer = await startFloatTopUp(fundingDeps(reversing), {
        destination: { provider: 'bills', ...reversing.ctx.config.vtu.bills.funding },
        amountKobo: 1_500_000n,
        reason: 'float',
      });
      await receiver.waitFor(
        (w) => w.event === 'transfer.reversed' && w.data.reference === transfer.reference,
      );
      assert.equal(await bills.balance(), before, 'the reversed money left the simulator again');
    } finally {
      await reversing.close();
    }
  });
});
