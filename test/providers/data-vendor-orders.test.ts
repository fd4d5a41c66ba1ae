import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { combineProviders } from '../../src/providers/vtu/combined-provider.ts';
import { createDataVendorClient } from '../../src/providers/vtu/data-vendor-client.ts';
import { createVtpassClient } from '../../src/providers/vtu/vtpass-client.ts';
import {
  type ProviderOrder,
  type PurchaseRequest,
  type VtuProvider,
  VtuProviderError,
} from '../../src/providers/vtu/vtu-provider.ts';
import {
  createSandboxDataState,
  registerSandboxData,
  SANDBOX_DATA_TOKEN,
  type SandboxDataState,
} from '../../src/sandbox/vtu/data.ts';

// The data vendor's order lists as the reconciliation reads them (VtuProvider.listOrders): the real
// client against the sandbox data vendor over real HTTP, with a clock the test moves so that orders
// fall before, inside and after the window. What a reconciliation relies on: every order of the
// window, data and airtime, with our reference, its outcome and its charge in kobo; nothing outside
// the window; every page followed; and a page that cannot be read fails the listing rather than
// shortening it. Last, a party combined of adapters has a list only when each of them keeps one.

type Sandbox = {
  app: FastifyInstance;
  state: SandboxDataState;
  baseUrl: string;
  clock: { at: Date; now(): Date };
  /** The list pages asked for, as `<kind>?<query>`, in order. */
  listReads: string[];
  /** A list page (`<kind>?<query>`) the vendor's gateway answers 502 for. */
  failing: { page: string | null };
};

const prefix = '/__sandbox/vtu/data/api/';

async function startSandbox(): Promise<Sandbox> {
  const app = Fastify({ logger: false });
  const state = createSandboxDataState();
  const clock = { at: new Date('2026-11-27T12:00:00.000Z'), now: () => clock.at };
  const listReads: string[] = [];
  const failing: Sandbox['failing'] = { page: null };
  // In front of the vendor, as its gateway would be: it sees every list read and can fail one.
  app.addHook('onRequest', async (request, reply) => {
    const [path = '', query = ''] = request.url.split('?');
    const kind = path.startsWith(prefix) ? path.slice(prefix.length) : '';
    if (request.method !== 'GET' || (kind !== 'data/' && kind !== 'topup/')) return;
    const page = `${kind}?${query}`;
    listReads.push(page);
    if (page === failing.page) return reply.code(502).type('text/html').send('<h1>502 Bad Gateway</h1>');
  });
  registerSandboxData(app, state, { clock });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, state, baseUrl, clock, listReads, failing };
}

const vendorClient = (sandbox: Sandbox, timeoutMs = 2_000): VtuProvider =>
  createDataVendorClient({
    name: 'data',
    baseUrl: `${sandbox.baseUrl}/__sandbox/vtu/data`,
    token: SANDBOX_DATA_TOKEN,
    timeoutMs,
  });

let referenceCount = 0;
const uniqueReference = () => `vtu_orders_${process.pid}_${++referenceCount}`;

/** MTN SME 1.0GB at ₦560 in the sandbox catalogue. */
const mtn1gb = { planId: '337', priceKobo: 560_00n };

const data = (phone: string): Extract<PurchaseRequest, { service: 'data' }> => ({
  service: 'data',
  reference: uniqueReference(),
  network: 'mtn',
  planId: mtn1gb.planId,
  phone,
});

const airtime = (phone: string, amountKobo: bigint): Extract<PurchaseRequest, { service: 'airtime' }> => ({
  service: 'airtime',
  reference: uniqueReference(),
  network: 'airtel',
  phone,
  amountKobo,
});

const from = new Date('2026-11-28T00:00:00.000Z');
const to = new Date('2026-11-28T23:59:59.999Z');
const atOffset = (base: Date, ms: number) => new Date(base.getTime() + ms);

const byReference = (orders: ProviderOrder[]) =>
  new Map(orders.map((order) => [order.reference ?? `#${order.providerReference}`, order]));

describe('the data vendor order lists (listOrders) against the sandbox data vendor', () => {
  let sandbox: Sandbox;
  let client: VtuProvider;

  beforeEach(async () => {
    sandbox = await startSandbox();
    client = vendorClient(sandbox);
  });
  afterEach(() => sandbox.app.close());

  /** Places the purchase with the vendor's clock at `at`; returns the outcome the purchase saw. */
  const placeAt = async (at: Date, request: PurchaseRequest, buyer = client) => {
    sandbox.clock.at = at;
    return buyer.purchase(request);
  };

  const listOrders = (window: { from: Date; to: Date }) => {
    assert.ok(client.listOrders, 'the data vendor client lists its orders');
    return client.listOrders(window);
  };

  it('lists every order of the window, data and airtime, with its reference, outcome and charge', async () => {
    const before = data('08031234560');
    const atStart = data('08031234565');
    const refused = data('08031234561');
    const pending = data('08031234562');
    const unanswered = data('08031234564');
    const topup = airtime('08021234560', 1_000_00n);
    const atEnd = airtime('08021234569', 200_00n);
    const afterWindow = airtime('08021234567', 500_00n);

    assert.equal((await placeAt(atOffset(from, -1), before)).status, 'success');
    assert.equal((await placeAt(from, atStart)).status, 'success');
    assert.equal((await placeAt(atOffset(from, 60_000), refused)).status, 'failed');
    assert.equal((await placeAt(atOffset(from, 120_000), pending)).status, 'pending');
    // Delivered, but the answer never came: ours is unknown, the vendor's list knows better.
    const lost = await placeAt(atOffset(from, 180_000), unanswered, vendorClient(sandbox, 200));
    assert.equal(lost.status, 'unknown');
    assert.equal((await placeAt(atOffset(from, 240_000), topup)).status, 'success');
    assert.equal((await placeAt(to, atEnd)).status, 'success');
    assert.equal((await placeAt(atOffset(to, 1), afterWindow)).status, 'success');

    const orders = byReference(await listOrders({ from, to }));
    assert.deepEqual(
      [...orders.keys()].sort(),
      [atStart, refused, pending, unanswered, topup, atEnd].map((r) => r.reference).sort(),
    );
    const expect = (
      request: Extract<PurchaseRequest, { service: 'data' | 'airtime' }>,
      service: 'data' | 'airtime',
      status: string,
      chargedKobo: bigint,
      createdAt: Date,
    ) => {
      const order = orders.get(request.reference);
      assert.ok(order, `${request.reference} is listed`);
      const sandboxOrder = sandbox.state.orders.find((o) => o.ident === request.reference);
      assert.equal(order.providerReference, String(sandboxOrder?.id));
      assert.equal(order.service, service);
      assert.equal(order.outcome.status, status, `${request.reference} (${request.phone})`);
      assert.equal(order.chargedKobo, chargedKobo, `${request.reference} (${request.phone})`);
      assert.equal(order.createdAt.toISOString(), createdAt.toISOString());
    };
    expect(atStart, 'data', 'success', mtn1gb.priceKobo, from);
    // A failed order costs nothing: the vendor never took (or gave back) its price.
    expect(refused, 'data', 'failed', 0n, atOffset(from, 60_000));
    // Pending when placed; the list reads it as it stands now, settled.
    expect(pending, 'data', 'success', mtn1gb.priceKobo, atOffset(from, 120_000));
    expect(unanswered, 'data', 'success', mtn1gb.priceKobo, atOffset(from, 180_000));
    // Airtime is charged at the vendor's 98% of its face value.
    expect(topup, 'airtime', 'success', 980_00n, atOffset(from, 240_000));
    expect(atEnd, 'airtime', 'success', 196_00n, to);
  });

  it('follows the pages of a window longer than one page, and stops once a page is all older', async () => {
    const older: PurchaseRequest[] = [];
    for (let i = 0; i < 60; i++) older.push(data('08031234560'));
    const inWindow: PurchaseRequest[] = [];
    for (let i = 0; i < 25; i++) inWindow.push(data('08031234565'));
    for (const [i, request] of older.entries())
      await placeAt(atOffset(from, -3_600_000 + i * 1_000), request);
    for (const [i, request] of inWindow.entries()) await placeAt(atOffset(from, i * 1_000), request);

    const orders = await listOrders({ from, to });
    assert.deepEqual(
      orders.map((order) => order.reference).sort(),
      inWindow.map((request) => request.reference).sort(),
    );
    assert.ok(orders.every((order) => order.chargedKobo === mtn1gb.priceKobo));
    // 85 orders are 5 pages of 20; the third is the first wholly before the window, the last read.
    assert.deepEqual(
      sandbox.listReads.filter((read) => read.startsWith('data/')),
      ['data/?', 'data/?page=2', 'data/?page=3'],
    );
  });

  it('fails, rather than returning a short list, when a page cannot be read', async () => {
    for (let i = 0; i < 25; i++) await placeAt(atOffset(from, i * 1_000), data('08031234565'));
    sandbox.failing.page = 'data/?page=2';
    await assert.rejects(listOrders({ from, to }), (error: unknown) => {
      assert.ok(error instanceof VtuProviderError);
      assert.match(error.message, /data order list/);
      return true;
    });
    // The same window reads whole once the page answers again.
    sandbox.failing.page = null;
    assert.equal((await listOrders({ from, to })).length, 25);
  });
});

describe('a party combined of several adapters (combineProviders)', () => {
  let sandbox: Sandbox;
  beforeEach(async () => {
    sandbox = await startSandbox();
  });
  afterEach(() => sandbox.app.close());

  it('lists when every adapter lists, and has no list when one of them has none', async () => {
    sandbox.clock.at = from;
    const request = data('08031234565');
    assert.equal((await vendorClient(sandbox).purchase(request)).status, 'success');

    const listing = combineProviders('data', vendorClient(sandbox));
    assert.ok(listing.listOrders);
    const orders = await listing.listOrders({ from, to });
    assert.deepEqual(
      orders.map((order) => order.reference),
      [request.reference],
    );

    // VTpass keeps no list: the data vendor's orders alone would read as the whole party's.
    const vtpass = createVtpassClient({
      name: 'data',
      baseUrl: `${sandbox.baseUrl}/__sandbox/vtu/bills`,
      apiKey: 'key',
      publicKey: 'PK_public',
      secretKey: 'SK_secret',
      timeoutMs: 2_000,
    });
    assert.equal(vtpass.listOrders, undefined);
    assert.equal(combineProviders('data', vendorClient(sandbox), vtpass).listOrders, undefined);
  });
});
