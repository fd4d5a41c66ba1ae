import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createSmmPanelClient, toKobo } from '../../src/providers/vtu/smm-panel-client.ts';
import { VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';

// The SMM panel client against a local server that answers as a panel would, and as one misbehaves:
// what goes on the wire (form-encoded, `key` and `action`), how each answer and non-answer becomes an
// outcome, and how prices in the panel's currency become kobo.

describe('SMM panel client', () => {
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

  const client = (options: { timeoutMs?: number; koboPerCurrencyUnit?: Record<string, bigint> } = {}) =>
    createSmmPanelClient({
      name: 'social',
      baseUrl: `${server.baseUrl}/api/v2`,
      apiKey: 'panel-key-1',
      timeoutMs: options.timeoutMs ?? 2_000,
      ...(options.koboPerCurrencyUnit !== undefined
        ? { koboPerCurrencyUnit: options.koboPerCurrencyUnit }
        : {}),
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
  /** Answers by the request's `action`, as one panel endpoint does. */
  const byAction =
    (answers: Record<string, unknown>): Handler =>
    (request, body, response) => {
      const action = new URLSearchParams(body).get('action') ?? '';
      json(200, answers[action] ?? { error: 'Incorrect request' })(request, body, response);
    };
  /** Leaves the request unanswered: only the client's own deadline ends it. */
  const silence: Handler = () => {};
  const hangUp: Handler = (request) => request.socket.destroy();
  const form = (index = -1) => Object.fromEntries(new URLSearchParams(received.at(index)!.body));
  const order = {
    service: 'social',
    reference: 'vtu_1',
    serviceId: '1001',
    link: 'https://instagram.com/ada',
    quantity: 500,
  } as const;
  const requery = (providerReference: string | null) =>
    client().requery({ reference: 'vtu_1', service: 'social', providerReference });

  describe('placing an order (action=add)', () => {
    it('posts a form with key, action, service, link and quantity, then asks the status of the order it got', async () => {
      handler = byAction({
        add: { order: 23501 },
        status: { charge: '7.25', status: 'Pending', remains: '500' },
      });
      assert.deepEqual(await client().purchase(order), { status: 'pending', providerReference: '23501' });
      assert.equal(received.length, 2);
      const sent = received[0]!;
      assert.equal(sent.method, 'POST');
      assert.equal(sent.url, '/api/v2');
      assert.equal(sent.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.deepEqual(form(0), {
        key: 'panel-key-1',
        action: 'add',
        service: '1001',
        link: 'https://instagram.com/ada',
        quantity: '500',
      });
      assert.deepEqual(form(1), { key: 'panel-key-1', action: 'status', order: '23501' });
    });

    it('takes an order id written as a string, and asks about it as written', async () => {
      handler = byAction({ add: { order: '98765' }, status: { status: 'Completed' } });
      assert.deepEqual(await client().purchase(order), { status: 'success', providerReference: '98765' });
      assert.deepEqual(form(), { key: 'panel-key-1', action: 'status', order: '98765' });
    });

    // The status query right after the add: what each answer makes of the purchase.
    const afterAdd: [string, Record<string, unknown>, unknown][] = [
      [
        'Completed: success, with the charge',
        { charge: '725.00', start_count: '10', status: 'Completed', remains: '0', currency: 'NGN' },
        { status: 'success', providerReference: '23501', chargedKobo: 72_500n },
      ],
      [
        'Partial with remains as a string: success with remains',
        { charge: '362.50', status: 'Partial', remains: '250', currency: 'NGN' },
        { status: 'success', providerReference: '23501', chargedKobo: 36_250n, remains: 250 },
      ],
      [
        'Partial with remains as a number: success with remains',
        { charge: '100', status: 'Partial', remains: 400, currency: 'NGN' },
        { status: 'success', providerReference: '23501', chargedKobo: 10_000n, remains: 400 },
      ],
      [
        'Partial with remains 0: success with remains 0',
        { status: 'partial', remains: '0' },
        { status: 'success', providerReference: '23501', remains: 0 },
      ],
      [
        'Canceled: failed',
        { charge: '0', status: 'Canceled', remains: '500', currency: 'NGN' },
        { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' },
      ],
      [
        'Cancelled: failed',
        { status: ' Cancelled ' },
        { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' },
      ],
      ['Pending: pending', { status: 'Pending' }, { status: 'pending', providerReference: '23501' }],
      ['In progress: pending', { status: 'In progress' }, { status: 'pending', providerReference: '23501' }],
      ['Processing: pending', { status: 'Processing' }, { status: 'pending', providerReference: '23501' }],
      [
        'an unknown word: pending',
        { status: 'Awaiting moderation' },
        { status: 'pending', providerReference: '23501' },
      ],
      // A Partial without a readable remains is unknown on a requery; here the order id must be kept.
      [
        'Partial with an unreadable remains: pending with the order id',
        { charge: '1', status: 'Partial', remains: 'n/a', currency: 'NGN' },
        { status: 'pending', providerReference: '23501' },
      ],
      [
        '"Incorrect order ID": pending with the order id',
        { error: 'Incorrect order ID' },
        { status: 'pending', providerReference: '23501' },
      ],
      [
        'an answer with a status that is not a string: pending with the order id',
        { status: 3 },
        { status: 'pending', providerReference: '23501' },
      ],
    ];
    for (const [what, answer, expected] of afterAdd) {
      it(`reads ${what} from the status query right after the add`, async () => {
        handler = byAction({ add: { order: 23501 }, status: answer });
        assert.deepEqual(await client().purchase(order), expected);
        assert.deepEqual(
          received.map((r) => new URLSearchParams(r.body).get('action')),
          ['add', 'status'],
        );
      });
    }

    const statusFails: [string, Handler, number][] = [
      ['5xx twice', json(503, {}), 3],
      ['a dropped connection twice', hangUp, 3],
      ['a body that is not JSON', raw(200, 'oops'), 2],
      ['a 404 without the panel error shape', raw(404, 'Not Found', 'text/plain'), 2],
      ['silence', silence, 2],
    ];
    for (const [what, failing, requests] of statusFails) {
      it(`answers pending with the order id when the status query after the add gets ${what}`, async () => {
        handler = inTurn(json(200, { order: 23501 }), failing);
        const outcome = await client({ timeoutMs: what === 'silence' ? 300 : 2_000 }).purchase(order);
        server.closeAllConnections();
        assert.deepEqual(outcome, { status: 'pending', providerReference: '23501' });
        // The add once; the status query once more after a 5xx or a dropped connection.
        assert.equal(received.length, requests);
        assert.equal(received.filter((r) => new URLSearchParams(r.body).get('action') === 'add').length, 1);
      });
    }

    it('asks the status once more after a 5xx right after the add, and reads the second answer', async () => {
      handler = inTurn(
        json(200, { order: 23501 }),
        json(502, {}),
        json(200, { status: 'Completed', charge: '1.00', currency: 'NGN' }),
      );
      assert.deepEqual(await client().purchase(order), {
        status: 'success',
        providerReference: '23501',
        chargedKobo: 100n,
      });
      assert.equal(received.length, 3);
    });

    for (const message of [
      'Not enough funds on balance',
      'Incorrect request',
      'Incorrect service ID',
      'Incorrect link',
      'Invalid link',
      'Quantity less than minimal 100',
      'Quantity more than maximal 10000',
      'You have active order with this link. Please wait until order being completed.',
    ]) {
      it(`reads the refusal "${message}" as failed`, async () => {
        handler = json(200, { error: message });
        const outcome = await client().purchase(order);
        assert.equal(outcome.status, 'failed');
        assert.ok(outcome.status === 'failed' && outcome.reason.includes(message), JSON.stringify(outcome));
      });
    }

    it('reads "Invalid API key" as failed (nothing was placed) and says it is our configuration', async () => {
      handler = json(200, { error: 'Invalid API key' });
      const outcome = await client().purchase(order);
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /API key.*configuration/);
    });

    it('reads a refusal sent with a 4xx the same way', async () => {
      handler = json(400, { error: 'Not enough funds on balance' });
      assert.equal((await client().purchase(order)).status, 'failed');
    });

    it('reads an error message it does not know as unknown: the order may exist', async () => {
      handler = json(200, { error: 'Server is busy, try later' });
      const outcome = await client().purchase(order);
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /Server is busy/);
    });

    const indefinite: [string, Handler][] = [
      ['a 500', json(500, { error: 'Internal error' })],
      ['a 502 HTML page', raw(502, '<html>Bad gateway</html>', 'text/html')],
      ['a 429', json(429, { message: 'slow down' })],
      ['a 404 without the panel error shape', raw(404, 'Not Found', 'text/plain')],
      ['a body that is not JSON', raw(200, '{"order": 1')],
      ['an answer with no order', json(200, { status: 'ok' })],
      ['an order id that is not an id', json(200, { order: -4 })],
      ['a dropped connection', hangUp],
    ];
    for (const [what, answer] of indefinite) {
      it(`reads ${what} as unknown, and never sends add twice`, async () => {
        handler = answer;
        const outcome = await client().purchase(order);
        assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
        assert.equal(received.length, 1);
      });
    }

    it('reads silence past the timeout as unknown', async () => {
      handler = silence;
      const outcome = await client({ timeoutMs: 100 }).purchase(order);
      server.closeAllConnections();
      assert.deepEqual(outcome, { status: 'unknown', reason: 'the panel did not answer within 100 ms' });
    });

    it('refuses a quantity or link it cannot send, without calling the panel', async () => {
      handler = json(200, { order: 1 });
      for (const bad of [
        { quantity: 0 },
        { quantity: 1.5 },
        { quantity: -3 },
        { link: '  ' },
        { serviceId: '' },
      ]) {
        const outcome = await client().purchase({ ...order, ...bad });
        assert.equal(outcome.status, 'failed', JSON.stringify(bad));
        assert.match(outcome.status === 'failed' ? outcome.reason : '', /refused locally/);
      }
      assert.equal(received.length, 0);
    });
  });

  describe('asking about an order (action=status)', () => {
    it('posts key, action=status and the order id', async () => {
      handler = json(200, {
        charge: '725.00',
        start_count: '10',
        status: 'Completed',
        remains: '0',
        currency: 'NGN',
      });
      assert.deepEqual(await requery('23501'), {
        status: 'success',
        providerReference: '23501',
        chargedKobo: 72_500n,
      });
      assert.deepEqual(form(), { key: 'panel-key-1', action: 'status', order: '23501' });
    });

    const answers: [string, Record<string, unknown>, unknown][] = [
      [
        'Partial: success, the charge and what remains visible',
        { charge: '0.27819', start_count: '3572', status: 'Partial', remains: '157', currency: 'USD' },
        { status: 'success', providerReference: '7', chargedKobo: 44_511n, remains: 157 },
      ],
      [
        'Partial with remains as a number: success with remains',
        { charge: '2', status: 'Partial', remains: 3, currency: 'NGN' },
        { status: 'success', providerReference: '7', chargedKobo: 200n, remains: 3 },
      ],
      [
        'Partial with remains as a padded string: success with remains',
        { status: 'PARTIAL', remains: ' 42 ' },
        { status: 'success', providerReference: '7', remains: 42 },
      ],
      [
        'Canceled: failed',
        { charge: '0', start_count: '0', status: 'Canceled', remains: '500', currency: 'NGN' },
        { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' },
      ],
      [
        'Cancelled (British spelling): failed',
        { status: 'Cancelled' },
        { status: 'failed', reason: 'the panel canceled the order: nothing was delivered' },
      ],
      [
        'Pending: pending',
        { charge: '1', status: 'Pending', remains: '500' },
        { status: 'pending', providerReference: '7' },
      ],
      [
        'In progress: pending',
        { charge: '1', status: 'In progress', remains: '20' },
        { status: 'pending', providerReference: '7' },
      ],
      [
        'Processing: pending',
        { charge: '1', status: 'Processing' },
        { status: 'pending', providerReference: '7' },
      ],
      [
        'an unknown word: pending, not a refund',
        { charge: '1', status: 'Awaiting moderation' },
        { status: 'pending', providerReference: '7' },
      ],
      [
        'Completed in a currency not configured: success without a charge',
        { charge: '2.5', status: 'completed', currency: 'EUR' },
        { status: 'success', providerReference: '7' },
      ],
      ['Completed without a charge', { status: 'Completed' }, { status: 'success', providerReference: '7' }],
      [
        '"Incorrect order ID" for its own order id: unknown, never the not_found that refunds',
        { error: 'Incorrect order ID' },
        {
          status: 'unknown',
          reason: 'the panel does not know its own order 7 (Incorrect order ID): check the panel account',
        },
      ],
    ];
    for (const [what, answer, expected] of answers) {
      it(`reads ${what}`, async () => {
        handler = json(200, answer);
        const outcome = await client({ koboPerCurrencyUnit: { USD: 160_000n } }).requery({
          reference: 'vtu_1',
          service: 'social',
          providerReference: '7',
        });
        assert.deepEqual(outcome, expected);
      });
    }

    for (const remains of [
      'n/a',
      '',
      '-5',
      '1.5',
      '1e3',
      -5,
      1.5,
      2 ** 53,
      null,
      true,
      { n: 1 },
      undefined,
    ]) {
      it(`reads a Partial with remains ${JSON.stringify(remains)} as unknown, for a person to check`, async () => {
        handler = json(200, { charge: '1', status: 'Partial', remains, currency: 'NGN' });
        const outcome = await requery('7');
        assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
        assert.match(
          outcome.status === 'unknown' ? outcome.reason : '',
          /order 7 Partial with a remains we cannot read .*a person must check/,
        );
      });
    }

    it('answers unknown without a call when the order id never came, and says why', async () => {
      const outcome = await requery(null);
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /takes no reference of ours/);
      assert.equal(received.length, 0);
    });

    const indefinite: [string, Handler][] = [
      ['another error', json(200, { error: 'Invalid API key' })],
      ['a body that is not JSON', raw(200, 'oops')],
      ['a status that is not a string', json(200, { status: 3 })],
      ['5xx twice', json(503, {})],
      ['silence', silence],
    ];
    for (const [what, answer] of indefinite) {
      it(`reads ${what} as unknown`, async () => {
        handler = answer;
        // The short deadline only for silence: on a starved machine an answer can take longer.
        const outcome = await client({ timeoutMs: what === 'silence' ? 300 : 2_000 }).requery({
          reference: 'r',
          service: 'social',
          providerReference: '7',
        });
        server.closeAllConnections();
        assert.equal(outcome.status, 'unknown', JSON.stringify(outcome));
        // A status query changes nothing, so a 5xx is asked once more; silence is not.
        if (what === '5xx twice') assert.equal(received.length, 2);
      });
    }

    it('asks once more after a 5xx or a dropped connection (status changes nothing)', async () => {
      for (const first of [json(502, {}), hangUp]) {
        received.length = 0;
        handler = inTurn(first, json(200, { status: 'Completed', charge: '1.00', currency: 'NGN' }));
        assert.deepEqual(await requery('9'), {
          status: 'success',
          providerReference: '9',
          chargedKobo: 100n,
        });
        assert.equal(received.length, 2);
      }
    });
  });

  describe('catalogue and balance', () => {
    const services = [
      {
        service: 1,
        name: 'IG Followers',
        type: 'Default',
        category: 'Instagram',
        rate: '0.45',
        min: '10',
        max: '10000',
        refill: true,
        cancel: false,
      },
      {
        service: '2',
        name: 'TikTok Views',
        type: 'Default',
        category: 'TikTok',
        rate: '0.00001',
        min: 100,
        max: 1000000,
        refill: false,
        cancel: true,
      },
      {
        service: 3,
        name: 'IG Comments',
        type: 'Custom Comments',
        category: 'Instagram',
        rate: '5',
        min: 5,
        max: 100,
      },
      { service: 4, name: 'Broken', type: 'Default', category: 'Instagram', rate: 'N/A', min: 10, max: 100 },
      { service: 5, name: 'YT Views', category: 'YouTube', rate: 1.2, min: 100, max: 5000 },
      { name: 'no id', category: 'x', rate: '1', min: 1, max: 2 },
    ];

    it('converts USD rates to kobo exactly, rounding a fraction of a kobo up, and keeps only orderable services', async () => {
      handler = byAction({ balance: { balance: '100.84292', currency: 'USD' }, services });
      const items = await client({ koboPerCurrencyUnit: { usd: 160_000n } }).socialServices();
      assert.deepEqual(items, [
        {
          serviceId: '1',
          name: 'IG Followers',
          category: 'Instagram',
          ratePer1000Kobo: 72_000n,
          min: 10,
          max: 10_000,
        },
        // 0.00001 × 160,000 = 1.6 kobo: rounded up to 2.
        {
          serviceId: '2',
          name: 'TikTok Views',
          category: 'TikTok',
          ratePer1000Kobo: 2n,
          min: 100,
          max: 1_000_000,
        },
        {
          serviceId: '5',
          name: 'YT Views',
          category: 'YouTube',
          ratePer1000Kobo: 192_000n,
          min: 100,
          max: 5000,
        },
      ]);
      assert.deepEqual(
        received.map((r) => new URLSearchParams(r.body).get('action')),
        ['balance', 'services'],
      );
    });

    it('converts NGN rates at 100 kobo a naira without configuration, and asks the currency once', async () => {
      handler = byAction({
        balance: { balance: '5000', currency: 'NGN' },
        services: [
          {
            service: 9,
            name: 'Likes',
            type: 'Default',
            category: 'TikTok',
            rate: '12.345',
            min: 50,
            max: 100,
          },
        ],
      });
      const social = client();
      const expected = [
        { serviceId: '9', name: 'Likes', category: 'TikTok', ratePer1000Kobo: 1235n, min: 50, max: 100 },
      ];
      assert.deepEqual(await social.socialServices(), expected);
      assert.deepEqual(await social.socialServices(), expected);
      assert.equal(received.filter((r) => new URLSearchParams(r.body).get('action') === 'balance').length, 1);
    });

    it('throws, naming the currency, when the panel prices in one that is not configured', async () => {
      handler = byAction({ balance: { balance: '10', currency: 'EUR' }, services });
      await assert.rejects(
        client({ koboPerCurrencyUnit: { USD: 160_000n } }).socialServices(),
        (error: unknown) => {
          assert.ok(error instanceof VtuProviderError);
          assert.match(error.message, /^social: services: the panel's currency EUR is not configured/);
          return true;
        },
      );
      await assert.rejects(client().balance(), /currency EUR is not configured/);
    });

    it('throws when the services answer is unusable or none of it can be read', async () => {
      for (const answer of [{ error: 'Invalid API key' }, { services: [] }, [{ service: 1 }]]) {
        handler = byAction({ balance: { balance: '1', currency: 'NGN' }, services: answer });
        await assert.rejects(client().socialServices(), VtuProviderError);
      }
      handler = json(500, {});
      await assert.rejects(client().socialServices(), /services|balance/);
    });

    it('reads the balance in kobo, rounding a fraction of a kobo down', async () => {
      handler = byAction({ balance: { balance: '100.84292', currency: 'USD' } });
      // 100.84292 × 160,000 = 16,134,867.2 kobo.
      assert.equal(await client({ koboPerCurrencyUnit: { USD: 160_000n } }).balance(), 16_134_867n);
      assert.deepEqual(form(), { key: 'panel-key-1', action: 'balance' });
      handler = byAction({ balance: { balance: '1000.5', currency: 'NGN' } });
      assert.equal(await client().balance(), 100_050n);
      handler = byAction({ balance: { balance: 'lots', currency: 'NGN' } });
      await assert.rejects(client().balance(), /unreadable amount/);
      handler = byAction({ balance: { error: 'Invalid API key' } });
      await assert.rejects(client().balance(), /refused: Invalid API key/);
    });
  });

  describe('what it is not', () => {
    it('offers social only, and throws for everything else', async () => {
      const social = client();
      assert.deepEqual([...social.services], ['social']);
      const calls: [string, () => Promise<unknown>][] = [
        ['networks', () => social.networks('airtime')],
        ['dataPlans', () => social.dataPlans('mtn')],
        ['cableProviders', () => social.cableProviders()],
        ['cablePlans', () => social.cablePlans('dstv')],
        ['discos', () => social.discos()],
        ['bettingCompanies', () => social.bettingCompanies()],
        ['educationItems', () => social.educationItems()],
        ['verifyCustomer', () => social.verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '1' })],
        [
          'purchase airtime',
          () =>
            social.purchase({
              service: 'airtime',
              reference: 'r',
              network: 'mtn',
              phone: '08031234567',
              amountKobo: 100n,
            }),
        ],
        ['requery data', () => social.requery({ reference: 'r', service: 'data', providerReference: '1' })],
      ];
      for (const [what, call] of calls) {
        await assert.rejects(
          (async () => call())(),
          (error: unknown) => error instanceof VtuProviderError && /does not offer/.test(error.message),
          what,
        );
      }
      assert.equal(received.length, 0);
    });

    it('refuses a configuration that would convert money wrongly', () => {
      const make = (koboPerCurrencyUnit: Record<string, bigint>) => () =>
        createSmmPanelClient({
          name: 'social',
          baseUrl: 'http://x',
          apiKey: 'k',
          timeoutMs: 1,
          koboPerCurrencyUnit,
        });
      assert.throws(make({ NGN: 1n }), /NGN must be 100/);
      assert.throws(make({ USD: 0n }), /USD must be positive/);
      assert.doesNotThrow(make({ NGN: 100n, USD: 160_000n }));
    });
  });
});

describe('toKobo', () => {
  it('multiplies exactly and rounds a fraction the asked way', () => {
    assert.equal(toKobo('0.45', 100n, 'up'), 45n);
    assert.equal(toKobo('12.345', 100n, 'up'), 1235n);
    assert.equal(toKobo('12.345', 100n, 'down'), 1234n);
    assert.equal(toKobo('-2.505', 100n, 'down'), -251n);
    assert.equal(toKobo('-2.505', 100n, 'up'), -250n);
    assert.equal(toKobo('123456789012345678.99', 100n, 'up'), 12_345_678_901_234_567_899n);
    assert.equal(toKobo('0.000000000001', 160_000n, 'up'), 1n);
    assert.equal(toKobo('0.000000000001', 160_000n, 'down'), 0n);
    for (const bad of ['', '1e-5', '1.', '.5', '0x10', '1,5', 'NaN'])
      assert.equal(toKobo(bad, 100n, 'up'), null, bad);
  });
});
