import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createDataVendorClient } from '../../src/providers/vtu/data-vendor-client.ts';
import type { Network, PurchaseRequest, VtuProvider } from '../../src/providers/vtu/vtu-provider.ts';
import {
  createSandboxDataState,
  fundSandboxData,
  registerSandboxData,
  SANDBOX_DATA_TOKEN,
  type SandboxDataState,
} from '../../src/sandbox/vtu/data.ts';
import { until } from '../helpers/until.ts';

// The real data vendor client against the sandbox data vendor over real HTTP, on a bare Fastify app
// holding nothing but the simulator: every magic last digit for data and airtime, how a pending order
// settles on requery, the vendor wallet (set, read, insufficient, refunds), a reused ident, the token,
// the catalogue, and the unanswered purchase (digit 4), whose held request app.close() releases.

type Sandbox = { app: FastifyInstance; state: SandboxDataState; baseUrl: string };

async function startSandbox(configure: (state: SandboxDataState) => void = () => {}): Promise<Sandbox> {
  const app = Fastify({ logger: false });
  const state = createSandboxDataState();
  configure(state);
  registerSandboxData(app, state, { clock: { now: () => new Date('2026-11-22T14:30:00.000Z') } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, state, baseUrl: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

const vendorClient = (
  sandbox: Sandbox,
  options: { timeoutMs?: number; token?: string; networkIds?: Partial<Record<Network, number>> } = {},
): VtuProvider =>
  createDataVendorClient({
    name: 'data',
    baseUrl: `${sandbox.baseUrl}/__sandbox/vtu/data`,
    token: options.token ?? SANDBOX_DATA_TOKEN,
    timeoutMs: options.timeoutMs ?? 2_000,
    ...(options.networkIds !== undefined ? { networkIds: options.networkIds } : {}),
  });

let referenceCount = 0;
const uniqueReference = () => `vtu_sandbox_${process.pid}_${++referenceCount}`;

/** MTN SME 1.0GB at ₦560 in the sandbox catalogue. */
const mtn1gb = { planId: '337', priceKobo: 560_00n };

const buyData = (phone: string, overrides: Partial<Extract<PurchaseRequest, { service: 'data' }>> = {}) =>
  ({
    service: 'data',
    reference: uniqueReference(),
    network: 'mtn',
    planId: mtn1gb.planId,
    phone,
    ...overrides,
  }) satisfies PurchaseRequest;

const buyAirtime = (phone: string, amountKobo = 1_000_00n) =>
  ({
    service: 'airtime',
    reference: uniqueReference(),
    network: 'airtel',
    phone,
    amountKobo,
  }) satisfies PurchaseRequest;

describe('data vendor client against the sandbox data vendor', () => {
  let sandbox: Sandbox;
  let client: VtuProvider;

  before(async () => {
    sandbox = await startSandbox();
    client = vendorClient(sandbox);
  });
  after(() => sandbox.app.close());
  beforeEach(() => {
    sandbox.state.balanceKobo = 100_000_000n;
  });

  const control = async (method: 'GET' | 'POST', body?: unknown) => {
    const response = await fetch(`${sandbox.baseUrl}/__sandbox/providers/data/balance`, {
      method,
      ...(body !== undefined
        ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }
        : {}),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  describe('data, by the last digit of the number', () => {
    it('any other digit: successful at once, the plan price charged', async () => {
      for (const phone of ['08031234560', '08031234565', '09061234569']) {
        const before = sandbox.state.balanceKobo;
        const request = buyData(phone);
        const outcome = await client.purchase(request);
        assert.equal(outcome.status, 'success');
        assert.equal(outcome.status === 'success' ? outcome.chargedKobo : null, mtn1gb.priceKobo);
        assert.match(outcome.status === 'success' ? (outcome.providerReference ?? '') : '', /^\d+$/);
        assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
        const order = sandbox.state.orders.at(-1);
        assert.equal(order?.ident, request.reference);
        assert.equal(order?.ported, true);
      }
    });

    it('1: failed at once, nothing charged, and requery agrees', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234561');
      const outcome = await client.purchase(request);
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /failed at the network/);
      assert.equal(sandbox.state.balanceKobo, before);
      const requeried = await client.requery({
        reference: request.reference,
        service: 'data',
        providerReference: null,
      });
      assert.equal(requeried.status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before);
    });

    it('2: pending and charged; the first requery finds it successful, and it stays so', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234562');
      const outcome = await client.purchase(request);
      assert.equal(outcome.status, 'pending');
      const providerReference = outcome.status === 'pending' ? outcome.providerReference : null;
      assert.match(providerReference ?? '', /^\d+$/);
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
      const query = { reference: request.reference, service: 'data' as const, providerReference };
      assert.deepEqual(await client.requery(query), {
        status: 'success',
        providerReference,
        chargedKobo: mtn1gb.priceKobo,
      });
      assert.equal((await client.requery(query)).status, 'success');
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo, 'charged once');
    });

    it('3: pending and charged; the first requery finds it failed and the wallet refunded', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234563');
      const outcome = await client.purchase(request);
      assert.equal(outcome.status, 'pending');
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
      const providerReference = outcome.status === 'pending' ? outcome.providerReference : null;
      const query = { reference: request.reference, service: 'data' as const, providerReference };
      assert.equal((await client.requery(query)).status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before, 'refunded');
      assert.equal((await client.requery(query)).status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before, 'refunded once');
    });

    it('3: a requery by ident (the order list) settles it the same way', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234563');
      assert.equal((await client.purchase(request)).status, 'pending');
      const requeried = await client.requery({
        reference: request.reference,
        service: 'data',
        providerReference: null,
      });
      assert.equal(requeried.status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before);
    });

    it('4: no answer (unknown), yet the order was placed and charged; requery by ident finds it successful', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234564');
      const outcome = await vendorClient(sandbox, { timeoutMs: 200 }).purchase(request);
      assert.deepEqual(outcome, {
        status: 'unknown',
        reason: 'data: data purchase did not answer within 200 ms',
      });
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
      const requeried = await client.requery({
        reference: request.reference,
        service: 'data',
        providerReference: null,
      });
      assert.equal(requeried.status, 'success');
      const order = sandbox.state.orders.find((o) => o.ident === request.reference);
      assert.ok(order);
      const byId = await client.requery({
        reference: request.reference,
        service: 'data',
        providerReference: String(order.id),
      });
      assert.equal(byId.status, 'success');
    });
  });

  describe('airtime, by the last digit of the number', () => {
    it('any other digit: successful, charged 98% of the face value', async () => {
      const before = sandbox.state.balanceKobo;
      const outcome = await client.purchase(buyAirtime('08021234567', 1_000_00n));
      assert.equal(outcome.status, 'success');
      assert.equal(outcome.status === 'success' ? outcome.chargedKobo : null, 980_00n);
      assert.equal(sandbox.state.balanceKobo, before - 980_00n);
      assert.equal(sandbox.state.orders.at(-1)?.kind, 'topup');
      assert.equal(sandbox.state.orders.at(-1)?.networkId, 4, 'Airtel is 4 at DataStation');
    });

    it('1: failed, nothing charged', async () => {
      const before = sandbox.state.balanceKobo;
      assert.equal((await client.purchase(buyAirtime('08021234561'))).status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before);
    });

    it('2 and 3: pending, then successful or failed (refunded) at GET /api/topup/{id}', async () => {
      const before = sandbox.state.balanceKobo;
      const two = buyAirtime('08021234562', 200_00n);
      const three = buyAirtime('08021234563', 300_00n);
      const first = await client.purchase(two);
      const second = await client.purchase(three);
      assert.equal(first.status, 'pending');
      assert.equal(second.status, 'pending');
      assert.equal(sandbox.state.balanceKobo, before - 196_00n - 294_00n);
      const idOf = (o: typeof first) => (o.status === 'pending' ? o.providerReference : null);
      const settledTwo = await client.requery({
        reference: two.reference,
        service: 'airtime',
        providerReference: idOf(first),
      });
      const settledThree = await client.requery({
        reference: three.reference,
        service: 'airtime',
        providerReference: idOf(second),
      });
      assert.deepEqual(settledTwo, {
        status: 'success',
        providerReference: idOf(first),
        chargedKobo: 196_00n,
      });
      assert.equal(settledThree.status, 'failed');
      assert.equal(sandbox.state.balanceKobo, before - 196_00n);
    });

    it('4: unknown, then found successful in the topup list by ident', async () => {
      const request = buyAirtime('08021234564');
      assert.equal((await vendorClient(sandbox, { timeoutMs: 200 }).purchase(request)).status, 'unknown');
      const requeried = await client.requery({
        reference: request.reference,
        service: 'airtime',
        providerReference: null,
      });
      assert.equal(requeried.status, 'success');
    });

    it('a data ident is not an airtime order: the lists are separate', async () => {
      const request = buyData('08031234560');
      assert.equal((await client.purchase(request)).status, 'success');
      assert.deepEqual(
        await client.requery({ reference: request.reference, service: 'airtime', providerReference: null }),
        {
          status: 'not_found',
        },
      );
    });
  });

  describe('requery by reference', () => {
    it('finds an order beyond the first page of the list (20 a page, newest first)', async () => {
      const first = buyData('08031234560');
      assert.equal((await client.purchase(first)).status, 'success');
      for (let i = 0; i < 25; i++) await client.purchase(buyData('08131234568'));
      const found = await client.requery({
        reference: first.reference,
        service: 'data',
        providerReference: null,
      });
      assert.equal(found.status, 'success');
      const order = sandbox.state.orders.find((o) => o.ident === first.reference);
      assert.equal(found.status === 'success' ? found.providerReference : null, String(order?.id));
    });

    it('reads past 10 pages: behind 220 newer orders, an unanswered one is found and a never-received one is not_found', async () => {
      // The long soak: over 1,900 data orders, and purchases sent while the vendor timed out (it never
      // received them). Reading only the newest 10 pages kept them unknown, and processing, for ever.
      const unanswered = buyData('08031234564');
      assert.equal((await vendorClient(sandbox, { timeoutMs: 200 }).purchase(unanswered)).status, 'unknown');
      for (let i = 0; i < 220; i++) await client.purchase(buyData('08131234568'));
      const sentAt = new Date('2026-11-22T14:30:00.000Z');
      const found = await client.requery({
        reference: unanswered.reference,
        service: 'data',
        providerReference: null,
        sentAt,
      });
      assert.equal(found.status, 'success');
      assert.deepEqual(
        await client.requery({
          reference: 'vtu_never_received',
          service: 'data',
          providerReference: null,
          sentAt,
        }),
        { status: 'not_found' },
      );
    });

    it('answers not_found for a reference the vendor never received', async () => {
      assert.deepEqual(
        await client.requery({ reference: 'vtu_never_sent', service: 'data', providerReference: null }),
        {
          status: 'not_found',
        },
      );
    });
  });

  describe('the vendor wallet', () => {
    it('is read by balance() in kobo, set and read through the sandbox control in naira', async () => {
      assert.equal(await client.balance(), 100_000_000n, '₦1,000,000 to start');
      assert.deepEqual(await control('POST', { amount: 2500.5 }), { status: 200, body: { balance: 2500.5 } });
      assert.deepEqual(await control('GET'), { status: 200, body: { balance: 2500.5 } });
      assert.equal(await client.balance(), 250_050n);
      fundSandboxData(sandbox.state, 10_000_00n);
      assert.equal(await client.balance(), 1_250_050n);
      assert.deepEqual(await control('GET'), { status: 200, body: { balance: 12500.5 } });
    });

    it('refuses a bad amount at the control', async () => {
      for (const amount of [-1, 1.005, '100', null]) {
        const answer = await control('POST', { amount });
        assert.equal(answer.status, 400, String(amount));
        assert.deepEqual((answer.body.error as { code: string }).code, 'VALIDATION_ERROR');
      }
    });

    it('refuses a purchase it does not cover (failed, no order), and accepts one it covers exactly', async () => {
      await control('POST', { amount: 559.99 });
      const ordersBefore = sandbox.state.orders.length;
      const refused = await client.purchase(buyData('08031234560'));
      assert.equal(refused.status, 'failed');
      assert.match(refused.status === 'failed' ? refused.reason : '', /insufficient balance/);
      assert.equal(sandbox.state.orders.length, ordersBefore, 'no order');
      assert.equal(await client.balance(), 559_99n);

      const airtime = await client.purchase(buyAirtime('08021234560', 1_000_00n));
      assert.equal(airtime.status, 'failed');
      assert.match(airtime.status === 'failed' ? airtime.reason : '', /insufficient balance/);

      await control('POST', { amount: 560 });
      assert.equal((await client.purchase(buyData('08031234560'))).status, 'success');
      assert.equal(await client.balance(), 0n);
    });
  });

  describe('a reused ident', () => {
    it('answers the existing order, never a second one, never a second charge', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234560');
      const first = await client.purchase(request);
      const again = await client.purchase(request);
      assert.equal(first.status, 'success');
      assert.deepEqual(again, first);
      assert.equal(sandbox.state.orders.filter((o) => o.ident === request.reference).length, 1);
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
    });

    it('answers a pending order as it stands, unsettled by the repeat', async () => {
      const request = buyData('08031234562');
      const first = await client.purchase(request);
      assert.equal(first.status, 'pending');
      assert.deepEqual(await client.purchase(request), first);
    });

    it('with a different order is refused about the ident, which the client does not take for a failure', async () => {
      const before = sandbox.state.balanceKobo;
      const request = buyData('08031234560');
      assert.equal((await client.purchase(request)).status, 'success');
      const other = await client.purchase({ ...request, phone: '08031234565' });
      assert.equal(other.status, 'unknown');
      assert.match(other.status === 'unknown' ? other.reason : '', /ident already exists/);
      assert.equal(sandbox.state.orders.filter((o) => o.ident === request.reference).length, 1);
      assert.equal(sandbox.state.balanceKobo, before - mtn1gb.priceKobo);
    });
  });

  describe('the token', () => {
    it('answers 401 like DRF for a wrong or missing token', async () => {
      const url = `${sandbox.baseUrl}/__sandbox/vtu/data/api/user/`;
      const wrong = await fetch(url, { headers: { authorization: 'Token nope' } });
      assert.equal(wrong.status, 401);
      assert.deepEqual(await wrong.json(), { detail: 'Invalid token.' });
      const missing = await fetch(url);
      assert.equal(missing.status, 401);
      assert.deepEqual(await missing.json(), { detail: 'Authentication credentials were not provided.' });
      const bearer = await fetch(url, { headers: { authorization: `Bearer ${SANDBOX_DATA_TOKEN}` } });
      assert.equal(bearer.status, 401);
    });

    it('a purchase with a wrong token is a definite refusal; nothing is ordered or charged', async () => {
      const before = sandbox.state.balanceKobo;
      const ordersBefore = sandbox.state.orders.length;
      const wrong = vendorClient(sandbox, { token: 'f'.repeat(40) });
      const outcome = await wrong.purchase(buyData('08031234560'));
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /Invalid token/);
      assert.equal(sandbox.state.orders.length, ordersBefore);
      assert.equal(sandbox.state.balanceKobo, before);
      await assert.rejects(wrong.balance(), /Invalid token/);
    });
  });

  describe('the catalogue', () => {
    it('round-trips every plan with its id, type, size, validity and exact price', async () => {
      const byNetwork: Record<Network, string> = {
        mtn: 'MTN',
        glo: 'GLO',
        airtel: 'AIRTEL',
        '9mobile': '9MOBILE',
      };
      for (const network of ['mtn', 'glo', 'airtel', '9mobile'] as const) {
        const plans = await client.dataPlans(network);
        const expected = sandbox.state.plans
          .filter((p) => p.network === byNetwork[network])
          .map((p) => ({
            planId: String(p.id),
            network,
            planType: p.planType === 'CORPORATE GIFTING' ? 'CG' : p.planType,
            name: p.plan,
            validity: p.validity,
            wholesaleKobo: p.priceKobo,
          }));
        assert.deepEqual(plans, expected);
        assert.deepEqual(
          [...new Set(plans.map((p) => p.planType))].sort(),
          ['CG', 'GIFTING', 'SME'],
          network,
        );
      }
      assert.deepEqual(
        (await client.networks('data')).map((n) => n.id),
        ['mtn', 'glo', 'airtel', '9mobile'],
      );
    });

    it('a price changed at the vendor shows at once, to the kobo; a withdrawn plan disappears', async () => {
      const plan = sandbox.state.plans.find((p) => p.id === 346);
      assert.ok(plan);
      const original = plan.priceKobo;
      plan.priceKobo = 612_35n;
      const all = sandbox.state.plans;
      try {
        const plans = await client.dataPlans('mtn');
        assert.equal(plans.find((p) => p.planId === '346')?.wholesaleKobo, 612_35n);
        sandbox.state.plans = all.filter((p) => p.id !== 346);
        assert.equal(
          (await client.dataPlans('mtn')).find((p) => p.planId === '346'),
          undefined,
        );
      } finally {
        plan.priceKobo = original;
        sandbox.state.plans = all;
      }
    });

    it('every plan it lists can be bought, at the listed price', async () => {
      for (const network of ['mtn', 'glo', 'airtel', '9mobile'] as const) {
        const plans = await client.dataPlans(network);
        assert.ok(plans.length > 0, network);
        for (const plan of plans) {
          const outcome = await client.purchase(buyData('08031234560', { network, planId: plan.planId }));
          const charged = outcome.status === 'success' ? outcome.chargedKobo : null;
          assert.equal(charged, plan.wholesaleKobo, `${network} ${plan.planId}`);
        }
      }
    });

    it('refuses a plan of another network, or one it does not have, as a definite failure', async () => {
      const wrongNetwork = await client.purchase(
        buyData('08031234560', { network: 'glo', planId: mtn1gb.planId }),
      );
      assert.equal(wrongNetwork.status, 'failed');
      const missing = await client.purchase(buyData('08031234560', { planId: '999999' }));
      assert.equal(missing.status, 'failed');
      assert.match(missing.status === 'failed' ? missing.reason : '', /Invalid pk "999999"/);
    });
  });
});

describe('sandbox data vendor with its own network ids', () => {
  let sandbox: Sandbox;
  before(async () => {
    sandbox = await startSandbox((state) => {
      state.networkIds = { MTN: 1, '9MOBILE': 2, GLO: 3, AIRTEL: 4 };
    });
  });
  after(() => sandbox.app.close());

  it('works with a client configured the same way, and not with the default ids', async () => {
    const configured = vendorClient(sandbox, { networkIds: { glo: 3, '9mobile': 2 } });
    const [glo] = await configured.dataPlans('glo');
    assert.ok(glo);
    const outcome = await configured.purchase(buyData('08051234560', { network: 'glo', planId: glo.planId }));
    assert.equal(outcome.status, 'success');
    assert.equal(sandbox.state.orders.at(-1)?.network, 'GLO');

    const unconfigured = vendorClient(sandbox);
    await assert.rejects(unconfigured.dataPlans('glo'), /check the vendor's network ids/);
    const refused = await unconfigured.purchase(
      buyData('08051234560', { network: 'glo', planId: glo.planId }),
    );
    assert.equal(refused.status, 'failed', 'the vendor refuses a GLO plan sent as 9MOBILE');
  });
});

describe('sandbox data vendor: held requests', () => {
  it('drops an unanswered purchase after timeoutHoldMs', async () => {
    const sandbox = await startSandbox((state) => {
      state.timeoutHoldMs = 50;
    });
    try {
      const response = fetch(`${sandbox.baseUrl}/__sandbox/vtu/data/api/data/`, {
        method: 'POST',
        headers: { authorization: `Token ${SANDBOX_DATA_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          network: 1,
          mobile_number: '08031234564',
          plan: 337,
          Ported_number: true,
          ident: 'held-1',
        }),
      });
      await assert.rejects(response, /fetch failed/);
      assert.equal(sandbox.state.orders.at(-1)?.status, 'successful');
    } finally {
      await sandbox.app.close();
    }
  });

  it('releases every held request at once when the app closes', async () => {
    const sandbox = await startSandbox();
    assert.equal(sandbox.state.timeoutHoldMs, 30_000);
    const posts = ['08031234564', '08021234564'].map((phone, i) =>
      fetch(`${sandbox.baseUrl}/__sandbox/vtu/data/api/${i === 0 ? 'data' : 'topup'}/`, {
        method: 'POST',
        headers: { authorization: `Token ${SANDBOX_DATA_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(
          i === 0
            ? { network: 1, mobile_number: phone, plan: 337, Ported_number: true, ident: 'held-2' }
            : {
                network: 4,
                mobile_number: phone,
                amount: 100,
                Ported_number: true,
                airtime_type: 'VTU',
                ident: 'held-3',
              },
        ),
      }).then(
        () => 'answered',
        () => 'dropped',
      ),
    );
    // Both orders exist once the sandbox has them; wait for that by asking it, not by sleeping.
    const client = vendorClient(sandbox);
    for (const [reference, service] of [
      ['held-2', 'data'],
      ['held-3', 'airtime'],
    ] as const) {
      let outcome: Awaited<ReturnType<typeof client.requery>> | undefined;
      await until(async () => {
        outcome = await client.requery({ reference, service, providerReference: null });
        return outcome.status !== 'not_found';
      }, `${reference} recorded`);
      assert.equal(outcome?.status, 'success');
    }
    const started = performance.now();
    await sandbox.app.close();
    assert.ok(performance.now() - started < 5_000, 'close does not wait for the holds');
    assert.deepEqual(await Promise.all(posts), ['dropped', 'dropped']);
  });
});
