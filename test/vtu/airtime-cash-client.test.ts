import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createAirtimeCashClient } from '../../src/providers/vtu/airtime-cash-client.ts';
import { VtuProviderError, VtuRefusedLocally } from '../../src/providers/vtu/vtu-provider.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';

// The airtime-to-cash client against a local server that answers as VTU Africa's API would, and as
// one misbehaves: what goes on the wire (GETs with the key and the parameters in the query), how each
// answer and non-answer becomes an outcome, and which calls are sent a second time.

describe('airtime-to-cash client', () => {
  const received: Received[] = [];
  let handler: Handler = json(200, {});
  let server: ScriptedServer;

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

  const callbackUrl = 'https://billrail.example/api/public/vtu/airtime-cash/callback';
  const client = (options: { timeoutMs?: number } = {}) =>
    createAirtimeCashClient({
      name: 'bills',
      baseUrl: `${server.baseUrl}/portal/api/`,
      apiKey: 'a2c-key-1',
      timeoutMs: options.timeoutMs ?? 2_000,
      callbackUrl,
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
  const silence: Handler = () => {};
  const hangUp: Handler = (request) => request.socket.destroy();
  const ok = (description: unknown) => json(200, { code: 101, description });
  const refusal = (code: number, message: string) => json(200, { code, description: { message } });
  /** The path and the query of a received request. */
  const sent = (index = -1) => {
    const url = new URL(received.at(index)!.url, 'http://x');
    return { path: url.pathname, query: Object.fromEntries(url.searchParams) };
  };
  const sale = {
    service: 'airtime_to_cash',
    reference: 'a2c_42',
    network: 'mtn',
    phone: '08031234567',
    amountKobo: 150_000n,
    sendTo: '08124139638',
  } as const;
  const requery = () =>
    client().requery({ reference: 'a2c_42', service: 'airtime_to_cash', providerReference: null });

  describe('the receiving line (merchant-verify, Airtime2Cash)', () => {
    const verified = (Phone_Number: unknown, Network: unknown = 'MTN') =>
      ok({
        Status: 'Completed',
        Phone_Number,
        Network,
        message: 'MTN Airtime To Cash Service Is Available.',
      });

    it('asks with the key, the service name and the network, and answers the line', async () => {
      handler = verified('08124139638');
      assert.equal(await client().airtimeToCashLine('mtn'), '08124139638');
      assert.equal(received.length, 1);
      assert.equal(received[0]!.method, 'GET');
      assert.deepEqual(sent(), {
        path: '/portal/api/merchant-verify/',
        query: { apikey: 'a2c-key-1', serviceName: 'Airtime2Cash', network: 'mtn' },
      });
      handler = verified('08091234567', '9MOBILE');
      assert.equal(await client().airtimeToCashLine('9mobile'), '08091234567');
      assert.equal(sent().query.network, '9mobile');
    });

    for (const [written, local] of [
      ['+2348124139638', '08124139638'],
      ['2348124139638', '08124139638'],
      ['0812 413 9638', '08124139638'],
      [8124139638, null],
      [2348124139638, '08124139638'],
    ] as const) {
      it(`reads the line written ${JSON.stringify(written)} as ${local ?? 'no Nigerian mobile number'}`, async () => {
        handler = verified(written);
        if (local !== null) assert.equal(await client().airtimeToCashLine('mtn'), local);
        else await assert.rejects(client().airtimeToCashLine('mtn'), /not a Nigerian mobile number/);
      });
    }

    for (const line of ['01234567890', '0803123456', '', 'call us']) {
      it(`refuses the line ${JSON.stringify(line)}, which is no Nigerian mobile number`, async () => {
        handler = verified(line);
        await assert.rejects(client().airtimeToCashLine('mtn'), (error: unknown) => {
          assert.ok(error instanceof VtuProviderError);
          assert.match(
            error.message,
            /^bills: verify \(mtn\): the receiving line .* is not a Nigerian mobile number$/,
          );
          return true;
        });
      });
    }

    it('refuses an answer for another network, and a service that is not Completed', async () => {
      handler = verified('08124139638', 'GLO');
      await assert.rejects(client().airtimeToCashLine('mtn'), /another network \(GLO\)/);
      handler = ok({ Status: 'Unavailable', Phone_Number: '', message: 'Try again later' });
      await assert.rejects(client().airtimeToCashLine('mtn'), /the service is Unavailable: Try again later/);
    });

    it('throws the provider error, naming the configuration for the key', async () => {
      handler = refusal(102, 'Invalid API Key');
      await assert.rejects(
        client().airtimeToCashLine('mtn'),
        /verify \(mtn\): the provider refused \(code 102\): Invalid API Key \(check the API key/,
      );
      handler = refusal(104, 'MTN Airtime To Cash Service Is Not Available At The Moment');
      await assert.rejects(client().airtimeToCashLine('mtn'), /code 104\): MTN Airtime To Cash/);
    });

    it('sends the verify once more after a 5xx or a dropped connection, and no more', async () => {
      for (const first of [json(503, {}), hangUp]) {
        received.length = 0;
        handler = inTurn(first, ok({ Status: 'Completed', Phone_Number: '08124139638' }));
        assert.equal(await client().airtimeToCashLine('mtn'), '08124139638');
        assert.equal(received.length, 2);
      }
      received.length = 0;
      handler = json(502, {});
      await assert.rejects(client().airtimeToCashLine('mtn'), /failed upstream \(502\)/);
      assert.equal(received.length, 2);
    });

    it('throws on silence, on a body that is not the envelope and on a 404 page', async () => {
      handler = silence;
      await assert.rejects(
        client({ timeoutMs: 200 }).airtimeToCashLine('mtn'),
        /did not answer within 200 ms/,
      );
      server.closeAllConnections();
      handler = raw(200, '<html>maintenance</html>', 'text/html');
      await assert.rejects(client().airtimeToCashLine('mtn'), /answered 200 with a body that is not JSON/);
      handler = raw(404, 'Not Found', 'text/plain');
      await assert.rejects(client().airtimeToCashLine('mtn'), /is the base URL right/);
    });
  });

  describe('the report (airtime-cash)', () => {
    it('sends one GET with every parameter, the amount in whole naira, and reads Completed as success', async () => {
      handler = ok({ Status: 'Completed', ref: 'a2c_42', network: 'mtn', amount: '1500', credit: '1275' });
      assert.deepEqual(await client().purchase(sale), {
        status: 'success',
        providerReference: 'a2c_42',
        receivedKobo: 150_000n,
      });
      assert.equal(received.length, 1);
      assert.equal(received[0]!.method, 'GET');
      assert.equal(received[0]!.body, '');
      assert.deepEqual(sent(), {
        path: '/portal/api/airtime-cash/',
        query: {
          apikey: 'a2c-key-1',
          network: 'mtn',
          sender: '08031234567',
          sendernumber: '08031234567',
          amount: '1500',
          sitephone: '08124139638',
          ref: 'a2c_42',
          webhookURL: callbackUrl,
        },
      });
    });

    it('sends the phones in the local form whatever form they came in', async () => {
      handler = ok({ Status: 'Pending', ref: 'a2c_42' });
      await client().purchase({ ...sale, phone: '+2348031234567', sendTo: '2348124139638' });
      assert.equal(sent().query.sendernumber, '08031234567');
      assert.equal(sent().query.sitephone, '08124139638');
    });

    const answers: [string, unknown, unknown][] = [
      [
        'Pending: pending',
        { Status: 'Pending', ref: 'a2c_42' },
        { status: 'pending', providerReference: 'a2c_42' },
      ],
      ['Processing: pending', { Status: 'Processing' }, { status: 'pending', providerReference: 'a2c_42' }],
      [
        'the provider id (ReferenceID) as the provider reference',
        { Status: 'Processing', ReferenceID: 99812 },
        { status: 'pending', providerReference: '99812' },
      ],
      [
        'Failed: failed',
        { Status: 'Failed', ref: 'a2c_42', message: 'Airtime not received' },
        {
          status: 'failed',
          reason: 'the airtime-to-cash provider reports the airtime failed: Airtime not received',
        },
      ],
      [
        'Declined: failed',
        { Status: ' declined ' },
        { status: 'failed', reason: 'the airtime-to-cash provider reports the airtime declined' },
      ],
      [
        'an unknown word: unknown',
        { Status: 'Awaiting review' },
        {
          status: 'unknown',
          reason: "the airtime-to-cash provider's report answered a status we do not know (Awaiting review)",
        },
      ],
      [
        'an answer about another reference: unknown',
        { Status: 'Completed', ref: 'a2c_41' },
        {
          status: 'unknown',
          reason: "the airtime-to-cash provider's report answered about another transaction (a2c_41)",
        },
      ],
      [
        'a description without Status: unknown',
        { ref: 'a2c_42' },
        {
          status: 'unknown',
          reason: "the airtime-to-cash provider's report answered with an unexpected body (at Status)",
        },
      ],
    ];
    for (const [what, description, expected] of answers) {
      it(`reads ${what}`, async () => {
        handler = ok(description);
        assert.deepEqual(await client().purchase(sale), expected);
      });
    }

    // The airtime the provider confirms arrived is the transaction's `amount`, in naira.
    for (const [amount, receivedKobo] of [
      ['750', 75_000n],
      [750, 75_000n],
      ['1500.00', 150_000n],
      ['2,000', 200_000n],
      ['99.999', 9_999n], // a fraction of a kobo is not airtime: rounded down
    ] as const) {
      it(`reads the confirmed amount ${JSON.stringify(amount)} as ${receivedKobo} kobo received`, async () => {
        handler = ok({ Status: 'Completed', ref: 'a2c_42', amount });
        assert.deepEqual(await client().purchase(sale), {
          status: 'success',
          providerReference: 'a2c_42',
          receivedKobo,
        });
      });
    }

    // Completed without an amount we can read confirms the arrival but not how much: no amount is
    // guessed (the settlement pays nothing on it and keeps asking).
    for (const amount of [undefined, '', 'N1,000', '-500', '0', 'one thousand', null, true]) {
      it(`reads Completed with the amount ${JSON.stringify(amount)} as success with nothing confirmed`, async () => {
        handler = ok({ Status: 'Completed', ref: 'a2c_42', ...(amount === undefined ? {} : { amount }) });
        assert.deepEqual(await client().purchase(sale), { status: 'success', providerReference: 'a2c_42' });
      });
    }

    it('takes the code written as a string', async () => {
      handler = json(200, { code: '101', description: { Status: 'Completed' } });
      assert.equal((await client().purchase(sale)).status, 'success');
    });

    for (const message of [
      'Invalid Network. Use mtn, airtel, glo or 9mobile',
      'MTN Airtime To Cash Service Is Not Available At The Moment',
      'Invalid Amount. Amount Must Be Between 100 And 50000 Naira',
      'Invalid Sender Phone Number',
      'Wrong Site Phone Number. Kindly Transfer To 08034417262 As Given By The Verification',
      'Missing Or Invalid Parameter: ref',
    ]) {
      it(`reads the refusal "${message}" as failed`, async () => {
        handler = refusal(105, message);
        assert.deepEqual(await client().purchase(sale), {
          status: 'failed',
          reason: `the airtime-to-cash provider refused the report: ${message}`,
        });
      });
    }

    it('reads "Invalid API Key" as failed and says it is our configuration', async () => {
      handler = refusal(102, 'Invalid API Key');
      assert.deepEqual(await client().purchase(sale), {
        status: 'failed',
        reason: 'the airtime-to-cash provider refused our API key (check the configuration): Invalid API Key',
      });
    });

    it('reads a duplicate reference as unknown: the transaction exists', async () => {
      handler = refusal(108, 'Duplicate Transaction Reference');
      assert.deepEqual(await client().purchase(sale), {
        status: 'unknown',
        reason:
          'the airtime-to-cash provider already has a transaction with reference a2c_42 (Duplicate Transaction Reference): requery it',
      });
    });

    it('reads an error it does not know, or one without a message, as unknown', async () => {
      handler = refusal(199, 'Server busy, transaction queued');
      const outcome = await client().purchase(sale);
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /code 199\): Server busy/);
      handler = json(200, { code: 150, description: {} });
      assert.equal((await client().purchase(sale)).status, 'unknown');
    });

    const nonAnswers: [string, Handler, RegExp][] = [
      ['silence', silence, /did not answer within 200 ms/],
      ['a 500', json(500, { code: 101, description: { Status: 'Completed' } }), /failed upstream \(500\)/],
      ['a 503 page', raw(503, '<h1>Service Unavailable</h1>', 'text/html'), /failed upstream \(503\)/],
      ['a 429', json(429, {}), /rate limiting us/],
      ['a dropped connection', hangUp, /unreachable/],
      ['a body that is not JSON', raw(200, '{"code":101,'), /with a body that is not JSON/],
      ['JSON that is not the envelope', json(200, { status: 'ok' }), /without the provider's/],
      ['a 404 page', raw(404, 'Not Found', 'text/plain'), /is the base URL right/],
    ];
    for (const [what, answer, reason] of nonAnswers) {
      it(`reads ${what} as unknown and never sends the report again`, async () => {
        handler = answer;
        const outcome = await client({ timeoutMs: 200 }).purchase(sale);
        server.closeAllConnections();
        assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
        assert.match(outcome.status === 'unknown' ? outcome.reason : '', reason);
        assert.equal(received.length, 1);
      });
    }

    it('reads the provider envelope on a 4xx as the provider speaking', async () => {
      handler = json(400, { code: 105, description: { message: 'Invalid Amount' } });
      assert.deepEqual(await client().purchase(sale), {
        status: 'failed',
        reason: 'the airtime-to-cash provider refused the report: Invalid Amount',
      });
    });

    const local: [string, object, RegExp][] = [
      [
        'a sending phone that is no Nigerian mobile',
        { phone: '0803123456' },
        /0803123456 is not a Nigerian mobile/,
      ],
      [
        'a receiving line that is no Nigerian mobile',
        { sendTo: '01234567890' },
        /receiving line 01234567890/,
      ],
      [
        'a fraction of a naira',
        { amountKobo: 150_050n },
        /150050 kobo is not a positive whole number of naira/,
      ],
      ['nothing', { amountKobo: 0n }, /0 kobo/],
      ['a reference with spaces', { reference: 'a2c 42' }, /the reference/],
    ];
    for (const [what, change, reason] of local) {
      it(`refuses ${what} before sending anything`, async () => {
        handler = ok({ Status: 'Completed' });
        const outcome = await client().purchase({ ...sale, ...change });
        assert.equal(outcome.status, 'failed');
        assert.match(outcome.status === 'failed' ? outcome.reason : '', /^refused locally: /);
        assert.match(outcome.status === 'failed' ? outcome.reason : '', reason);
        assert.equal(received.length, 0);
      });
    }
  });

  describe('the status query (merchant-verify, Webhook)', () => {
    it('asks by our reference with our callback URL, and reads the Status words', async () => {
      handler = ok({ Status: 'Completed', ref: 'a2c_42', service: 'Airtime2Cash' });
      assert.deepEqual(await requery(), { status: 'success', providerReference: 'a2c_42' });
      // The webhook re-send answers the transaction as it stands: the amount that arrived.
      handler = ok({
        Status: 'Completed',
        ref: 'a2c_42',
        service: 'Airtime2Cash',
        amount: '500',
        credit: '425',
      });
      assert.deepEqual(await requery(), {
        status: 'success',
        providerReference: 'a2c_42',
        receivedKobo: 50_000n,
      });
      assert.deepEqual(sent(), {
        path: '/portal/api/merchant-verify/',
        query: { apikey: 'a2c-key-1', serviceName: 'Webhook', ref: 'a2c_42', webhookURL: callbackUrl },
      });
      handler = ok({ Status: 'Pending', ref: 'a2c_42' });
      assert.deepEqual(await requery(), { status: 'pending', providerReference: 'a2c_42' });
      handler = ok({ Status: 'Reversed', ref: 'a2c_42' });
      assert.equal((await requery()).status, 'failed');
    });

    it('reads "Transaction Not Found" as not_found', async () => {
      handler = refusal(109, 'Transaction Not Found');
      assert.deepEqual(await requery(), { status: 'not_found' });
    });

    it('reads any other error as unknown, the key naming the configuration', async () => {
      handler = refusal(102, 'Invalid API Key');
      const keyed = await requery();
      assert.equal(keyed.status, 'unknown');
      assert.match(keyed.status === 'unknown' ? keyed.reason : '', /Invalid API Key \(check the API key/);
      handler = refusal(110, 'Missing Or Invalid Parameter: ref');
      assert.equal((await requery()).status, 'unknown');
    });

    it('asks once more after a 5xx or a dropped connection, and reads the second answer', async () => {
      for (const first of [json(500, {}), hangUp]) {
        received.length = 0;
        handler = inTurn(first, ok({ Status: 'Completed', ref: 'a2c_42' }));
        assert.equal((await requery()).status, 'success');
        assert.equal(received.length, 2);
      }
    });

    it('answers unknown after two 5xx, silence or garbage', async () => {
      handler = json(502, {});
      assert.equal((await requery()).status, 'unknown');
      assert.equal(received.length, 2);
      received.length = 0;
      handler = raw(200, 'garbage');
      assert.equal((await requery()).status, 'unknown');
      assert.equal(received.length, 1, 'a 200 is an answer, even unreadable');
      handler = silence;
      const outcome = await client({ timeoutMs: 200 }).requery({
        reference: 'a2c_42',
        service: 'airtime_to_cash',
        providerReference: null,
      });
      server.closeAllConnections();
      assert.equal(outcome.status, 'unknown');
    });
  });

  describe('the balance (merchant-verify, Balance)', () => {
    it('reads Balance in naira as kobo, rounding a fraction of a kobo down', async () => {
      for (const [written, kobo] of [
        ['12345.67', 1_234_567n],
        ['12,345.67', 1_234_567n],
        [500, 50_000n],
        ['0.005', 0n],
      ] as const) {
        handler = ok({ Status: 'Completed', Balance: written });
        assert.equal(await client().balance(), kobo, String(written));
      }
      assert.deepEqual(sent().query, { apikey: 'a2c-key-1', serviceName: 'Balance' });
    });

    it('throws on an unreadable balance, a refusal, and after a second 5xx', async () => {
      handler = ok({ Status: 'Completed', Balance: 'N/A' });
      await assert.rejects(client().balance(), /unreadable amount/);
      handler = refusal(102, 'Invalid API Key');
      await assert.rejects(client().balance(), /Invalid API Key/);
      received.length = 0;
      handler = inTurn(json(500, {}), ok({ Balance: '1.00' }));
      assert.equal(await client().balance(), 100n);
      assert.equal(received.length, 2);
    });
  });

  it('offers airtime-to-cash alone', async () => {
    const a2c = client();
    assert.deepEqual([...a2c.services], ['airtime_to_cash']);
    assert.equal(a2c.airtimeAmounts, null);
    const refusals = [
      () => a2c.networks('airtime'),
      () => a2c.dataPlans('mtn'),
      () => a2c.cableProviders(),
      () => a2c.cablePlans('dstv'),
      () => a2c.discos(),
      () => a2c.bettingCompanies(),
      () => a2c.educationItems(),
      () => a2c.socialServices(),
      () => a2c.verifyCustomer({ service: 'betting', company: 'bet9ja', customerId: '1' }),
      () =>
        a2c.purchase({
          service: 'airtime',
          reference: 'r',
          network: 'mtn',
          phone: '08031234567',
          amountKobo: 100n,
        }),
      () => a2c.requery({ reference: 'r', service: 'data', providerReference: null }),
    ];
    for (const call of refusals) {
      await assert.rejects(async () => call(), VtuRefusedLocally);
    }
    assert.equal(received.length, 0);
  });
});
