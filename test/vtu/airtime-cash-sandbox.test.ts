import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { systemClock } from '../../src/clock.ts';
import { createAirtimeCashClient } from '../../src/providers/vtu/airtime-cash-client.ts';
import { type Network, type VtuProvider, VtuProviderError } from '../../src/providers/vtu/vtu-provider.ts';
import {
  createSandboxAirtimeCashState,
  registerSandboxAirtimeCash,
  SANDBOX_AIRTIME_CASH_API_KEY,
  type SandboxAirtimeCashState,
  sandboxAirtimeCashPath,
} from '../../src/sandbox/vtu/airtime-cash.ts';
import { networkOfPhone } from '../../src/shared/prefixes.ts';
import { until } from '../helpers/until.ts';

// The real airtime-to-cash client over real HTTP against the sandbox provider alone, in a bare
// Fastify app that also plays the service's callback endpoint: the verify per network, every magic
// digit of the sending phone (the report's outcome, the status query's, and when the callback comes),
// the provider's refusals and how the client reads them, callback retries, and closing.

type Callback = { ref: string; service: string; network: string; amount: string; status: string };
type Provider = {
  app: FastifyInstance;
  state: SandboxAirtimeCashState;
  baseUrl: string;
  /** Every callback attempt the endpoint received, in order. */
  callbacks: Callback[];
  /** How many of the next callback attempts for a reference the endpoint answers 500. */
  failNext: Map<string, number>;
  /** References whose callbacks the endpoint takes and never answers. */
  hang: Set<string>;
};

const callbackPath = '/service/airtime-cash/callback';

async function startProvider(): Promise<Provider> {
  const app = Fastify({ logger: false });
  const state = createSandboxAirtimeCashState();
  state.callbackRetryDelaysMs = [20, 20];
  registerSandboxAirtimeCash(app, state, { clock: systemClock });
  const callbacks: Callback[] = [];
  const failNext = new Map<string, number>();
  const hang = new Set<string>();
  app.post(callbackPath, async (request, reply) => {
    const callback = request.body as Callback;
    callbacks.push(callback);
    if (hang.has(callback.ref)) return new Promise<never>(() => {});
    const failures = failNext.get(callback.ref) ?? 0;
    if (failures > 0) {
      failNext.set(callback.ref, failures - 1);
      return reply.code(500).send({ error: 'try later' });
    }
    return { ok: true };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, state, baseUrl, callbacks, failNext, hang };
}

const clientFor = (provider: Provider, options: { apiKey?: string } = {}): VtuProvider =>
  createAirtimeCashClient({
    name: 'bills',
    baseUrl: `${provider.baseUrl}${sandboxAirtimeCashPath}`,
    apiKey: options.apiKey ?? SANDBOX_AIRTIME_CASH_API_KEY,
    timeoutMs: 5_000,
    callbackUrl: `${provider.baseUrl}${callbackPath}`,
  });

let refs = 0;
const nextRef = (what: string) => `a2c_${what}_${++refs}`;

describe('airtime-to-cash sandbox, through the real client', () => {
  let provider: Provider;
  let a2c: VtuProvider;

  before(async () => {
    provider = await startProvider();
    a2c = clientFor(provider);
  });
  after(() => provider.app.close());

  const sale = (
    phone: string,
    naira: number,
    network: Network = 'mtn',
    reference = nextRef(phone.replace(/\D/g, '')),
  ) => ({
    service: 'airtime_to_cash' as const,
    reference,
    network,
    phone,
    amountKobo: BigInt(naira) * 100n,
    sendTo: provider.state.lines[network],
  });
  const requery = (reference: string) =>
    a2c.requery({ reference, service: 'airtime_to_cash', providerReference: null });
  const callbacksFor = (ref: string) => provider.callbacks.filter((c) => c.ref === ref);
  /**
   * Every callback scheduled before this call has had its chance: a digit-0 sale's callback, sent
   * after theirs, has arrived. So "no callback for X" asserted after it means none was sent.
   */
  const drainCallbacks = async () => {
    const sentinel = sale('08030000000', 100);
    assert.equal((await a2c.purchase(sentinel)).status, 'success');
    await until(() => callbacksFor(sentinel.reference).length === 1, 'the sentinel callback');
  };
  const get = async (path: string, query: Record<string, string>) => {
    const response = await fetch(
      `${provider.baseUrl}${sandboxAirtimeCashPath}/${path}?${new URLSearchParams(query)}`,
    );
    assert.equal(response.status, 200);
    return response.json();
  };

  it('verifies each network: a receiving line of its own prefix, as the wire writes it', async () => {
    for (const network of ['mtn', 'airtel', 'glo', '9mobile'] as const) {
      const line = await a2c.airtimeToCashLine(network);
      assert.match(line, /^0\d{10}$/);
      assert.equal(line, provider.state.lines[network]);
      assert.equal(networkOfPhone(line), network, `${network}'s line ${line}`);
    }
    assert.equal(new Set(Object.values(provider.state.lines)).size, 4);
    assert.deepEqual(
      await get('merchant-verify/', {
        apikey: SANDBOX_AIRTIME_CASH_API_KEY,
        serviceName: 'Airtime2Cash',
        network: 'glo',
      }),
      {
        code: 101,
        description: {
          Status: 'Completed',
          Phone_Number: '08057731940',
          Network: 'GLO',
          message:
            'GLO Airtime To Cash Service Is Available. Kindly Transfer The Exact Amount To Convert into Our Phone Number: 08057731940',
        },
      },
    );
  });

  it('hands on a receiving line written +234… or 234… in the local form, and refuses one that is no Nigerian mobile', async () => {
    const line = provider.state.lines.airtel;
    try {
      provider.state.lines.airtel = '+2348021958834';
      assert.equal(await a2c.airtimeToCashLine('airtel'), '08021958834');
      provider.state.lines.airtel = '2348021958834';
      assert.equal(await a2c.airtimeToCashLine('airtel'), '08021958834');
      provider.state.lines.airtel = '0121958834';
      await assert.rejects(a2c.airtimeToCashLine('airtel'), (error: unknown) => {
        assert.ok(error instanceof VtuProviderError);
        assert.match(error.message, /not a Nigerian mobile number/);
        return true;
      });
    } finally {
      provider.state.lines.airtel = line;
    }
  });

  it('any other last digit: Completed on the report, the callback sent, the credit in the balance', async () => {
    const before = await a2c.balance();
    const order = sale('08031234567', 1_000);
    assert.deepEqual(await a2c.purchase(order), {
      status: 'success',
      providerReference: order.reference,
      receivedKobo: 100_000n,
    });
    await until(() => callbacksFor(order.reference).length === 1, 'the callback');
    assert.deepEqual(callbacksFor(order.reference), [
      { ref: order.reference, service: 'Airtime2Cash', network: 'mtn', amount: '1000', status: 'Completed' },
    ]);
    await until(() => provider.state.orders.get(order.reference)?.callbacksDelivered === 1, 'the delivery');
    // MTN credits 85 % of the face value.
    assert.equal(await a2c.balance(), before + 85_000n);
    assert.deepEqual(await requery(order.reference), {
      status: 'success',
      providerReference: order.reference,
      receivedKobo: 100_000n,
    });
    // The status query is VTU Africa's webhook re-send: a Completed transaction's callback comes again.
    await until(() => callbacksFor(order.reference).length === 2, 'the re-sent callback');
    assert.equal(await a2c.balance(), before + 85_000n, 'credited once');
  });

  it('digit 2: Pending on the report with no callback; the first status query completes it and sends the callback', async () => {
    const before = await a2c.balance();
    const order = sale('08091234562', 2_000, '9mobile');
    assert.deepEqual(await a2c.purchase(order), { status: 'pending', providerReference: order.reference });
    await drainCallbacks();
    const balanceAfterReport = await a2c.balance();
    assert.deepEqual(callbacksFor(order.reference), [], 'no callback before the status query');
    assert.equal(provider.state.orders.get(order.reference)?.status, 'Pending');

    assert.deepEqual(await requery(order.reference), {
      status: 'success',
      providerReference: order.reference,
      receivedKobo: 200_000n,
    });
    await until(() => callbacksFor(order.reference).length === 1, 'the callback after the status query');
    assert.deepEqual(callbacksFor(order.reference)[0], {
      ref: order.reference,
      service: 'Airtime2Cash',
      network: '9mobile',
      amount: '2000',
      status: 'Completed',
    });
    // 9mobile credits 75 %, at the arrival and not before.
    assert.equal(await a2c.balance(), balanceAfterReport + 150_000n);
    assert.equal((await requery(order.reference)).status, 'success');
    assert.ok((await a2c.balance()) >= before + 150_000n);
  });

  it('digit 3: half of the declared amount arrives at once; the answers and the callback say so', async () => {
    const before = await a2c.balance();
    const order = sale('08031234563', 1_000);
    assert.deepEqual(await a2c.purchase(order), {
      status: 'success',
      providerReference: order.reference,
      receivedKobo: 50_000n,
    });
    await until(() => callbacksFor(order.reference).length === 1, 'the callback');
    assert.deepEqual(callbacksFor(order.reference), [
      { ref: order.reference, service: 'Airtime2Cash', network: 'mtn', amount: '500', status: 'Completed' },
    ]);
    // MTN credits 85 % of what arrived.
    assert.equal(await a2c.balance(), before + 42_500n);
    assert.deepEqual(await requery(order.reference), {
      status: 'success',
      providerReference: order.reference,
      receivedKobo: 50_000n,
    });
  });

  it('digit 1: Pending on the report and on every status query, and never a callback', async () => {
    const order = sale('08121234561', 5_000, 'airtel');
    assert.deepEqual(await a2c.purchase(order), { status: 'pending', providerReference: order.reference });
    for (let query = 0; query < 3; query++) {
      assert.deepEqual(await requery(order.reference), {
        status: 'pending',
        providerReference: order.reference,
      });
    }
    await drainCallbacks();
    assert.deepEqual(callbacksFor(order.reference), []);
    assert.equal(provider.state.orders.get(order.reference)?.status, 'Pending');
  });

  it('answers "Transaction Not Found" for a reference it never took, which the client reads as not_found', async () => {
    assert.deepEqual(await requery('a2c_never_reported'), { status: 'not_found' });
    assert.deepEqual(
      await get('merchant-verify/', {
        apikey: SANDBOX_AIRTIME_CASH_API_KEY,
        serviceName: 'Webhook',
        ref: 'a2c_never_reported',
      }),
      { code: 109, description: { message: 'Transaction Not Found' } },
    );
  });

  it('refuses a wrong API key everywhere: the report failed with a reason naming the configuration', async () => {
    const wrong = clientFor(provider, { apiKey: 'not-the-key' });
    const order = sale('08031234560', 1_000);
    const outcome = await wrong.purchase(order);
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.status === 'failed' ? outcome.reason : '', /API key \(check the configuration\)/);
    assert.equal(provider.state.orders.has(order.reference), false);
    await assert.rejects(wrong.airtimeToCashLine('mtn'), /Invalid API Key.*configuration/);
    await assert.rejects(wrong.balance(), /Invalid API Key/);
    // A status query refused for the key proves nothing about the transaction.
    const queried = await wrong.requery({
      reference: order.reference,
      service: 'airtime_to_cash',
      providerReference: null,
    });
    assert.equal(queried.status, 'unknown');
    assert.deepEqual(await get('airtime-cash/', { network: 'mtn' }), {
      code: 102,
      description: { message: 'Invalid API Key' },
    });
  });

  it('refuses an amount outside ₦100–₦50,000 (failed, nothing recorded) and takes the bounds', async () => {
    for (const naira of [99, 50_001]) {
      const order = sale('08031111110', naira);
      assert.deepEqual(await a2c.purchase(order), {
        status: 'failed',
        reason:
          'the airtime-to-cash provider refused the report: Invalid Amount. Amount Must Be Between 100 And 50000 Naira',
      });
      assert.equal(provider.state.orders.has(order.reference), false, `₦${naira}`);
    }
    for (const naira of [100, 50_000]) {
      assert.equal((await a2c.purchase(sale('08031111110', naira))).status, 'success', `₦${naira}`);
    }
  });

  it('reads a duplicate reference as unknown, and the status query finds the first report', async () => {
    const first = sale('08051234562', 500, 'glo');
    assert.equal((await a2c.purchase(first)).status, 'pending');
    const again = await a2c.purchase({ ...first, phone: '08051234567' });
    assert.equal(again.status, 'unknown');
    assert.match(again.status === 'unknown' ? again.reason : '', /Duplicate Transaction Reference/);
    assert.equal(provider.state.orders.get(first.reference)?.senderNumber, '08051234562');
    assert.deepEqual(await requery(first.reference), {
      status: 'success',
      providerReference: first.reference,
      receivedKobo: 50_000n,
    });
  });

  it('refuses a report naming another receiving line than the verify gave', async () => {
    const order = { ...sale('08031234567', 1_000), sendTo: provider.state.lines.glo };
    const outcome = await a2c.purchase(order);
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.status === 'failed' ? outcome.reason : '', /Wrong Site Phone Number/);
    assert.equal(provider.state.orders.has(order.reference), false);
  });

  it('refuses a network whose service is off, on the verify and on the report', async () => {
    provider.state.unavailable.add('glo');
    try {
      await assert.rejects(a2c.airtimeToCashLine('glo'), /GLO Airtime To Cash Service Is Not Available/);
      const outcome = await a2c.purchase(sale('08051234567', 1_000, 'glo'));
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /Not Available/);
      assert.equal((await a2c.purchase(sale('08031234567', 1_000))).status, 'success', 'mtn still on');
    } finally {
      provider.state.unavailable.delete('glo');
    }
  });

  it('refuses locally what it cannot put on the wire, sending nothing', async () => {
    const orders = provider.state.orders.size;
    for (const [order, why] of [
      [{ ...sale('0803123456', 1_000) }, /not a Nigerian mobile number/],
      [{ ...sale('08031234567', 1_000), amountKobo: 100_050n }, /whole number of naira/],
      [{ ...sale('08031234567', 1_000), sendTo: '12345' }, /receiving line 12345/],
      [{ ...sale('08031234567', 1_000), reference: 'has spaces' }, /reference/],
    ] as const) {
      const outcome = await a2c.purchase(order);
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /^refused locally/);
      assert.match(outcome.status === 'failed' ? outcome.reason : '', why);
    }
    assert.equal(provider.state.orders.size, orders);
  });

  it('takes a sending phone written +234… and reports it in the local form', async () => {
    const order = sale('+2348031234567', 1_000);
    assert.equal((await a2c.purchase(order)).status, 'success');
    const recorded = provider.state.orders.get(order.reference);
    assert.equal(recorded?.senderNumber, '08031234567');
    assert.equal(recorded?.sitePhone, provider.state.lines.mtn);
    assert.equal(recorded?.webhookUrl, `${provider.baseUrl}${callbackPath}`);
  });

  it('tries a refused callback again, and stops once it is taken', async () => {
    const order = sale('08031234568', 1_000);
    provider.failNext.set(order.reference, 1);
    assert.equal((await a2c.purchase(order)).status, 'success');
    await until(() => provider.state.orders.get(order.reference)?.callbacksDelivered === 1, 'the delivery');
    assert.equal(callbacksFor(order.reference).length, 2, 'the refused attempt and the taken one');
    await drainCallbacks();
    assert.equal(callbacksFor(order.reference).length, 2);
  });

  it('gives a callback up after its retries', async () => {
    const order = sale('08031234569', 1_000);
    provider.failNext.set(order.reference, 100);
    assert.equal((await a2c.purchase(order)).status, 'success');
    // The first attempt and the two retries of callbackRetryDelaysMs.
    await until(() => callbacksFor(order.reference).length === 3, 'three attempts');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(callbacksFor(order.reference).length, 3);
    assert.equal(provider.state.orders.get(order.reference)?.callbacksDelivered, 0);
  });

  it('reads its balance in naira as kobo', async () => {
    provider.state.balanceKobo = 1_234_567n;
    assert.equal(await a2c.balance(), 1_234_567n);
    assert.deepEqual(
      await get('merchant-verify', { apikey: SANDBOX_AIRTIME_CASH_API_KEY, serviceName: 'Balance' }),
      {
        code: 101,
        description: {
          Status: 'Completed',
          Balance: '12345.67',
          message: 'Your Wallet Balance Is N12345.67',
        },
      },
    );
  });

  it('refuses an unknown service name, a bad network and a missing parameter with their codes', async () => {
    const apikey = SANDBOX_AIRTIME_CASH_API_KEY;
    assert.deepEqual(await get('merchant-verify/', { apikey, serviceName: 'Electricity' }), {
      code: 111,
      description: { message: 'Invalid Service Name' },
    });
    assert.deepEqual(
      await get('merchant-verify/', { apikey, serviceName: 'Airtime2Cash', network: 'ntel' }),
      { code: 103, description: { message: 'Invalid Network. Use mtn, airtel, glo or 9mobile' } },
    );
    assert.deepEqual(
      await get('airtime-cash/', {
        apikey,
        network: 'mtn',
        sender: 'x',
        sendernumber: '08031234567',
        amount: '1000',
        sitephone: provider.state.lines.mtn,
      }),
      { code: 110, description: { message: 'Missing Or Invalid Parameter: ref' } },
    );
    assert.deepEqual(
      await get('airtime-cash/', {
        apikey,
        network: 'mtn',
        sender: 'x',
        sendernumber: '08031234567',
        amount: '1000',
        sitephone: provider.state.lines.mtn,
        ref: nextRef('bad-hook'),
        webhookURL: 'ftp://example.com/hook',
      }),
      { code: 110, description: { message: 'Missing Or Invalid Parameter: webhookURL' } },
    );
  });
});

describe('airtime-to-cash sandbox closing', () => {
  const order = (reference: string, sendTo: string) => ({
    service: 'airtime_to_cash' as const,
    reference,
    network: 'mtn' as const,
    phone: '08031234567',
    amountKobo: 100_000n,
    sendTo,
  });

  it('stops a callback waiting for its retry when the app closes, and closes at once', {
    timeout: 60_000,
  }, async () => {
    const provider = await startProvider();
    try {
      provider.state.callbackRetryDelaysMs = [60_000];
      provider.failNext.set('a2c_closing', 1);
      const a2c = clientFor(provider);
      assert.equal((await a2c.purchase(order('a2c_closing', provider.state.lines.mtn))).status, 'success');
      await until(() => provider.callbacks.length === 1, 'the first, refused, attempt');
      const started = performance.now();
      await provider.app.close();
      assert.ok(performance.now() - started < 5_000, 'close waited for the retry');
      assert.equal(provider.callbacks.length, 1);
    } finally {
      await provider.app.close();
    }
  });

  it('aborts a callback in flight to the app itself when the app closes', { timeout: 60_000 }, async () => {
    const provider = await startProvider();
    try {
      provider.state.callbackTimeoutMs = 60_000;
      provider.hang.add('a2c_in_flight');
      const a2c = clientFor(provider);
      assert.equal((await a2c.purchase(order('a2c_in_flight', provider.state.lines.mtn))).status, 'success');
      await until(() => provider.callbacks.length === 1, 'the callback to arrive');
      const started = performance.now();
      await provider.app.close();
      // Without the abort, the close would wait for the callback's own 60 s time limit.
      assert.ok(performance.now() - started < 5_000, 'close waited for the callback in flight');
      assert.equal(provider.state.orders.get('a2c_in_flight')?.callbacksDelivered, 0);
    } finally {
      await provider.app.close();
    }
  });
});
