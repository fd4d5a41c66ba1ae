import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import {
  createVtpassClient,
  isVtpassRequestId,
  vtpassNairaToKobo,
} from '../../src/providers/vtu/vtpass-client.ts';
import { type PurchaseRequest, VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';

// The VTpass client against a local server that answers what each test scripts: the headers, paths
// and bodies it sends, how each VTpass code maps to an outcome, and every way an answer can be
// unusable (timeout, 5xx, garbage), which must never read as a definite failure.

/** A request id made at 2026-01-01T23:30Z: the Lagos minute is already 2 January's 00:30. */
const reference = '202601020030vtu0001';

describe('VTpass request ids', () => {
  // Made by the purchase domain (src/vtu/purchases.ts, test/vtu/references.test.ts); checked here.
  it('recognises only a real date and time followed by letters and digits', () => {
    assert.equal(isVtpassRequestId('202601020030abc123'), true);
    assert.equal(isVtpassRequestId('202601020030'), true);
    assert.equal(isVtpassRequestId('20260102003'), false);
    assert.equal(isVtpassRequestId('202602300030abc'), false, '30 February');
    assert.equal(isVtpassRequestId('202613020030abc'), false, 'month 13');
    assert.equal(isVtpassRequestId('202601022430abc'), false, 'hour 24');
    assert.equal(isVtpassRequestId('202601020060abc'), false, 'minute 60');
    assert.equal(isVtpassRequestId('202601020030ab-c'), false);
    assert.equal(isVtpassRequestId('vtu_0198f0a1'), false);
  });
});

describe('VTpass naira', () => {
  it('reads decimal strings into exact kobo', () => {
    assert.equal(vtpassNairaToKobo('1234.56'), 123_456n);
    assert.equal(vtpassNairaToKobo('0.1'), 10n);
    assert.equal(vtpassNairaToKobo('100'), 10_000n);
    assert.equal(vtpassNairaToKobo('1,200.50'), 120_050n);
    assert.equal(vtpassNairaToKobo(289.5), 28_950n);
    assert.equal(vtpassNairaToKobo('90071992547409.99'), 9_007_199_254_740_999n);
    assert.equal(vtpassNairaToKobo('1.234'), null);
    assert.equal(vtpassNairaToKobo('-5'), null);
    assert.equal(vtpassNairaToKobo('N100'), null);
    assert.equal(vtpassNairaToKobo(Number.NaN), null);
  });
});

describe('VTpass client against a scripted provider', () => {
  let server: ScriptedServer;
  let baseUrl: string;
  let handler: Handler;
  const received: Received[] = [];

  before(async () => {
    server = await startScriptedServer(
      (request, body, response) => handler(request, body, response),
      received,
    );
    baseUrl = server.baseUrl;
  });
  beforeEach(() => {
    received.length = 0;
  });
  after(() => server.close());

  const client = (timeoutMs = 2_000) =>
    createVtpassClient({
      name: 'bills',
      baseUrl: `${baseUrl}/api/`,
      apiKey: 'api-key-1',
      publicKey: 'PK_public_1',
      secretKey: 'SK_secret_1',
      timeoutMs,
    });
  const inTurn = (...handlers: Handler[]): Handler => {
    let next = 0;
    return (request, body, response) => {
      const current = handlers[Math.min(next, handlers.length - 1)]!;
      next += 1;
      current(request, body, response);
    };
  };
  const hangUp: Handler = (request) => request.socket.destroy();
  /** Never answers; the client's deadline must end the call. */
  const silent: Handler = () => {};

  const payReply = (code: string, status: string | null, extra: Record<string, unknown> = {}) => ({
    code,
    response_description: code === '000' ? 'TRANSACTION SUCCESSFUL' : 'SOMETHING',
    requestId: reference,
    amount: 100,
    transaction_date: { date: '2026-01-02 00:30:00.000000', timezone_type: 3, timezone: 'Africa/Lagos' },
    purchased_code: '',
    content:
      status === null
        ? {}
        : {
            transactions: {
              status,
              product_name: 'MTN Airtime VTU',
              unique_element: '08031234567',
              unit_price: '100',
              quantity: 1,
              commission: 3,
              total_amount: 97,
              amount: '100',
              transactionId: 17_356_000_000_001,
            },
          },
    ...extra,
  });
  const airtime: PurchaseRequest = {
    service: 'airtime',
    reference,
    network: '9mobile',
    phone: '08091234567',
    amountKobo: 10_050n,
  };

  it("sends VTpass's headers, paths and bodies for each purchase", async () => {
    handler = json(200, payReply('000', 'delivered'));
    const requests: [PurchaseRequest, Record<string, unknown>][] = [
      [airtime, { request_id: reference, serviceID: 'etisalat', amount: 100.5, phone: '08091234567' }],
      [
        { service: 'data', reference, network: 'mtn', planId: 'mtn-10mb-100', phone: '08031234567' },
        {
          request_id: reference,
          serviceID: 'mtn-data',
          billersCode: '08031234567',
          variation_code: 'mtn-10mb-100',
          phone: '08031234567',
        },
      ],
      [
        {
          service: 'cable',
          reference,
          provider: 'dstv',
          iuc: '7023456781',
          planId: 'dstv79',
          amountKobo: 1_900_000n,
          phone: '08031234567',
          subscriptionType: 'change',
        },
        {
          request_id: reference,
          serviceID: 'dstv',
          billersCode: '7023456781',
          variation_code: 'dstv79',
          amount: 19_000,
          phone: '08031234567',
          subscription_type: 'change',
          quantity: 1,
        },
      ],
      [
        {
          service: 'cable',
          reference,
          provider: 'gotv',
          iuc: '7023456781',
          planId: 'gotv-max',
          amountKobo: 850_000n,
          phone: '08031234567',
          subscriptionType: 'renew',
        },
        {
          request_id: reference,
          serviceID: 'gotv',
          billersCode: '7023456781',
          amount: 8_500,
          phone: '08031234567',
          subscription_type: 'renew',
        },
      ],
      [
        {
          service: 'electricity',
          reference,
          disco: 'ikeja-electric',
          meter: '45012345678',
          meterType: 'prepaid',
          amountKobo: 200_000n,
          phone: '08031234567',
        },
        {
          request_id: reference,
          serviceID: 'ikeja-electric',
          billersCode: '45012345678',
          variation_code: 'prepaid',
          amount: 2_000,
          phone: '08031234567',
        },
      ],
      [
        { service: 'betting', reference, company: 'bet9ja', customerId: '1234567', amountKobo: 50_000n },
        { request_id: reference, serviceID: 'bet9ja', billersCode: '1234567', amount: 500 },
      ],
      [
        {
          service: 'education',
          reference,
          exam: 'jamb',
          variation: 'utme',
          quantity: 1,
          phone: '08031234567',
          profileId: '0123456789',
        },
        {
          request_id: reference,
          serviceID: 'jamb',
          variation_code: 'utme',
          quantity: 1,
          phone: '08031234567',
          billersCode: '0123456789',
        },
      ],
    ];
    for (const [request, body] of requests) {
      const outcome = await client().purchase(request);
      assert.equal(outcome.status, 'success', request.service);
      const sent = received.at(-1)!;
      assert.equal(sent.method, 'POST');
      assert.equal(sent.url, '/api/pay');
      assert.equal(sent.headers['api-key'], 'api-key-1');
      assert.equal(sent.headers['secret-key'], 'SK_secret_1');
      assert.equal(sent.headers['public-key'], undefined);
      assert.equal(sent.headers['content-type'], 'application/json');
      assert.deepEqual(JSON.parse(sent.body), body, request.service);
    }
  });

  it('sends GETs with the public key, and reads the balance in exact kobo', async () => {
    handler = json(200, { code: 1, contents: { balance: 1234.56 } });
    assert.equal(await client().balance(), 123_456n);
    const sent = received.at(-1)!;
    assert.equal(sent.method, 'GET');
    assert.equal(sent.url, '/api/balance');
    assert.equal(sent.headers['api-key'], 'api-key-1');
    assert.equal(sent.headers['public-key'], 'PK_public_1');
    assert.equal(sent.headers['secret-key'], undefined);
  });

  it('refuses, before sending, a reference that is not a VTpass request id', async () => {
    handler = json(200, payReply('000', 'delivered'));
    await assert.rejects(client().purchase({ ...airtime, reference: 'vtu_0198f0a1' }), VtuProviderError);
    await assert.rejects(client().purchase({ ...airtime, reference: '202602300030abc' }), VtuProviderError);
    assert.equal(received.length, 0);
  });

  it('refuses services VTpass does not sell, without a call', async () => {
    const provider = client();
    assert.deepEqual([...provider.services].sort(), [
      'airtime',
      'betting',
      'cable',
      'data',
      'education',
      'electricity',
    ]);
    await assert.rejects(
      provider.purchase({ ...airtime, service: 'airtime_to_cash', sendTo: '08030000000' }),
      (error: unknown) =>
        error instanceof VtuProviderError && /does not offer airtime_to_cash/.test(error.message),
    );
    await assert.rejects(provider.socialServices(), VtuProviderError);
    assert.equal(received.length, 0);
  });

  it('maps code 000 by the transaction status', async () => {
    const expected: [string, string][] = [
      ['delivered', 'success'],
      ['failed', 'failed'],
      ['reversed', 'failed'],
      ['initiated', 'pending'],
      ['pending', 'pending'],
      ['resolved', 'unknown'],
      ['something-new', 'unknown'],
    ];
    for (const [status, outcome] of expected) {
      handler = json(200, payReply('000', status));
      assert.equal((await client().purchase(airtime)).status, outcome, status);
    }
    handler = json(200, payReply('000', null));
    assert.equal((await client().purchase(airtime)).status, 'unknown', 'no transaction status');
  });

  it('reads a delivered order: provider id and what we were charged', async () => {
    handler = json(200, payReply('000', 'delivered'));
    assert.deepEqual(await client().purchase(airtime), {
      status: 'success',
      providerReference: '17356000000001',
      chargedKobo: 9_700n,
    });
  });

  it('maps processing codes to pending, refusals to failed, and 014 and the rest to unknown', async () => {
    for (const code of ['099', '089', '001']) {
      handler = json(200, payReply(code, 'pending'));
      assert.deepEqual(
        await client().purchase(airtime),
        { status: 'pending', providerReference: '17356000000001' },
        code,
      );
    }
    const refusals = ['010', '011', '012', '013', '016', '017', '018', '019', '021', '022', '023', '024'];
    refusals.push('025', '026', '027', '028', '030', '031', '032', '034', '035', '040', '085', '087', '091');
    for (const code of refusals) {
      handler = json(200, { code, response_description: `REFUSED ${code}` });
      const outcome = await client().purchase(airtime);
      assert.equal(outcome.status, 'failed', code);
      assert.ok(outcome.status === 'failed' && outcome.reason.includes(`${code} REFUSED ${code}`), code);
    }
    // The provider already holds an order under this reference: it may have been delivered.
    for (const code of ['014', '083', '044', '015', '020', '999']) {
      handler = json(200, { code, response_description: 'WHATEVER' });
      assert.equal((await client().purchase(airtime)).status, 'unknown', code);
    }
    handler = json(200, { code: 16, response_description: 'TRANSACTION FAILED' });
    assert.equal((await client().purchase(airtime)).status, 'failed', 'a numeric code');
  });

  it('reads a refusal sent with a 4xx, but a 4xx without the envelope is unknown', async () => {
    handler = json(400, { code: '011', response_description: 'INVALID ARGUMENTS' });
    assert.equal((await client().purchase(airtime)).status, 'failed');
    handler = raw(404, '<html>Not Found</html>', 'text/html');
    assert.equal((await client().purchase(airtime)).status, 'unknown');
    handler = json(401, { message: 'Unauthorized' });
    assert.equal((await client().purchase(airtime)).status, 'unknown');
  });

  it('treats a timeout, a hang-up, a 5xx and garbage as unknown, and never repeats the POST', async () => {
    const unusable: [string, Handler][] = [
      ['timeout', silent],
      ['hang-up', hangUp],
      ['500', json(500, { code: '000', content: { transactions: { status: 'failed' } } })],
      ['502', raw(502, 'Bad Gateway', 'text/plain')],
      ['not JSON', raw(200, '{"code": "000", ')],
      ['wrong shape', json(200, { status: 'ok' })],
      ['a list', json(200, [])],
      ['another request id', json(200, { ...payReply('000', 'failed'), requestId: '202601020030other' })],
    ];
    for (const [name, script] of unusable) {
      received.length = 0;
      handler = script;
      const started = Date.now();
      // The short deadline only where it is the point: on a starved machine an answer can take longer.
      const outcome = await client(name === 'timeout' ? 200 : 2_000).purchase(airtime);
      assert.equal(outcome.status, 'unknown', name);
      assert.equal(received.length, 1, `${name}: sent once`);
      if (name === 'timeout') {
        assert.ok(Date.now() - started < 2_000, 'the deadline ends the call');
        assert.match(outcome.status === 'unknown' ? outcome.reason : '', /did not answer within 200 ms/);
      }
    }
    server.closeAllConnections();
  });

  it('requeries by request id: 015 is not found, the rest reads like a purchase', async () => {
    const requery = (timeoutMs = 2_000) =>
      client(timeoutMs).requery({ reference, service: 'airtime', providerReference: null });
    handler = json(200, { code: '015', response_description: 'INVALID REQUEST ID' });
    assert.deepEqual(await requery(), { status: 'not_found' });
    const sent = received.at(-1)!;
    assert.equal(sent.url, '/api/requery');
    assert.equal(sent.headers['secret-key'], 'SK_secret_1');
    assert.deepEqual(JSON.parse(sent.body), { request_id: reference });

    handler = json(200, payReply('000', 'delivered'));
    assert.equal((await requery()).status, 'success');
    handler = json(200, payReply('016', 'failed'));
    assert.equal((await requery()).status, 'failed');
    handler = json(200, payReply('099', 'pending'));
    assert.equal((await requery()).status, 'pending');
    handler = silent;
    assert.equal((await requery(200)).status, 'unknown');
    handler = json(503, { code: '015' });
    assert.equal((await requery()).status, 'unknown', 'a 5xx is no answer, whatever its body');
    server.closeAllConnections();
  });

  it('never fails a requery on a refusal of the call itself: the order may be delivered', async () => {
    const requery = (providerReference: string | null = null) =>
      client().requery({ reference, service: 'airtime', providerReference });
    // Keys rotated, IP not whitelisted, wallet low, bad arguments: about the requery, not the order.
    for (const code of ['087', '027', '018', '011']) {
      handler = json(200, { code, response_description: `REFUSED ${code}` });
      const outcome = await requery();
      assert.equal(outcome.status, 'unknown', `code ${code}`);
    }
    // What VTpass says of the order itself still fails it.
    handler = json(200, payReply('040', 'reversed'));
    assert.equal((await requery()).status, 'failed');
    // "No such request id" about an order VTpass once named: not believed.
    handler = json(200, { code: '015', response_description: 'INVALID REQUEST ID' });
    const named = await requery('17000000000000000001');
    assert.equal(named.status, 'unknown');
    server.closeAllConnections();
  });

  it('finds the electricity token and units in each DisCo shape', async () => {
    const electricity: PurchaseRequest = {
      service: 'electricity',
      reference,
      disco: 'ikeja-electric',
      meter: '45012345678',
      meterType: 'prepaid',
      amountKobo: 500_000n,
      phone: '08031234567',
    };
    const shapes: [Record<string, unknown>, string, string | undefined][] = [
      [{ token: '26362054405982757802', units: '79.9 kWh' }, '26362054405982757802', '79.9 kWh'],
      [{ mainToken: '1234 5678 9012 3456 7890', mainTokenUnits: 16.6 }, '1234 5678 9012 3456 7890', '16.6'],
      [{ Token: '11112222333344445555', Units: '23.8' }, '11112222333344445555', '23.8'],
      [
        { purchased_code: 'Bonus Token : 9999 9999 9999 9999 9999 Token : 4392-8735-1029-3847-5610' },
        '4392-8735-1029-3847-5610',
        undefined,
      ],
    ];
    for (const [fields, token, units] of shapes) {
      handler = json(200, payReply('000', 'delivered', fields));
      const outcome = await client().purchase(electricity);
      assert.equal(outcome.status, 'success');
      assert.ok(outcome.status === 'success');
      assert.equal(outcome.token, token);
      assert.equal(outcome.units, units);
      assert.equal(outcome.pins, undefined);
    }
  });

  it('names the customer wherever the answer put it, and an odd name never spoils a delivery', async () => {
    const electricity: PurchaseRequest = {
      service: 'electricity',
      reference,
      disco: 'kano-electric',
      meter: '45012345678',
      meterType: 'prepaid',
      amountKobo: 500_000n,
      phone: '08031234567',
    };
    const inTransactions = (fields: Record<string, unknown>) => {
      const reply = payReply('000', 'delivered', { token: '11112222333344445555' });
      Object.assign((reply.content as { transactions: object }).transactions, fields);
      return reply;
    };
    const answers: [Record<string, unknown>, string | undefined][] = [
      [payReply('000', 'delivered', { customerName: 'OKAFOR  ADAEZE ' }), 'OKAFOR ADAEZE'],
      [payReply('000', 'delivered', { CustomerName: 'MUSA IBRAHIM' }), 'MUSA IBRAHIM'],
      [inTransactions({ customerName: 'EZE NGOZI' }), 'EZE NGOZI'],
      [inTransactions({ CustomerName: 'BELLO TUNDE' }), 'BELLO TUNDE'],
      [payReply('000', 'delivered', { customerName: '' }), undefined],
      [payReply('000', 'delivered', { customerName: { first: 'ADA' } }), undefined],
      [payReply('000', 'delivered', { customerName: 'X'.repeat(201) }), undefined],
      [payReply('000', 'delivered'), undefined],
    ];
    for (const [answer, name] of answers) {
      handler = json(200, answer);
      const outcome = await client().purchase(electricity);
      assert.equal(outcome.status, 'success', JSON.stringify(answer));
      assert.ok(outcome.status === 'success');
      assert.equal(outcome.customerName, name, JSON.stringify(answer));
    }
    // Airtime has no customer: a name in its answer is not one.
    handler = json(200, payReply('000', 'delivered', { customerName: 'OKAFOR ADAEZE' }));
    const topUp = await client().purchase(airtime);
    assert.ok(topUp.status === 'success');
    assert.equal(topUp.customerName, undefined);
  });

  it('finds exam pins in cards, tokens or purchased_code', async () => {
    const exam: PurchaseRequest = {
      service: 'education',
      reference,
      exam: 'waec',
      variation: 'waecdirect',
      quantity: 2,
      phone: '08031234567',
    };
    const shapes: [Record<string, unknown>, string[]][] = [
      [
        {
          cards: [
            { Serial: 'WRN182134166', Pin: '392626668465' },
            { Serial: 'WRN182134167', Pin: 392626668466 },
          ],
        },
        ['Serial: WRN182134166, Pin: 392626668465', 'Serial: WRN182134167, Pin: 392626668466'],
      ],
      [{ tokens: ['NECO123', 'NECO456'] }, ['NECO123', 'NECO456']],
      [{ purchased_code: 'Pin : 367574683050773' }, ['367574683050773']],
    ];
    for (const [fields, pins] of shapes) {
      handler = json(200, payReply('000', 'delivered', fields));
      const outcome = await client().purchase(exam);
      assert.ok(outcome.status === 'success');
      assert.deepEqual(outcome.pins, pins);
      assert.equal(outcome.token, undefined);
    }
  });

  it('normalises catalogues, with either spelling of the variation list and exact kobo', async () => {
    const variations = (serviceID: string, key: 'variations' | 'varations', items: unknown[]) =>
      json(200, {
        response_description: '000',
        content: { ServiceName: serviceID, serviceID, [key]: items },
      });
    handler = variations('mtn-data', 'varations', [
      {
        variation_code: 'mtn-10mb-100',
        name: 'MTN N100 100MB - 24 hrs',
        variation_amount: '100.00',
        fixedPrice: 'Yes',
      },
      {
        variation_code: 'mtn-sme-1gb',
        name: 'MTN SME 1GB - 30 days',
        variation_amount: '1234.56',
        fixedPrice: 'Yes',
      },
      { variation_code: 'mtn-odd', name: 'MTN Night Plan', variation_amount: 25, fixedPrice: 'Yes' },
    ]);
    assert.deepEqual(await client().dataPlans('mtn'), [
      {
        planId: 'mtn-10mb-100',
        network: 'mtn',
        planType: 'GIFTING',
        name: 'MTN N100 100MB - 24 hrs',
        validity: '24 hrs',
        wholesaleKobo: 10_000n,
      },
      {
        planId: 'mtn-sme-1gb',
        network: 'mtn',
        planType: 'SME',
        name: 'MTN SME 1GB - 30 days',
        validity: '30 days',
        wholesaleKobo: 123_456n,
      },
      {
        planId: 'mtn-odd',
        network: 'mtn',
        planType: 'GIFTING',
        name: 'MTN Night Plan',
        validity: null,
        wholesaleKobo: 2_500n,
      },
    ]);
    assert.equal(received.at(-1)!.url, '/api/service-variations?serviceID=mtn-data');

    handler = variations('dstv', 'variations', [
      {
        variation_code: 'dstv79',
        name: 'DStv Compact N19,000',
        variation_amount: '19000.00',
        fixedPrice: 'Yes',
      },
    ]);
    assert.deepEqual(await client().cablePlans('dstv'), [
      { planId: 'dstv79', provider: 'dstv', name: 'DStv Compact N19,000', wholesaleKobo: 1_900_000n },
    ]);

    handler = variations('dstv', 'variations', [
      { variation_code: 'dstv79', name: 'DStv Compact', variation_amount: '19000.001', fixedPrice: 'Yes' },
    ]);
    await assert.rejects(client().cablePlans('dstv'), /priced dstv79 unreadably/);
    handler = json(200, { response_description: '000', content: { serviceID: 'dstv' } });
    await assert.rejects(client().cablePlans('dstv'), /without a list of variations/);
  });

  it('lists services from /services and maps networks to their VTpass serviceIDs', async () => {
    const services = (ids: [string, string][]) =>
      json(200, {
        response_description: '000',
        content: ids.map(([serviceID, name]) => ({ serviceID, name })),
      });
    handler = services([
      ['mtn', 'MTN Airtime VTU'],
      ['etisalat', '9mobile Airtime VTU'],
      ['foreign-airtime', 'Foreign Airtime'],
    ]);
    assert.deepEqual(await client().networks('airtime'), [
      { id: 'mtn', name: 'MTN' },
      { id: '9mobile', name: '9mobile' },
    ]);
    assert.equal(received.at(-1)!.url, '/api/services?identifier=airtime');
    handler = services([
      ['glo-data', 'Glo Data'],
      ['airtel-data', 'Airtel Data'],
    ]);
    assert.deepEqual(await client().networks('data'), [
      { id: 'glo', name: 'Glo' },
      { id: 'airtel', name: 'Airtel' },
    ]);
    handler = services([['ikeja-electric', 'Ikeja Electric Payment - IKEDC']]);
    assert.deepEqual(await client().discos(), [
      { id: 'ikeja-electric', name: 'Ikeja Electric Payment - IKEDC' },
    ]);
    assert.equal(received.at(-1)!.url, '/api/services?identifier=electricity-bill');
    handler = services([['bet9ja', 'Bet9ja']]);
    assert.deepEqual(await client().bettingCompanies(), [{ id: 'bet9ja', name: 'Bet9ja' }]);
    handler = services([['gotv', 'Gotv Payment']]);
    assert.deepEqual(await client().cableProviders(), [{ id: 'gotv', name: 'Gotv Payment' }]);
    assert.equal(received.at(-1)!.url, '/api/services?identifier=tv-subscription');
  });

  it('repeats a GET once after a 5xx or a hang-up, and then gives up with an error', async () => {
    handler = inTurn(json(502, {}), json(200, { code: 1, contents: { balance: '500.00' } }));
    assert.equal(await client().balance(), 50_000n);
    assert.equal(received.length, 2);

    received.length = 0;
    handler = inTurn(hangUp, hangUp, json(200, { code: 1, contents: { balance: 1 } }));
    await assert.rejects(client().balance(), (error: unknown) => {
      assert.ok(error instanceof VtuProviderError);
      assert.equal(error.provider, 'bills');
      assert.match(error.message, /balance is unreachable/);
      return true;
    });
    assert.equal(received.length, 2);

    handler = json(200, { code: '087', response_description: 'INVALID CREDENTIALS' });
    await assert.rejects(client().balance(), /087 INVALID CREDENTIALS/);
    await assert.rejects(client().discos(), /087 INVALID CREDENTIALS/);
    handler = raw(200, 'garbage');
    await assert.rejects(client().balance(), /not JSON/);
  });

  it('verifies a customer: found with details, not found on error or WrongBillersCode, errors otherwise', async () => {
    handler = json(200, {
      code: '000',
      content: {
        Customer_Name: ' OKAFOR ADAEZE ',
        Address: '12 Allen Avenue',
        Meter_Number: '45012345678',
        Min_Purchase_Amount: 1000,
        WrongBillersCode: false,
        commission_details: { amount: null },
      },
    });
    assert.deepEqual(
      await client().verifyCustomer({
        service: 'electricity',
        disco: 'ikeja-electric',
        meter: '45012345678',
        meterType: 'prepaid',
      }),
      {
        found: true,
        name: 'OKAFOR ADAEZE',
        details: { Address: '12 Allen Avenue', Meter_Number: '45012345678', Min_Purchase_Amount: '1000' },
      },
    );
    let sent = received.at(-1)!;
    assert.equal(sent.url, '/api/merchant-verify');
    assert.equal(sent.headers['secret-key'], 'SK_secret_1');
    assert.deepEqual(JSON.parse(sent.body), {
      billersCode: '45012345678',
      serviceID: 'ikeja-electric',
      type: 'prepaid',
    });

    handler = json(200, {
      code: '020',
      response_description: 'BILLER CONFIRMED',
      content: { Customer_Name: 'EZE TUNDE' },
    });
    const cable = await client().verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '7023456781' });
    assert.deepEqual(cable, { found: true, name: 'EZE TUNDE', details: {} });
    sent = received.at(-1)!;
    assert.deepEqual(JSON.parse(sent.body), { billersCode: '7023456781', serviceID: 'dstv' });

    handler = json(200, { code: '000', content: { error: 'This meter is invalid' } });
    assert.deepEqual(
      await client().verifyCustomer({ service: 'betting', company: 'bet9ja', customerId: '999' }),
      { found: false, reason: 'This meter is invalid' },
    );
    handler = json(200, { code: '000', content: { WrongBillersCode: true } });
    assert.equal(
      (await client().verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '1' })).found,
      false,
    );

    handler = json(200, { code: '030', response_description: 'BILLER NOT REACHABLE AT THIS POINT' });
    await assert.rejects(
      client().verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '1' }),
      /030 BILLER/,
    );
    received.length = 0;
    handler = json(500, {});
    await assert.rejects(
      client().verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '1' }),
      /upstream \(500\)/,
    );
    assert.equal(received.length, 1, 'a POST is never repeated');
    handler = silent;
    await assert.rejects(
      client(200).verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '1' }),
      /did not answer within 200 ms/,
    );
    server.closeAllConnections();
  });
});
