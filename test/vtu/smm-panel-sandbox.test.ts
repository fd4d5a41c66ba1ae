import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock } from '../../src/clock.ts';
import { createSmmPanelClient } from '../../src/providers/vtu/smm-panel-client.ts';
import type { VtuProvider } from '../../src/providers/vtu/vtu-provider.ts';
import {
  createSandboxSocialState,
  fundSandboxSocial,
  registerSandboxSocial,
  SANDBOX_SOCIAL_API_KEY,
  type SandboxSocialState,
} from '../../src/sandbox/vtu/social.ts';
import { until } from '../helpers/until.ts';

// The real SMM panel client over real HTTP against the sandbox panel alone, in a bare Fastify app:
// every magic digit of the link, requery, the balance controls, the panel's own refusals, and the
// held (digit 4) request that must not outlive the app.

type Panel = { app: FastifyInstance; state: SandboxSocialState; baseUrl: string };

async function startPanel(): Promise<Panel> {
  const app = Fastify({ logger: false });
  const state = createSandboxSocialState();
  registerSandboxSocial(app, state, { clock: systemClock });
  // A route outside the simulator, to show that its form parser stays inside it.
  app.post('/elsewhere', async () => ({ ok: true }));
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, state, baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

const clientFor = (panel: Panel, options: { timeoutMs?: number; apiKey?: string } = {}): VtuProvider =>
  createSmmPanelClient({
    name: 'social',
    baseUrl: () => `${panel.baseUrl}/__sandbox/vtu/social/api/v2`,
    apiKey: options.apiKey ?? SANDBOX_SOCIAL_API_KEY,
    timeoutMs: options.timeoutMs ?? 5_000,
  });

const order = (link: string, quantity = 1000, serviceId = '1001') =>
  ({ service: 'social', reference: `vtu_${link}`, serviceId, link, quantity }) as const;

describe('SMM panel sandbox, through the real client', () => {
  let panel: Panel;
  let social: VtuProvider;

  before(async () => {
    panel = await startPanel();
    social = clientFor(panel);
  });
  after(() => panel.app.close());

  const requery = (providerReference: string | null) =>
    social.requery({ reference: 'vtu_x', service: 'social', providerReference });
  const post = (body: string | Record<string, unknown>, path = '/__sandbox/vtu/social/api/v2') =>
    fetch(`${panel.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': typeof body === 'string' ? 'application/x-www-form-urlencoded' : 'application/json',
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });

  it('lists its catalogue in kobo, leaving out what a link and quantity cannot order', async () => {
    const items = await social.socialServices();
    assert.ok(items.length >= 10);
    const byId = new Map(items.map((item) => [item.serviceId, item]));
    assert.deepEqual(byId.get('1001'), {
      serviceId: '1001',
      name: 'Instagram Followers [Real, 30-day refill]',
      category: 'Instagram Followers',
      ratePer1000Kobo: 145_000n,
      min: 10,
      max: 100_000,
    });
    // ₦12.345 per 1,000 is 1,234.5 kobo: rounded up.
    assert.equal(byId.get('2002')?.ratePer1000Kobo, 1235n);
    assert.equal(byId.has('1004'), false, 'Custom Comments needs comments, which a purchase cannot send');
    for (const category of ['Instagram', 'TikTok', 'YouTube', 'Twitter/X']) {
      assert.ok(
        items.some((item) => item.category.startsWith(category)),
        category,
      );
    }
  });

  it('accepts an order on a link with no special digit and reports it Completed, charged', async () => {
    const before = await social.balance();
    const placed = await social.purchase(order('https://instagram.com/ada_obi', 1000));
    assert.equal(placed.status, 'pending');
    assert.ok(placed.status === 'pending' && placed.providerReference !== null);
    assert.deepEqual(await requery(placed.providerReference), {
      status: 'success',
      providerReference: placed.providerReference,
      chargedKobo: 145_000n,
    });
    assert.equal(await social.balance(), before - 145_000n);
  });

  it('charges rate × quantity / 1000 rounded up to the kobo', async () => {
    const before = await social.balance();
    // ₦12.345 per 1,000 × 50 = ₦0.61725: 62 kobo.
    const placed = await social.purchase(order('https://tiktok.com/@ada/video/7', 50, '2002'));
    assert.equal(placed.status, 'pending');
    assert.equal(await social.balance(), before - 62n);
  });

  it('digit 1: refuses the order and charges nothing', async () => {
    const before = await social.balance();
    const ordersBefore = panel.state.orders.size;
    const outcome = await social.purchase(order('https://instagram.com/p/abc1'));
    assert.deepEqual(outcome, { status: 'failed', reason: 'the panel refused the order: Incorrect link' });
    assert.equal(await social.balance(), before);
    assert.equal(panel.state.orders.size, ordersBefore);
  });

  it('digit 2: Pending until asked, then Completed', async () => {
    const placed = await social.purchase(order('https://youtube.com/watch?v=a2b', 500, '3001'));
    assert.ok(placed.status === 'pending' && placed.providerReference !== null);
    assert.equal(panel.state.orders.get(Number(placed.providerReference))?.status, 'Pending');
    assert.deepEqual(await requery(placed.providerReference), {
      status: 'success',
      providerReference: placed.providerReference,
      chargedKobo: 105_000n,
    });
    assert.equal((await requery(placed.providerReference)).status, 'success');
  });

  it('digit 3: Canceled when asked, and the charge goes back to the panel balance', async () => {
    const before = await social.balance();
    const placed = await social.purchase(order('https://x.com/ada3', 100, '4001'));
    assert.ok(placed.status === 'pending' && placed.providerReference !== null);
    // ₦3,800.75 per 1,000 × 100 = ₦380.075: 38,008 kobo.
    assert.equal(await social.balance(), before - 38_008n);
    const failed = { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' };
    assert.deepEqual(await requery(placed.providerReference), failed);
    assert.equal(await social.balance(), before);
    assert.deepEqual(await requery(placed.providerReference), failed);
    assert.equal(await social.balance(), before, 'refunded once');
  });

  it('digit 4: no answer (unknown), the order recorded and charged; requery without its id stays unknown', async () => {
    const holdMs = panel.state.timeoutHoldMs;
    panel.state.timeoutHoldMs = 60_000;
    try {
      const before = await social.balance();
      const outcome = await clientFor(panel, { timeoutMs: 150 }).purchase(
        order('https://instagram.com/p/zz4', 100),
      );
      assert.deepEqual(outcome, { status: 'unknown', reason: 'the panel did not answer within 150 ms' });
      const recorded = [...panel.state.orders.values()].find((o) => o.link === 'https://instagram.com/p/zz4');
      assert.equal(recorded?.status, 'Completed');
      assert.equal(await social.balance(), before - 14_500n);
      const lost = await requery(null);
      assert.equal(lost.status, 'unknown');
      // The panel knows the order; only its id, lost with the answer, would find it.
      assert.equal((await requery(String(recorded.order))).status, 'success');
    } finally {
      panel.state.timeoutHoldMs = holdMs;
    }
  });

  it('digit 4: drops the connection once the hold is over', async () => {
    const holdMs = panel.state.timeoutHoldMs;
    panel.state.timeoutHoldMs = 20;
    try {
      const outcome = await social.purchase(order('https://tiktok.com/@b/video/44', 100, '2001'));
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /unreachable/);
    } finally {
      panel.state.timeoutHoldMs = holdMs;
    }
  });

  it('refuses quantities outside the service limits, as a panel words it', async () => {
    assert.deepEqual(await social.purchase(order('https://instagram.com/q', 9)), {
      status: 'failed',
      reason: 'the panel refused the order: Quantity less than minimal 10',
    });
    assert.deepEqual(await social.purchase(order('https://instagram.com/q', 100_001)), {
      status: 'failed',
      reason: 'the panel refused the order: Quantity more than maximal 100000',
    });
    const key = `key=${SANDBOX_SOCIAL_API_KEY}`;
    const unknownService = await post(`${key}&action=add&service=999&link=a&quantity=100`);
    assert.deepEqual(await unknownService.json(), { error: 'Incorrect service ID' });
    const badQuantity = await post(`${key}&action=add&service=1001&link=a&quantity=ten`);
    assert.deepEqual(await badQuantity.json(), { error: 'Incorrect quantity' });
  });

  it('sets and reads its balance in naira, and refuses an order it cannot cover', async () => {
    const set = await post({ amount: 100.5 }, '/__sandbox/providers/social/balance');
    assert.equal(set.status, 200);
    assert.deepEqual(await set.json(), { balance: 100.5 });
    const read = await fetch(`${panel.baseUrl}/__sandbox/providers/social/balance`);
    assert.deepEqual(await read.json(), { balance: 100.5 });
    assert.equal(await social.balance(), 10_050n);

    const ordersBefore = panel.state.orders.size;
    // ₦1,450 per 1,000 × 100 = ₦145, more than ₦100.50.
    assert.deepEqual(await social.purchase(order('https://instagram.com/rich', 100)), {
      status: 'failed',
      reason: 'the panel refused the order: Not enough funds on balance',
    });
    assert.equal(panel.state.orders.size, ordersBefore);
    assert.equal(await social.balance(), 10_050n);

    fundSandboxSocial(panel.state, 4_450n);
    assert.equal(await social.balance(), 14_500n);
    assert.equal((await social.purchase(order('https://instagram.com/rich', 100))).status, 'pending');
    assert.equal(await social.balance(), 0n);
    assert.throws(() => fundSandboxSocial(panel.state, 0n), RangeError);

    for (const bad of [{ amount: -1 }, { amount: 1.234 }, { amount: '5' }, { amount: 5, extra: 1 }, {}]) {
      const refused = await post(bad, '/__sandbox/providers/social/balance');
      assert.equal(refused.status, 400, JSON.stringify(bad));
    }
    await post({ amount: 1_000_000 }, '/__sandbox/providers/social/balance');
  });

  it('refuses a wrong key on every action, with HTTP 200 as panels do', async () => {
    const wrong = clientFor(panel, { apiKey: 'not-the-key' });
    assert.deepEqual(await wrong.purchase(order('https://instagram.com/k')), {
      status: 'failed',
      reason: 'the panel refused our API key (check the configuration): Invalid API key',
    });
    await assert.rejects(wrong.balance(), /refused: Invalid API key/);
    await assert.rejects(wrong.socialServices(), /refused: Invalid API key/);
    assert.equal(
      (await wrong.requery({ reference: 'r', service: 'social', providerReference: '23501' })).status,
      'unknown',
    );
    const missing = await post('action=balance');
    assert.equal(missing.status, 200);
    assert.deepEqual(await missing.json(), { error: 'Invalid API key' });
  });

  it('answers "Incorrect order ID" for an order it never took, which the client reads as unknown', async () => {
    for (const id of ['1', 'not-a-number']) {
      const outcome = await requery(id);
      assert.equal(outcome.status, 'unknown');
      assert.match((outcome as { reason: string }).reason, /Incorrect order ID/);
    }
  });

  it('takes JSON bodies too, several orders in one status query, and refuses an unknown action', async () => {
    const added = await post({
      key: SANDBOX_SOCIAL_API_KEY,
      action: 'add',
      service: 1002,
      link: 'https://instagram.com/p/json',
      quantity: 10,
    });
    const { order: id } = (await added.json()) as { order: number };
    assert.ok(Number.isSafeInteger(id));
    const many = await post(`key=${SANDBOX_SOCIAL_API_KEY}&action=status&orders=${id},5`);
    assert.deepEqual(await many.json(), {
      [String(id)]: {
        charge: '3.21',
        start_count: String((1002 * 7 + 10) % 10_000),
        status: 'Completed',
        remains: '0',
        currency: 'NGN',
      },
      '5': { error: 'Incorrect order ID' },
    });
    const unknown = await post(`key=${SANDBOX_SOCIAL_API_KEY}&action=refill_everything`);
    assert.deepEqual(await unknown.json(), { error: 'Incorrect request' });
    const balance = await post(`key=${SANDBOX_SOCIAL_API_KEY}&action=balance`);
    assert.deepEqual(Object.keys((await balance.json()) as object), ['balance', 'currency']);
  });

  it('keeps its form parser to itself', async () => {
    const elsewhere = await post('a=1', '/elsewhere');
    assert.equal(elsewhere.status, 415);
  });
});

describe('SMM panel sandbox closing', () => {
  it('lets a held (digit 4) request go at once when the app closes', { timeout: 20_000 }, async () => {
    const panel = await startPanel();
    panel.state.timeoutHoldMs = 60_000;
    const body = new URLSearchParams({
      key: SANDBOX_SOCIAL_API_KEY,
      action: 'add',
      service: '1001',
      link: 'https://instagram.com/hold4',
      quantity: '10',
    });
    const held = fetch(`${panel.baseUrl}/__sandbox/vtu/social/api/v2`, { method: 'POST', body });
    const outcome = held.then(
      () => 'answered',
      () => 'connection dropped',
    );
    await until(() => panel.state.orders.size === 1);
    const started = performance.now();
    await panel.app.close();
    assert.ok(performance.now() - started < 5_000, 'close waited for the hold');
    assert.equal(await outcome, 'connection dropped');
  });
});
