import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  createDataVendorClient,
  listPagesMax,
  parseNaira,
} from '../../src/providers/vtu/data-vendor-client.ts';
import type { Network, PurchaseRequest, VtuProvider } from '../../src/providers/vtu/vtu-provider.ts';
import { amountBreach, VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';

// The data vendor client against a local server scripted to answer as a DataStation-clone vendor does,
// and in every way one can misbehave: what the client sends (token, body, network ids), how each
// Status and each non-answer maps to an outcome (only a definite refusal is `failed`), requery by the
// vendor's id and by our reference in the order list, and the catalogue with exact kobo.

const token = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

const dataRequest = (
  overrides: Partial<Extract<PurchaseRequest, { service: 'data' }>> = {},
): PurchaseRequest => ({
  service: 'data',
  reference: 'vtu_0192f1a2-data-1',
  network: 'mtn',
  planId: '337',
  phone: '08031234560',
  ...overrides,
});

const airtimeRequest: PurchaseRequest = {
  service: 'airtime',
  reference: 'vtu_0192f1a2-air-1',
  network: 'glo',
  phone: '08051234560',
  amountKobo: 500_00n,
};

/** A data order as these vendors answer it. */
const dataOrder = (fields: Record<string, unknown> = {}) => ({
  id: 48213001,
  ident: 'vtu_0192f1a2-data-1',
  network: 1,
  balance_before: '1000000.0',
  balance_after: '999440.0',
  payment_medium: 'MAIN WALLET',
  mobile_number: '08031234560',
  plan: 337,
  plan_type: 'SME',
  duration: '30 days',
  plan_network: 'MTN',
  plan_name: '1.0GB',
  plan_amount: '560.0',
  Status: 'successful',
  api_response: 'Dear Customer, You have successfully gifted 08031234560 with 1.0GB of Data.',
  create_date: '2026-11-22T14:30:00.000Z',
  Ported_number: true,
  ...fields,
});

const topupOrder = (fields: Record<string, unknown> = {}) => ({
  id: 7001,
  ident: 'vtu_0192f1a2-air-1',
  network: 2,
  airtime_type: 'VTU',
  amount: '500.0',
  paid_amount: '490.0',
  mobile_number: '08051234560',
  plan_network: 'GLO',
  Status: 'successful',
  api_response: 'You have successfully topped up',
  create_date: '2026-11-22T14:30:00.000Z',
  Ported_number: true,
  ...fields,
});

const plan = (fields: Record<string, unknown>) => ({
  id: 337,
  dataplan_id: '337',
  network: 1,
  plan_type: 'SME',
  plan_network: 'MTN',
  month_validate: '30 days',
  plan: '1.0GB',
  plan_amount: '560.0',
  ...fields,
});

const accountAnswer = (dataplans: Record<string, unknown>, walletBalance: unknown = '1000000.0') => ({
  user: { id: 1, username: 'billrail', email: 'ops@billrail.example', wallet_balance: walletBalance },
  Dataplans: dataplans,
  topuppercentage: { MTN: { percent: 98 } },
});

describe('data vendor client against a scripted vendor', () => {
  let server: ScriptedServer;
  let handler: Handler;
  const received: Received[] = [];

  before(async () => {
    server = await startScriptedServer(
      (request, body, response) => handler(request, body, response),
      received,
    );
  });
  beforeEach(() => {
    received.length = 0;
  });
  after(() => server.close());

  const client = (
    options: { timeoutMs?: number; networkIds?: Partial<Record<Network, number>> } = {},
  ): VtuProvider =>
    createDataVendorClient({
      name: 'data',
      baseUrl: `${server.baseUrl}/`,
      token,
      timeoutMs: options.timeoutMs ?? 2_000,
      ...(options.networkIds !== undefined ? { networkIds: options.networkIds } : {}),
    });
  /** Answers with the handlers in turn, the last one for every request after. */
  const inTurn = (...handlers: Handler[]): Handler => {
    let next = 0;
    return (request, body, response) => {
      const current = handlers[Math.min(next, handlers.length - 1)]!;
      next += 1;
      current(request, body, response);
    };
  };
  const sentBody = (index = 0) => JSON.parse(received[index]!.body) as Record<string, unknown>;

  describe('what it sends', () => {
    it('buys data with the Token header, our reference as ident and Ported_number true', async () => {
      handler = json(201, dataOrder());
      const outcome = await client().purchase(dataRequest());
      assert.equal(outcome.status, 'success');
      assert.equal(received.length, 1);
      const [request] = received;
      assert.equal(request?.method, 'POST');
      assert.equal(request?.url, '/api/data/');
      assert.equal(request?.headers.authorization, `Token ${token}`);
      assert.match(String(request?.headers['content-type']), /application\/json/);
      assert.deepEqual(sentBody(), {
        network: 1,
        mobile_number: '08031234560',
        plan: 337,
        Ported_number: true,
        ident: 'vtu_0192f1a2-data-1',
      });
    });

    it('buys airtime at /api/topup/ in whole naira, VTU type', async () => {
      handler = json(201, topupOrder());
      const outcome = await client().purchase(airtimeRequest);
      assert.deepEqual(outcome, { status: 'success', providerReference: '7001', chargedKobo: 490_00n });
      assert.equal(received[0]?.url, '/api/topup/');
      assert.deepEqual(sentBody(), {
        network: 2,
        amount: 500,
        mobile_number: '08051234560',
        Ported_number: true,
        airtime_type: 'VTU',
        ident: 'vtu_0192f1a2-air-1',
      });
    });

    it('maps networks to DataStation ids by default: 1 MTN, 2 GLO, 3 9MOBILE, 4 AIRTEL', async () => {
      handler = json(201, dataOrder({ ident: null }));
      const vendor = client();
      for (const network of ['mtn', 'glo', '9mobile', 'airtel'] as const) {
        await vendor.purchase(dataRequest({ network }));
      }
      assert.deepEqual(
        received.map((r) => (JSON.parse(r.body) as { network: number }).network),
        [1, 2, 3, 4],
      );
    });

    it('uses the vendor’s own network ids where configured (a vendor that swaps GLO and 9MOBILE)', async () => {
      handler = json(201, dataOrder({ ident: null }));
      const vendor = client({ networkIds: { glo: 3, '9mobile': 2 } });
      for (const network of ['mtn', 'glo', '9mobile', 'airtel'] as const) {
        await vendor.purchase(dataRequest({ network }));
      }
      assert.deepEqual(
        received.map((r) => (JSON.parse(r.body) as { network: number }).network),
        [1, 3, 2, 4],
      );
    });

    it('refuses locally, sending nothing, what no vendor could accept', async () => {
      handler = json(201, dataOrder());
      const vendor = client();
      const cases: PurchaseRequest[] = [
        dataRequest({ phone: '+2348031234560' }),
        dataRequest({ planId: 'mtn-1gb' }),
        dataRequest({ reference: ' ' }),
        { ...airtimeRequest, amountKobo: 500_50n },
        { ...airtimeRequest, amountKobo: 49_00n },
      ];
      for (const request of cases) {
        const outcome = await vendor.purchase(request);
        assert.equal(
          outcome.status,
          'failed',
          JSON.stringify(request, (_k, v) => (typeof v === 'bigint' ? `${v}` : v)),
        );
        assert.match(outcome.status === 'failed' ? outcome.reason : '', /refused locally/);
      }
      assert.equal(received.length, 0);
    });

    it('states the airtime it sells (whole naira, ₦50-₦50,000), the rule it refuses by itself', async () => {
      // The purchase refuses the rest before the debit through this rule (src/vtu/purchase-ops.ts); the
      // adapter refusing exactly the same amounts is its second line.
      handler = json(201, topupOrder());
      const vendor = client();
      const rule = vendor.airtimeAmounts;
      assert.deepEqual(rule, { amountKoboMin: 50_00n, amountKoboMax: 50_000_00n, amountKoboStep: 100n });
      for (const amountKobo of [49_99n, 50_00n, 100_00n, 100_50n, 50_000_00n, 50_000_01n, 50_001_00n]) {
        const outcome = await vendor.purchase({ ...airtimeRequest, amountKobo });
        const refusedLocally = outcome.status === 'failed' && /refused locally/.test(outcome.reason);
        assert.equal(refusedLocally, amountBreach(rule!, amountKobo) !== null, `${amountKobo} kobo`);
      }
      assert.equal(received.length, 3, 'only the amounts within the rule were sent');
    });

    it('offers data and airtime only; everything else is a routing mistake', async () => {
      const vendor = client();
      assert.deepEqual([...vendor.services].sort(), ['airtime', 'data']);
      await assert.rejects(vendor.cablePlans('dstv'), VtuProviderError);
      await assert.rejects(vendor.discos(), /does not offer electricity/);
      await assert.rejects(
        vendor.purchase({
          service: 'betting',
          reference: 'r',
          company: 'bet9ja',
          customerId: '1',
          amountKobo: 100n,
        }),
        VtuProviderError,
      );
      await assert.rejects(
        vendor.requery({ reference: 'r', service: 'cable', providerReference: null }),
        VtuProviderError,
      );
      assert.equal(received.length, 0);
    });
  });

  describe('purchase outcomes', () => {
    it('successful → success with the vendor id and the exact price charged', async () => {
      handler = json(201, dataOrder({ plan_amount: '1,234.56' }));
      assert.deepEqual(await client().purchase(dataRequest()), {
        status: 'success',
        providerReference: '48213001',
        chargedKobo: 1_234_56n,
      });
    });

    it('successful with an unreadable price is still a success, without chargedKobo', async () => {
      handler = json(201, dataOrder({ plan_amount: '560.005' }));
      assert.deepEqual(await client().purchase(dataRequest()), {
        status: 'success',
        providerReference: '48213001',
      });
    });

    for (const status of ['pending', 'processing', 'Pending']) {
      it(`${status} → pending, requery later by the vendor id`, async () => {
        handler = json(201, dataOrder({ Status: status }));
        assert.deepEqual(await client().purchase(dataRequest()), {
          status: 'pending',
          providerReference: '48213001',
        });
      });
    }

    it('failed (200 or 400 with the order) → failed, with the operator’s message', async () => {
      handler = inTurn(
        json(201, dataOrder({ Status: 'failed', api_response: 'Network busy' })),
        json(400, dataOrder({ Status: 'failed', api_response: null })),
      );
      const first = await client().purchase(dataRequest());
      assert.deepEqual(first, { status: 'failed', reason: 'data: data order failed: Network busy' });
      const second = await client().purchase(dataRequest());
      assert.equal(second.status, 'failed');
    });

    for (const status of ['refunded', 'reversed', 'initiated', '']) {
      it(`Status "${status}" is not a definite failure → unknown`, async () => {
        handler = json(201, dataOrder({ Status: status }));
        const outcome = await client().purchase(dataRequest());
        assert.equal(outcome.status, 'unknown');
      });
    }

    const refusals: [string, number, unknown, RegExp][] = [
      [
        'insufficient balance',
        400,
        { error: ["You can't purchase this plan due to insufficient balance"] },
        /insufficient balance/,
      ],
      ['an invalid plan', 400, { plan: ['Invalid pk "999" - object does not exist.'] }, /plan: Invalid pk/],
      ['a plain error string', 400, { error: 'Invalid mobile number' }, /Invalid mobile number/],
      ['a wrong token', 401, { detail: 'Invalid token.' }, /\(401\): Invalid token\./],
    ];
    for (const [what, status, body, reason] of refusals) {
      it(`a ${status} refusal for ${what} → failed`, async () => {
        handler = json(status, body);
        const outcome = await client().purchase(dataRequest());
        assert.equal(outcome.status, 'failed');
        assert.match(outcome.status === 'failed' ? outcome.reason : '', reason);
        assert.equal(received.length, 1, 'a POST is never repeated');
      });
    }

    it('a refusal about our ident is not a failure: the first attempt may have delivered → unknown', async () => {
      handler = inTurn(
        json(400, { ident: ['An order with this ident already exists.'] }),
        json(400, { error: ['Duplicate transaction'] }),
      );
      assert.equal((await client().purchase(dataRequest())).status, 'unknown');
      assert.equal((await client().purchase(dataRequest())).status, 'unknown');
    });

    it('an answer about another reference → unknown', async () => {
      handler = json(201, dataOrder({ ident: 'someone-else' }));
      const outcome = await client().purchase(dataRequest());
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /another order/);
    });

    it('a timeout → unknown, and the POST is not repeated', async () => {
      handler = () => {}; // holds the request open; closeAllConnections ends it
      const outcome = await client({ timeoutMs: 200 }).purchase(dataRequest());
      assert.deepEqual(outcome, {
        status: 'unknown',
        reason: 'data: data purchase did not answer within 200 ms',
      });
      assert.equal(received.length, 1);
      server.closeAllConnections();
    });

    it('headers then a stalled body → unknown', async () => {
      handler = (_request, _body, response) => {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.write('{"id": 1, "Status": "succ');
      };
      const outcome = await client({ timeoutMs: 200 }).purchase(airtimeRequest);
      assert.equal(outcome.status, 'unknown');
      server.closeAllConnections();
    });

    const unknowns: [string, Handler][] = [
      ['a 500', json(500, { detail: 'A server error occurred.' })],
      ['a 502 HTML page', raw(502, '<html>Bad Gateway</html>', 'text/html')],
      ['a 503 with a refusal-shaped body', json(503, { error: ['Service unavailable'] })],
      ['a 429', json(429, { detail: 'Request was throttled.' })],
      ['garbage', raw(201, 'Status: successful')],
      ['JSON without Status', json(201, { id: 5, message: 'ok' })],
      ['a JSON array', json(201, [dataOrder()])],
      ['a 404 from a wrong base URL', raw(404, '<h1>Not Found</h1>', 'text/html')],
      ['a 404 DRF not found on a POST', json(404, { detail: 'Not found.' })],
      ['a 405', json(405, { detail: 'Method "POST" not allowed.' })],
      ['a 400 that is neither an order nor a refusal', json(400, { code: 17, ok: false })],
      ['a 400 order that says successful', json(400, dataOrder())],
    ];
    for (const [what, answer] of unknowns) {
      it(`${what} → unknown, never failed`, async () => {
        handler = answer;
        const outcome = await client().purchase(dataRequest());
        assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
        assert.equal(received.length, 1, 'a POST is never repeated');
      });
    }

    it('an unreachable vendor → unknown', async () => {
      const vendor = createDataVendorClient({
        name: 'data',
        baseUrl: 'http://127.0.0.1:9',
        token,
        timeoutMs: 2_000,
      });
      const outcome = await vendor.purchase(dataRequest());
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /unreachable/);
    });
  });

  describe('requery', () => {
    it('by the vendor id at GET /api/data/{id}', async () => {
      handler = json(200, dataOrder());
      const outcome = await client().requery({
        reference: 'vtu_0192f1a2-data-1',
        service: 'data',
        providerReference: '48213001',
      });
      assert.deepEqual(outcome, { status: 'success', providerReference: '48213001', chargedKobo: 560_00n });
      assert.equal(received[0]?.method, 'GET');
      assert.equal(received[0]?.url, '/api/data/48213001');
      assert.equal(received[0]?.headers.authorization, `Token ${token}`);
    });

    it('airtime by the vendor id at GET /api/topup/{id}; pending and failed map as on purchase', async () => {
      handler = inTurn(
        json(200, topupOrder({ Status: 'pending' })),
        json(200, topupOrder({ Status: 'failed' })),
      );
      const request = {
        reference: 'vtu_0192f1a2-air-1',
        service: 'airtime' as const,
        providerReference: '7001',
      };
      assert.deepEqual(await client().requery(request), { status: 'pending', providerReference: '7001' });
      assert.equal((await client().requery(request)).status, 'failed');
      assert.deepEqual(
        received.map((r) => r.url),
        ['/api/topup/7001', '/api/topup/7001'],
      );
    });

    it('retries a GET once after a 5xx or a dropped connection', async () => {
      handler = inTurn(json(502, { detail: 'bad gateway' }), json(200, dataOrder()));
      const request = {
        reference: 'vtu_0192f1a2-data-1',
        service: 'data' as const,
        providerReference: '48213001',
      };
      assert.equal((await client().requery(request)).status, 'success');
      assert.equal(received.length, 2);

      received.length = 0;
      handler = inTurn((_request, _body, response) => response.socket?.destroy(), json(200, dataOrder()));
      assert.equal((await client().requery(request)).status, 'success');
      assert.equal(received.length, 2);

      received.length = 0;
      handler = json(500, {});
      assert.equal((await client().requery(request)).status, 'unknown');
      assert.equal(received.length, 2, 'twice at most');
    });

    it('a 404 for the vendor’s own id is an anomaly, never not_found', async () => {
      handler = json(404, { detail: 'Not found.' });
      const outcome = await client().requery({ reference: 'r-1', service: 'data', providerReference: '99' });
      assert.equal(outcome.status, 'unknown');
    });

    it('without the vendor id: finds the order by ident in the paginated list, following next', async () => {
      const other = (n: number) => dataOrder({ id: 100 + n, ident: `other-${n}` });
      handler = inTurn(
        json(200, {
          count: 3,
          next: 'https://vendor.example/api/data/?page=2',
          previous: null,
          results: [other(1), other(2)],
        }),
        json(200, {
          count: 3,
          next: null,
          previous: 'https://vendor.example/api/data/',
          results: [dataOrder({ Status: 'pending', ident: 'vtu_0192f1a2-data-1' })],
        }),
      );
      const outcome = await client().requery({
        reference: 'vtu_0192f1a2-data-1',
        service: 'data',
        providerReference: null,
      });
      assert.deepEqual(outcome, { status: 'pending', providerReference: '48213001' });
      assert.deepEqual(
        received.map((r) => r.url),
        ['/api/data/', '/api/data/?page=2'],
        'the next page is asked of the configured vendor, never of the host in `next`',
      );
    });

    it('without the vendor id: a plain array list works too', async () => {
      handler = json(200, [topupOrder({ ident: 'x' }), topupOrder()]);
      const outcome = await client().requery({
        reference: 'vtu_0192f1a2-air-1',
        service: 'airtime',
        providerReference: null,
      });
      assert.deepEqual(outcome, { status: 'success', providerReference: '7001', chargedKobo: 490_00n });
      assert.equal(received[0]?.url, '/api/topup/');
    });

    it('absent from the whole list → not_found (paginated and plain)', async () => {
      handler = inTurn(
        json(200, { count: 0, next: null, previous: null, results: [] }),
        json(200, [dataOrder({ ident: 'other' })]),
      );
      const request = { reference: 'vtu_never_sent', service: 'data' as const, providerReference: null };
      assert.deepEqual(await client().requery(request), { status: 'not_found' });
      assert.deepEqual(await client().requery(request), { status: 'not_found' });
    });

    describe('a list longer than ever read to its end', () => {
      const sentAt = new Date('2026-11-22T14:30:00.000Z');
      /** Page n of an endless list, newest first: its orders created `createdAt(n)`. */
      const endlessList =
        (createdAt: (page: number) => string): Handler =>
        (request, body, response) => {
          const page = Number(new URL(request.url ?? '/', 'http://vendor').searchParams.get('page') ?? '1');
          const results = [dataOrder({ ident: `other-${page}`, create_date: createdAt(page) })];
          const next = `http://vendor/api/data/?page=${page + 1}`;
          json(200, { count: 100_000, next, previous: null, results })(request, body, response);
        };
      const request = {
        reference: 'vtu_never_sent',
        service: 'data' as const,
        providerReference: null,
        sentAt,
      };

      it('not_found once its pages reach orders created well before the purchase was sent', async () => {
        // Pages 1-11 are newer than the send (14:35 UTC, written in Lagos time); page 12 an hour older.
        handler = endlessList((page) => (page < 12 ? '2026-11-22T15:35:00+01:00' : '2026-11-22T13:30:00Z'));
        assert.deepEqual(await client().requery(request), { status: 'not_found' });
        assert.equal(received.length, 12, 'read past the tenth page, and no further than the send time');
      });

      it('unknown while every order read might be as new as ours (the clock skew allowed, or no zone)', async () => {
        // Five minutes before the send is within the vendor's clock skew; a naive time has no zone.
        for (const createdAt of ['2026-11-22T14:25:00Z', '2026-11-22T12:00:00']) {
          handler = endlessList(() => createdAt);
          received.length = 0;
          assert.equal((await client().requery(request)).status, 'unknown');
          assert.equal(received.length, listPagesMax, 'read to the page limit, then no verdict');
        }
      });

      it('without the send time, no order proves it absent', async () => {
        handler = endlessList(() => '2026-11-22T09:00:00Z');
        const { sentAt: _unsent, ...unsent } = request;
        assert.equal((await client().requery(unsent)).status, 'unknown');
      });
    });

    it('the list unread or cut short → unknown, never not_found', async () => {
      const request = { reference: 'vtu_never_sent', service: 'data' as const, providerReference: null };
      handler = json(500, {});
      assert.equal((await client().requery(request)).status, 'unknown');
      handler = raw(200, 'not json');
      assert.equal((await client().requery(request)).status, 'unknown');
      handler = json(200, { results: 'nope' });
      assert.equal((await client().requery(request)).status, 'unknown');
      // A vendor whose next page never ends: read up to the page limit, then give up without a verdict.
      handler = json(200, { count: 999, next: 'http://x/api/data/?page=2', previous: null, results: [] });
      received.length = 0;
      const endless = await client().requery(request);
      assert.equal(endless.status, 'unknown');
      assert.equal(received.length, 2, 'the same next page twice is not followed again');
    });
  });

  describe('catalogue and balance', () => {
    const dataplans = {
      MTN_PLAN: {
        ALL: [
          plan({}),
          plan({
            id: 345,
            dataplan_id: '345',
            plan_type: 'CORPORATE GIFTING',
            plan: '500.0MB',
            plan_amount: '395.5',
          }),
          plan({ id: 350, plan_type: 'gifting', month_validate: '1 day', plan_amount: 490 }),
          plan({ id: 351, month_validate: 'CURRENTLY UNAVAILABLE', plan_amount: '100.0' }),
          plan({ id: 352, plan_amount: 'free' }),
          { id: 'broken' },
        ],
      },
      GLO_PLAN: [
        plan({
          id: 271,
          network: 2,
          plan_network: 'GLO',
          plan_type: 'CORPORATE GIFTING',
          month_validate: '',
        }),
      ],
      AIRTEL_PLAN: { ALL: [] },
    };

    it('normalises the plans of GET /api/user/: ids as strings, CG, validity, exact kobo', async () => {
      handler = json(200, accountAnswer(dataplans));
      const plans = await client().dataPlans('mtn');
      assert.equal(received[0]?.url, '/api/user/');
      assert.equal(received[0]?.headers.authorization, `Token ${token}`);
      assert.deepEqual(plans, [
        {
          planId: '337',
          network: 'mtn',
          planType: 'SME',
          name: '1.0GB',
          validity: '30 days',
          wholesaleKobo: 560_00n,
        },
        {
          planId: '345',
          network: 'mtn',
          planType: 'CG',
          name: '500.0MB',
          validity: '30 days',
          wholesaleKobo: 395_50n,
        },
        {
          planId: '350',
          network: 'mtn',
          planType: 'GIFTING',
          name: '1.0GB',
          validity: '1 day',
          wholesaleKobo: 490_00n,
        },
      ]);
      assert.deepEqual(await client().dataPlans('glo'), [
        {
          planId: '271',
          network: 'glo',
          planType: 'CG',
          name: '1.0GB',
          validity: null,
          wholesaleKobo: 560_00n,
        },
      ]);
      assert.deepEqual(await client().dataPlans('9mobile'), []);
    });

    it('lists the networks that have plans for data, all four for airtime', async () => {
      handler = json(200, accountAnswer(dataplans));
      assert.deepEqual(await client().networks('data'), [
        { id: 'mtn', name: 'MTN' },
        { id: 'glo', name: 'GLO' },
      ]);
      const airtime = await client().networks('airtime');
      assert.deepEqual(
        airtime.map((n) => n.id),
        ['mtn', 'glo', 'airtel', '9mobile'],
      );
    });

    it('refuses a catalogue whose network ids disagree with the configuration', async () => {
      handler = json(200, accountAnswer(dataplans));
      await assert.rejects(client({ networkIds: { mtn: 7 } }).dataPlans('mtn'), /configured as 7/);
    });

    it('reads the wallet balance in exact kobo, above 2^53 kobo too', async () => {
      handler = inTurn(
        json(200, accountAnswer({}, '1000000.0')),
        json(200, accountAnswer({}, '98,765,432,109,876.54')),
        json(200, accountAnswer({}, 12345.67)),
      );
      assert.equal(await client().balance(), 100_000_000n);
      assert.equal(await client().balance(), 9_876_543_210_987_654n);
      assert.equal(await client().balance(), 1_234_567n);
    });

    it('throws VtuProviderError when the account cannot be read', async () => {
      const cases: [Handler, RegExp][] = [
        [json(401, { detail: 'Invalid token.' }), /refused \(401\): Invalid token/],
        [json(500, {}), /failed upstream \(500\)/],
        [raw(200, '<html>'), /not JSON/],
        [json(200, { user: { wallet_balance: '1.005' } }), /unexpected body \(at user.wallet_balance\)/],
        [json(200, { user: {} }), /unexpected body/],
      ];
      for (const [answer, message] of cases) {
        handler = answer;
        await assert.rejects(client().balance(), (error: unknown) => {
          assert.ok(error instanceof VtuProviderError);
          assert.match(error.message, message);
          return true;
        });
      }
    });

    it('times out a catalogue call as a VtuProviderError', async () => {
      handler = () => {};
      await assert.rejects(client({ timeoutMs: 200 }).dataPlans('mtn'), /did not answer within 200 ms/);
      server.closeAllConnections();
    });
  });
});

describe('parseNaira', () => {
  it('reads naira exactly, never through a float', () => {
    assert.equal(parseNaira('560.0'), 560_00n);
    assert.equal(parseNaira('0.1'), 10n);
    assert.equal(parseNaira('₦1,000.05'), 1_000_05n);
    assert.equal(parseNaira('N 250'), 250_00n);
    assert.equal(parseNaira('90071992547409.99'), 9_007_199_254_740_999n);
    assert.equal(parseNaira('12.500'), 12_50n);
    assert.equal(parseNaira(19.99), 19_99n);
  });

  it('refuses what is not an exact amount', () => {
    for (const value of ['12.345', '-5', '', 'abc', '1,00', '1e3', Number.NaN, 1.005, -1]) {
      assert.equal(parseNaira(value), null, String(value));
    }
  });
});
