import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { DomainEvent } from '../../src/events/domain-events.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { processed, sendWebhook } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { until } from '../helpers/until.ts';
import { createWorld, ok, type World } from '../helpers/world.ts';
import { sandboxPayments, startWebhookReceiver, type WebhookReceiver } from '../payments/helpers.ts';
import { bought, buyCall, buyer, current, mtn } from './purchase-support.ts';

// Just-in-time funding of a provider's float (issue 5 item 8): a provider whose balance at the
// sandbox would not cover a purchase is topped up from the collections pool by a float top-up,
// and the purchase waits for it, unsent. The sandbox provider's transfer webhooks are caught by a test
// receiver and handed to the service byte for byte, and the domain events they cause are run here,
// so each step happens when the test says.

async function setBillsBalance(world: World, naira: number): Promise<void> {
  const response = await fetch(`${world.baseUrl}/__sandbox/providers/bills/balance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: naira }),
  });
  assert.equal(response.status, 200, await response.text());
}

function describeFloat(name: string, fundingAccountLast: '0' | '1', body: (ctx: () => Harness) => void) {
  describe(`${name} (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
    let harness: Harness;
    before(async () => {
      const world = await createWorld({
        env: {
          BILLS_FUNDING_ACCOUNT: `058:99000000${fundingAccountLast === '0' ? '20' : '21'}:Sandbox Bills Aggregator`,
        },
      });
      harness = { world, receiver: await startWebhookReceiver() };
    });
    beforeEach(() => {
      const payments = sandboxPayments(harness.world);
      payments.webhookUrlOverride = harness.receiver.url;
      payments.transferSettleDelayMs = 0;
    });
    afterEach(async () => {
      const check = await checkLedger(harness.world.ctx.db);
      assert.ok(check.ok, JSON.stringify(check.imbalances));
    });
    after(async () => {
      await harness.receiver.close();
      await harness.world.close();
    });
    body(() => harness);
  });
}

type Harness = { world: World; receiver: WebhookReceiver };

/** Hands the provider's transfer webhook to the service, processes it, and runs the events it raised. */
async function deliverTransferEvent(h: Harness, reference: string, event: string): Promise<void> {
  const [webhook] = await h.receiver.waitFor((w) => w.event === event && w.data?.reference === reference);
  assert.equal((await sendWebhook(h.world, webhook!.raw)).status, 200);
  await processed(h.world, webhook!.raw);
  const { rows } = await sql<{ data: DomainEvent }>`
    select data from pgboss.job where name = 'domain-event' and data->>'reference' = ${reference}
  `.execute(h.world.ctx.db);
  for (const row of rows) await h.world.ctx.events.dispatch(row.data);
}

async function floatTopUps(world: World) {
  return world.ctx.db
    .selectFrom('float_top_ups')
    .select(['reference', 'amount', 'status'])
    .where('provider', '=', 'bills')
    .orderBy('created_at')
    .execute();
}

describeFloat('just-in-time funding of a provider float', '0', (h) => {
  it('a provider short of float is topped up by ₦50,000 first; the purchase waits, then is delivered', async () => {
    const { world } = h();
    await setBillsBalance(world, 100);
    const user = await buyer(world, 5_000);
    const accepted = ok(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 }),
    );
    await world.ctx.modules.vtu.api.drained();
    assert.equal((await current(world, user, accepted.id)).status, 'processing', 'waiting for the float');
    const topUps = await floatTopUps(world);
    assert.equal(topUps.length, 1);
    assert.equal(topUps[0]!.amount, 5_000_000n, 'the configured minimum top-up');

    await deliverTransferEvent(h(), topUps[0]!.reference, 'transfer.success');
    assert.equal((await current(world, user, accepted.id)).status, 'success');
    assert.equal(await world.ctx.vtuProviders.bills.balance(), 10_000n + 5_000_000n - 50_000n);
  });

  it('a burst of purchases short of float shares one top-up', async () => {
    const { world } = h();
    await setBillsBalance(world, 0);
    const before = (await floatTopUps(world)).length;
    const user = await buyer(world, 10_000);
    const accepted = await Promise.all(
      Array.from({ length: 5 }, async () =>
        ok(await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 })),
      ),
    );
    await world.ctx.modules.vtu.api.drained();
    const topUps = (await floatTopUps(world)).slice(before);
    assert.equal(topUps.length, 1, 'one top-up for the burst');
    await deliverTransferEvent(h(), topUps[0]!.reference, 'transfer.success');
    for (const purchase of accepted)
      assert.equal((await current(world, user, purchase.id)).status, 'success');
  });
});

describeFloat('a float top-up that fails', '1', (h) => {
  it('fails the waiting purchase, refunds it exactly, alerts operations; the provider never saw it', async () => {
    const { world } = h();
    await setBillsBalance(world, 0);
    const user = await buyer(world, 5_000);
    const accepted = ok(
      await buyCall(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 }),
    );
    await world.ctx.modules.vtu.api.drained();
    const [transfer] = await floatTopUps(world);
    assert.ok(transfer !== undefined);
    await deliverTransferEvent(h(), transfer.reference, 'transfer.failed');
    const done = await current(world, user, accepted.id);
    assert.equal(done.status, 'failed');
    assert.match(done.failureReason ?? '', /could not be funded/);
    const { rows } = await sql<{ wallet: string }>`
      select balance::text as wallet from ledger_accounts where code = ${`wallet:${user.userId}`}
    `.execute(world.ctx.db);
    assert.equal(rows[0]?.wallet, '500000', 'refunded in full');
    const orders = [...world.ctx.sandbox!.state.bills.orders.values()].filter(
      (o) => o.requestId === done.reference,
    );
    assert.equal(orders.length, 0, 'never sent to the provider');
    const { rows: alerts } = await sql<{ kind: string }>`
      select kind from ops_alerts where details->>'reference' = ${transfer.reference}
    `.execute(world.ctx.db);
    assert.deepEqual(
      alerts.map((a) => a.kind),
      ['provider_funding_failed'],
      'operations told of this transfer, once',
    );
  });
});

// What is in flight to a provider is counted per database (float-reservations.ts), shared by the
// processes on it, never per Node process: two worlds on two databases in one process have their own
// providers and balances, so an amount one of them is sending says nothing about the other's float. It
// was a module-level map once, and a purchase held in flight in one world made the other top up a
// float that covered its purchase. (Processes on one database share it: shared-float.test.ts.)
describe(`the amounts in flight belong to one database (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let first: World;
  let second: World;
  before(async () => {
    // The first world's purchase stays unanswered, so in flight, for longer than the test takes.
    first = await createWorld({ env: { VTU_TIMEOUT_MS: '60000' } });
    first.ctx.sandbox!.state.bills.timeoutHoldMs = 120_000;
    second = await createWorld();
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it("a purchase in flight in one world leaves another world's float decision alone", async () => {
    const holder = await buyer(first, 5_000);
    // The timeout digit (4): the provider takes the order and never answers while the test runs.
    ok(await buyCall(first, holder, 'buyAirtime', { network: 'mtn', phone: mtn('4'), amount: 500 }));
    await until(
      () => first.ctx.sandbox!.state.bills.orders.size === 1,
      "the first world's purchase reaching its provider",
    );

    // Exactly covered by the second world's own balance: sent at once, with no top-up.
    await setBillsBalance(second, 500);
    const user = await buyer(second, 5_000);
    const done = await bought(second, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 500 });
    assert.equal(done.status, 'success', 'sent without waiting for a float top-up');
    assert.deepEqual(await floatTopUps(second), [], 'no top-up in the second world');

    assert.equal(
      await first.ctx.modules.vtu.api.floatReservedKobo('bills'),
      50_000n,
      'the first world counts its own',
    );
    assert.equal(
      await second.ctx.modules.vtu.api.floatReservedKobo('bills'),
      0n,
      'the second world has nothing in flight: its delivered purchase released what it held',
    );
    const check = await checkLedger(second.ctx.db);
    assert.ok(check.ok, JSON.stringify(check.imbalances));
  });
});
