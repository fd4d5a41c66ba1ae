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

// The real SMM panel client over real HTTP against the sandbox panel alone, in a bare Fastify app:
// every magic last digit of the order quantity (API.md section 14), requery, the panel balance after
// each, the balance controls and the panel's own refusals.

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
    baseUrl: `${panel.baseUrl}/__sandbox/vtu/social/api/v2`,
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

  it('any other last digit: Completed at once, charged in full', async () => {
    const before = await social.balance();
    // A digit in the link decides nothing any more.
    const placed = await social.purchase(order('https://instagram.com/ada_obi_1', 1000));
    assert.ok(placed.status === 'success' && placed.providerReference !== null, placed.status);
    const completed = {
      status: 'success',
      providerReference: placed.providerReference,
      chargedKobo: 145_000n,
    };
    assert.deepEqual(placed, completed);
    assert.equal(panel.state.orders.get(Number(placed.providerReference))?.status, 'Completed');
    assert.equal(await social.balance(), before - 145_000n);
    assert.deepEqual(await requery(placed.providerReference), completed);
    assert.equal(await social.balance(), before - 145_000n);
  });

  it('charges rate × quantity / 1000 rounded up to the kobo', async () => {
    const before = await social.balance();
    // ₦12.345 per 1,000 × 50 = ₦0.61725: 62 kobo.
    const placed = await social.purchase(order('https://tiktok.com/@ada/video/7', 50, '2002'));
    assert.equal(placed.status, 'success');
    assert.equal(placed.status === 'success' ? placed.chargedKobo : null, 62n);
    assert.equal(await social.balance(), before - 62n);
  });

  it('quantity ending in 1: placed, then Canceled at once, and the whole charge goes back', async () => {
    const before = await social.balance();
    const ordersBefore = panel.state.orders.size;
    const failed = { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' };
    assert.deepEqual(await social.purchase(order('https://instagram.com/p/abc', 101)), failed);
    // The panel took the order (₦1,450 per 1,000 × 101 = ₦146.45) and gave the charge back.
    assert.equal(panel.state.orders.size, ordersBefore + 1);
    const recorded = [...panel.state.orders.values()].at(-1)!;
    assert.equal(recorded.status, 'Canceled');
    assert.equal(recorded.chargeKobo, 0n);
    assert.equal(recorded.remains, 101);
    assert.equal(await social.balance(), before);
    assert.deepEqual(await requery(String(recorded.order)), failed);
    assert.equal(await social.balance(), before, 'refunded once');
  });

  it('quantity ending in 2: Partial at once, half delivered, and the panel keeps the delivered share rounded up', async () => {
    const before = await social.balance();
    // ₦320.50 per 1,000 × 12 = ₦3.846: 385 kobo. 6 of 12 undelivered: 192.5 kobo back, rounded down to
    // 192, so the panel keeps 193.
    const placed = await social.purchase(order('https://instagram.com/p/likes', 12, '1002'));
    assert.ok(placed.status === 'success' && placed.providerReference !== null, placed.status);
    const partial = {
      status: 'success',
      providerReference: placed.providerReference,
      chargedKobo: 193n,
      remains: 6,
    };
    assert.deepEqual(placed, partial);
    assert.equal(panel.state.orders.get(Number(placed.providerReference))?.status, 'Partial');
    assert.equal(await social.balance(), before - 193n);
    assert.deepEqual(await requery(placed.providerReference), partial);
    assert.equal(await social.balance(), before - 193n, 'refunded once');
  });

  it('quantity ending in 2, another service: half remains and half the charge goes back', async () => {
    const before = await social.balance();
    // ₦3,800.75 per 1,000 × 102 = ₦387.6765: 38,768 kobo; 51 of 102 undelivered: 19,384 back.
    const placed = await social.purchase(order('https://x.com/ada', 102, '4001'));
    assert.ok(placed.status === 'success', placed.status);
    assert.equal(placed.remains, 51);
    assert.equal(placed.chargedKobo, 19_384n);
    assert.equal(await social.balance(), before - 19_384n);
  });

  it('quantity ending in 3: In progress on the add and the first status query, Completed from the second', async () => {
    const before = await social.balance();
    // ₦2,100 per 1,000 × 503 = ₦1,056.30.
    const placed = await social.purchase(order('https://youtube.com/watch?v=abc', 503, '3001'));
    // The client's own status query right after the add was the first: In progress.
    assert.ok(placed.status === 'pending' && placed.providerReference !== null, placed.status);
    const recorded = panel.state.orders.get(Number(placed.providerReference));
    assert.equal(recorded?.status, 'In progress');
    assert.equal(recorded?.remains, 503);
    assert.equal(await social.balance(), before - 105_630n);
    const completed = {
      status: 'success',
      providerReference: placed.providerReference,
      chargedKobo: 105_630n,
    };
    assert.deepEqual(await requery(placed.providerReference), completed);
    assert.equal(recorded?.remains, 0);
    assert.deepEqual(await requery(placed.providerReference), completed);
    assert.equal(await social.balance(), before - 105_630n);
  });

  it('quantity ending in 3, asked directly: the add answers {order}, then In progress once, then Completed', async () => {
    const key = `key=${SANDBOX_SOCIAL_API_KEY}`;
    const added = await post(`${key}&action=add&service=1002&link=https://instagram.com/p/x&quantity=13`);
    const { order: id } = (await added.json()) as { order: number };
    assert.ok(Number.isSafeInteger(id));
    const statusOf = async () =>
      ((await (await post(`${key}&action=status&order=${id}`)).json()) as { status: string }).status;
    assert.equal(await statusOf(), 'In progress');
    assert.equal(await statusOf(), 'Completed');
    assert.equal(await statusOf(), 'Completed');
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
    // The funds are checked before the quantity's digit counts: a cancel-to-be is refused the same.
    assert.deepEqual(await social.purchase(order('https://instagram.com/rich', 101)), {
      status: 'failed',
      reason: 'the panel refused the order: Not enough funds on balance',
    });
    assert.equal(panel.state.orders.size, ordersBefore);

    fundSandboxSocial(panel.state, 4_450n);
    assert.equal(await social.balance(), 14_500n);
    assert.equal((await social.purchase(order('https://instagram.com/rich', 100))).status, 'success');
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
    const slow = await post({
      key: SANDBOX_SOCIAL_API_KEY,
      action: 'add',
      service: 1002,
      link: 'https://instagram.com/p/json',
      quantity: 23,
    });
    const { order: slowId } = (await slow.json()) as { order: number };
    const completed = {
      charge: '3.21',
      start_count: String((1002 * 7 + 10) % 10_000),
      status: 'Completed',
      remains: '0',
      currency: 'NGN',
    };
    // ₦320.50 per 1,000 × 23 = ₦7.3715: 738 kobo.
    const slowAnswer = (status: string, remains: string) => ({
      charge: '7.38',
      start_count: String((1002 * 7 + 23) % 10_000),
      status,
      remains,
      currency: 'NGN',
    });
    const many = await post(`key=${SANDBOX_SOCIAL_API_KEY}&action=status&orders=${id},${slowId},5`);
    assert.deepEqual(await many.json(), {
      [String(id)]: completed,
      [String(slowId)]: slowAnswer('In progress', '23'),
      '5': { error: 'Incorrect order ID' },
    });
    const again = await post(`key=${SANDBOX_SOCIAL_API_KEY}&action=status&orders=${slowId}`);
    assert.deepEqual(await again.json(), { [String(slowId)]: slowAnswer('Completed', '0') });
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
