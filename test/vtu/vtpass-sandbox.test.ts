import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createVtpassClient } from '../../src/providers/vtu/vtpass-client.ts';
import type { PurchaseRequest, RequeryOutcome, VtuProvider } from '../../src/providers/vtu/vtu-provider.ts';
import {
  createSandboxBillsState,
  fundSandboxBills,
  registerSandboxBills,
  SANDBOX_BILLS_API_KEY,
  SANDBOX_BILLS_PUBLIC_KEY,
  SANDBOX_BILLS_SECRET_KEY,
  type SandboxBillsState,
} from '../../src/sandbox/vtu/bills.ts';
import { purchaseReference } from '../../src/vtu/purchases.ts';
import { until } from '../helpers/until.ts';

// The real VTpass client against the sandbox bills provider over real HTTP, on a bare Fastify app
// with nothing else mounted: every outcome digit for every service, requery resolution, the float,
// the request-id rules, credentials, the catalogue and customer look-ups.

type Sandbox = { app: FastifyInstance; state: SandboxBillsState; baseUrl: string; clock: { at: Date } };

async function startSandbox(at = new Date()): Promise<Sandbox> {
  const app = Fastify();
  const state = createSandboxBillsState();
  const clock = { at };
  registerSandboxBills(app, state, { clock: { now: () => clock.at } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { app, state, baseUrl, clock };
}

function clientFor(
  sandbox: Sandbox,
  overrides: { timeoutMs?: number; apiKey?: string; publicKey?: string; secretKey?: string } = {},
): VtuProvider {
  return createVtpassClient({
    name: 'bills',
    baseUrl: `${sandbox.baseUrl}/__sandbox/vtu/bills/api`,
    apiKey: overrides.apiKey ?? SANDBOX_BILLS_API_KEY,
    publicKey: overrides.publicKey ?? SANDBOX_BILLS_PUBLIC_KEY,
    secretKey: overrides.secretKey ?? SANDBOX_BILLS_SECRET_KEY,
    timeoutMs: overrides.timeoutMs ?? 5_000,
  });
}

let counter = 0;
const referenceAt = (at: Date) => purchaseReference(at, `t${process.pid}n${++counter}`);

/** One purchase per service, for a recipient ending in the digit. */
function purchaseFor(service: string, digit: string, reference: string): PurchaseRequest {
  const phone = `0803123456${digit}`;
  switch (service) {
    case 'airtime':
      return { service, reference, network: 'mtn', phone, amountKobo: 50_000n };
    case 'data':
      return { service, reference, network: 'glo', planId: 'glo1000', phone };
    case 'cable':
      return {
        service,
        reference,
        provider: 'dstv',
        iuc: `702345678${digit}`,
        planId: 'dstv79',
        amountKobo: 1_900_000n,
        phone,
        subscriptionType: 'change',
      };
    case 'electricity':
      return {
        service,
        reference,
        disco: 'ikeja-electric',
        meter: `4501234567${digit}`,
        meterType: 'prepaid',
        amountKobo: 500_000n,
        phone,
      };
    case 'betting':
      return { service, reference, company: 'sportybet', customerId: `81234${digit}`, amountKobo: 150_000n };
    case 'education':
      return { service, reference, exam: 'waec', variation: 'waecdirect', quantity: 2, phone };
    default:
      throw new Error(service);
  }
}
/** What each purchaseFor order costs at the sandbox. */
const wholesaleKobo: Record<string, bigint> = {
  airtime: 50_000n,
  data: 100_000n,
  cable: 1_900_000n,
  electricity: 500_000n,
  betting: 150_000n,
  education: 780_000n,
};
const services = Object.keys(wholesaleKobo);

function assertDelivered(service: string, outcome: RequeryOutcome): void {
  assert.equal(
    outcome.status,
    'success',
    `${service}: ${JSON.stringify(outcome, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
  );
  assert.ok(outcome.status === 'success');
  assert.match(outcome.providerReference ?? '', /^\d{20,}$/);
  assert.equal(outcome.chargedKobo, wholesaleKobo[service]);
  if (service === 'electricity') {
    assert.match(outcome.token ?? '', /^\d{20}$/);
    assert.equal(outcome.units, '23.8 kWh', '₦5,000 at ₦209.50/kWh');
  } else assert.equal(outcome.token, undefined);
  if (service === 'education') {
    assert.equal(outcome.pins?.length, 2);
    for (const pin of outcome.pins ?? []) assert.match(pin, /^Serial: WRN\d{9}, Pin: \d{12}$/);
  } else assert.equal(outcome.pins, undefined);
}

describe('VTpass client against the sandbox bills provider', () => {
  let sandbox: Sandbox;
  let client: VtuProvider;
  const reference = () => referenceAt(sandbox.clock.at);
  const requery = (service: string, ref: string) =>
    client.requery({
      reference: ref,
      service: service as PurchaseRequest['service'],
      providerReference: null,
    });

  before(async () => {
    sandbox = await startSandbox();
    client = clientFor(sandbox);
  });
  after(() => sandbox.app.close());

  it('starts with ₦1,000,000 of float and reads it through the API and the control route', async () => {
    assert.equal(await client.balance(), 100_000_000n);
    const control = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/balance`);
    assert.deepEqual(await control.json(), { balance: 1_000_000 });
  });

  for (const service of services) {
    describe(service, () => {
      it('delivers at once for any other digit, and a requery says the same', async () => {
        const before = sandbox.state.balanceKobo;
        const ref = reference();
        const outcome = await client.purchase(purchaseFor(service, '7', ref));
        assertDelivered(service, outcome);
        assert.equal(sandbox.state.balanceKobo, before - wholesaleKobo[service]!);
        assert.deepEqual(await requery(service, ref), outcome);
      });

      it('fails on digit 1 without charging, and a requery says failed', async () => {
        const before = sandbox.state.balanceKobo;
        const ref = reference();
        const outcome = await client.purchase(purchaseFor(service, '1', ref));
        assert.equal(outcome.status, 'failed');
        assert.match(outcome.status === 'failed' ? outcome.reason : '', /016 TRANSACTION FAILED/);
        assert.equal(sandbox.state.balanceKobo, before);
        assert.equal((await requery(service, ref)).status, 'failed');
      });

      it('is pending on digit 2, and the first requery says delivered', async () => {
        const before = sandbox.state.balanceKobo;
        const ref = reference();
        const outcome = await client.purchase(purchaseFor(service, '2', ref));
        assert.equal(outcome.status, 'pending');
        assert.match(outcome.status === 'pending' ? (outcome.providerReference ?? '') : '', /^\d{20,}$/);
        assert.equal(sandbox.state.balanceKobo, before - wholesaleKobo[service]!);
        assertDelivered(service, await requery(service, ref));
        assertDelivered(service, await requery(service, ref));
        assert.equal(sandbox.state.balanceKobo, before - wholesaleKobo[service]!);
      });

      it('is pending on digit 3 (099), and the first requery says failed and returns the charge', async () => {
        const before = sandbox.state.balanceKobo;
        const ref = reference();
        assert.equal((await client.purchase(purchaseFor(service, '3', ref))).status, 'pending');
        assert.equal(sandbox.state.balanceKobo, before - wholesaleKobo[service]!);
        assert.equal((await requery(service, ref)).status, 'failed');
        assert.equal(sandbox.state.balanceKobo, before);
        assert.equal((await requery(service, ref)).status, 'failed');
        assert.equal(sandbox.state.balanceKobo, before, 'refunded once');
      });

      it('does not answer on digit 4 (unknown), though it delivered, as a requery shows', async () => {
        const before = sandbox.state.balanceKobo;
        const ref = reference();
        const outcome = await clientFor(sandbox, { timeoutMs: 200 }).purchase(purchaseFor(service, '4', ref));
        assert.equal(outcome.status, 'unknown');
        assert.match(outcome.status === 'unknown' ? outcome.reason : '', /did not answer within 200 ms/);
        assert.equal(sandbox.state.balanceKobo, before - wholesaleKobo[service]!);
        assertDelivered(service, await requery(service, ref));
      });
    });
  }

  it('ends a held request after state.timeoutHoldMs by dropping the connection', async () => {
    const holdMs = sandbox.state.timeoutHoldMs;
    sandbox.state.timeoutHoldMs = 20;
    try {
      const outcome = await client.purchase(purchaseFor('airtime', '4', reference()));
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /unreachable/);
    } finally {
      sandbox.state.timeoutHoldMs = holdMs;
    }
  });

  it('answers 014 to a reused request id (unknown: requery it), whatever became of the first', async () => {
    const ref = reference();
    const first = await client.purchase(purchaseFor('airtime', '7', ref));
    const before = sandbox.state.balanceKobo;
    const again = await client.purchase(purchaseFor('airtime', '7', ref));
    assert.equal(again.status, 'unknown');
    assert.match(again.status === 'unknown' ? again.reason : '', /014/);
    assert.equal(sandbox.state.balanceKobo, before, 'not charged twice');
    assert.deepEqual(await requery('airtime', ref), first);

    const failed = reference();
    await client.purchase(purchaseFor('airtime', '1', failed));
    assert.equal((await client.purchase(purchaseFor('airtime', '7', failed))).status, 'unknown');
  });

  it('refuses with 085 a request id more than five minutes from its Lagos clock', async () => {
    const at = sandbox.clock.at.getTime();
    const stale = referenceAt(new Date(at - 6 * 60_000));
    const early = referenceAt(new Date(at + 6 * 60_000));
    for (const ref of [stale, early]) {
      const outcome = await client.purchase(purchaseFor('airtime', '7', ref));
      assert.equal(outcome.status, 'failed');
      assert.match(outcome.status === 'failed' ? outcome.reason : '', /085 IMPROPER REQUEST ID/);
    }
    const skewed = referenceAt(new Date(at - 4 * 60_000));
    assert.equal((await client.purchase(purchaseFor('airtime', '7', skewed))).status, 'success');
    assert.deepEqual(await requery('airtime', stale), { status: 'not_found' });
  });

  it('requeries an id it never saw as not found', async () => {
    assert.deepEqual(await requery('airtime', reference()), { status: 'not_found' });
  });

  it('refuses with 018 what the float does not cover, without charging, until it is funded', async () => {
    const set = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 499.99 }),
    });
    assert.deepEqual(await set.json(), { balance: 499.99 });
    assert.equal(await client.balance(), 49_999n);
    const ref = reference();
    const outcome = await client.purchase(purchaseFor('airtime', '7', ref));
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.status === 'failed' ? outcome.reason : '', /018 LOW WALLET BALANCE/);
    assert.equal(await client.balance(), 49_999n);

    fundSandboxBills(sandbox.state, 1n);
    assert.equal(
      (await client.purchase(purchaseFor('airtime', '7', ref))).status,
      'success',
      'the id is free',
    );
    assert.equal(await client.balance(), 0n);

    const refused = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/balance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: 1.234 }),
    });
    assert.equal(refused.status, 400);
    fundSandboxBills(sandbox.state, 100_000_000n);
    const read = await fetch(`${sandbox.baseUrl}/__sandbox/providers/bills/balance`);
    assert.deepEqual(await read.json(), { balance: 1_000_000 });
  });

  it('refuses wrong credentials with 087, for GET and POST alike', async () => {
    const wrongSecret = clientFor(sandbox, { secretKey: 'SK_wrong' });
    const outcome = await wrongSecret.purchase(purchaseFor('airtime', '7', reference()));
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.status === 'failed' ? outcome.reason : '', /087 INVALID CREDENTIALS/);
    await assert.rejects(
      wrongSecret.verifyCustomer({ service: 'cable', provider: 'dstv', iuc: '7023456781' }),
      /087/,
    );
    assert.equal(await wrongSecret.balance(), await client.balance(), 'GET does not use the secret key');
    await assert.rejects(clientFor(sandbox, { publicKey: 'PK_wrong' }).balance(), /087 INVALID CREDENTIALS/);
    await assert.rejects(clientFor(sandbox, { apiKey: 'wrong' }).discos(), /087 INVALID CREDENTIALS/);
    // A public key is not a secret key.
    const swapped = clientFor(sandbox, { secretKey: SANDBOX_BILLS_PUBLIC_KEY });
    assert.equal((await swapped.purchase(purchaseFor('airtime', '7', reference()))).status, 'failed');
  });

  it('refuses unknown products, variations and amounts out of range as definite failures', async () => {
    const ref = reference;
    const cases: [PurchaseRequest, RegExp][] = [
      [{ ...purchaseFor('airtime', '7', ref()), amountKobo: 4_900n } as PurchaseRequest, /013/],
      [{ ...purchaseFor('airtime', '7', ref()), amountKobo: 5_000_100n } as PurchaseRequest, /017/],
      [{ ...purchaseFor('electricity', '7', ref()), amountKobo: 99_900n } as PurchaseRequest, /013/],
      [{ ...purchaseFor('electricity', '7', ref()), disco: 'nowhere-electric' } as PurchaseRequest, /012/],
      [{ ...purchaseFor('data', '7', ref()), planId: 'glo-nothing' } as PurchaseRequest, /010/],
      [{ ...purchaseFor('education', '7', ref()), quantity: 11 } as PurchaseRequest, /032/],
      [
        {
          service: 'education',
          reference: ref(),
          exam: 'jamb',
          variation: 'utme',
          quantity: 1,
          phone: '08031234567',
        },
        /011/,
      ],
    ];
    const before = sandbox.state.balanceKobo;
    for (const [request, code] of cases) {
      const outcome = await client.purchase(request);
      assert.equal(outcome.status, 'failed', String(code));
      assert.match(outcome.status === 'failed' ? outcome.reason : '', code);
    }
    assert.equal(sandbox.state.balanceKobo, before);
  });

  it("answers each DisCo's token fields, and no token for postpaid", async () => {
    for (const disco of ['eko-electric', 'kano-electric', 'abuja-electric']) {
      const outcome = await client.purchase({
        ...(purchaseFor('electricity', '7', reference()) as Extract<
          PurchaseRequest,
          { service: 'electricity' }
        >),
        disco,
        amountKobo: 1_000_000n,
      });
      assert.ok(outcome.status === 'success', disco);
      assert.match(outcome.token ?? '', /^\d{20}$/, disco);
      assert.match(outcome.units ?? '', /^47\.7( kWh)?$/, disco);
    }
    const postpaid = await client.purchase({
      ...(purchaseFor('electricity', '7', reference()) as Extract<
        PurchaseRequest,
        { service: 'electricity' }
      >),
      meterType: 'postpaid',
    });
    assert.ok(postpaid.status === 'success');
    assert.equal(postpaid.token, undefined);
    assert.equal(postpaid.chargedKobo, 500_000n);
  });

  it('delivers NECO tokens and a JAMB pin in their own shapes', async () => {
    const neco = await client.purchase({
      service: 'education',
      reference: reference(),
      exam: 'neco',
      variation: 'neco-result',
      quantity: 3,
      phone: '08031234567',
    });
    assert.ok(neco.status === 'success');
    assert.equal(neco.pins?.length, 3);
    for (const pin of neco.pins ?? []) assert.match(pin, /^NECO\d{12}$/);
    assert.equal(neco.chargedKobo, 390_000n);

    const jamb = await client.purchase({
      service: 'education',
      reference: reference(),
      exam: 'jamb',
      variation: 'de',
      quantity: 1,
      phone: '08031234567',
      profileId: '0123456789',
    });
    assert.ok(jamb.status === 'success');
    assert.equal(jamb.pins?.length, 1);
    assert.match(jamb.pins?.[0] ?? '', /^\d{15}$/);
  });

  it('6: delivered and charged without the token or pins, which the next requery brings', async () => {
    const withheld = async (request: PurchaseRequest) => {
      const before = sandbox.state.balanceKobo;
      const first = await client.purchase(request);
      assert.ok(first.status === 'success', `${JSON.stringify(request.service)}: delivered`);
      assert.equal(first.token, undefined);
      assert.equal(first.pins, undefined);
      assert.ok(sandbox.state.balanceKobo < before, 'charged at once, as any delivery');
      const charged = sandbox.state.balanceKobo;
      const later = await requery(request.service, request.reference);
      assert.ok(later.status === 'success');
      assert.equal(later.providerReference, first.providerReference, 'the same order');
      assert.equal(sandbox.state.balanceKobo, charged, 'the requery charges nothing more');
      const again = await requery(request.service, request.reference);
      assert.deepEqual(again, later, 'released once, then answered the same on every requery');
      return later;
    };
    for (const disco of ['ikeja-electric', 'eko-electric', 'kano-electric']) {
      const request = {
        ...(purchaseFor('electricity', '6', reference()) as Extract<
          PurchaseRequest,
          { service: 'electricity' }
        >),
        disco,
      };
      const later = await withheld(request);
      assert.match(later.status === 'success' ? (later.token ?? '') : '', /^\d{20}$/, disco);
    }
    const waec = await withheld(purchaseFor('education', '6', reference()));
    assert.equal(waec.status === 'success' && waec.pins?.length, 2);
    const neco = await withheld({
      service: 'education',
      reference: reference(),
      exam: 'neco',
      variation: 'neco-result',
      quantity: 2,
      phone: '08031234566',
    });
    assert.equal(neco.status === 'success' && neco.pins?.length, 2);
    const jamb = await withheld({
      service: 'education',
      reference: reference(),
      exam: 'jamb',
      variation: 'de',
      quantity: 1,
      phone: '08031234566',
      profileId: '0123456789',
    });
    assert.match(jamb.status === 'success' ? (jamb.pins?.[0] ?? '') : '', /^\d{15}$/);

    // Nothing to hold back: a postpaid meter and an airtime top-up are ordinary deliveries.
    const postpaid = await client.purchase({
      ...(purchaseFor('electricity', '6', reference()) as Extract<
        PurchaseRequest,
        { service: 'electricity' }
      >),
      meterType: 'postpaid',
    });
    assert.equal(postpaid.status, 'success');
    assert.equal((await client.purchase(purchaseFor('airtime', '6', reference()))).status, 'success');
  });

  it("6 on the wire: VTpass's delivered answer with the token null and no purchased_code", async () => {
    const ref = reference();
    const headers = {
      'content-type': 'application/json',
      'api-key': SANDBOX_BILLS_API_KEY,
      'secret-key': SANDBOX_BILLS_SECRET_KEY,
    };
    const pay = await fetch(`${sandbox.baseUrl}/__sandbox/vtu/bills/api/pay`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        request_id: ref,
        serviceID: 'ikeja-electric',
        billersCode: '45012345676',
        variation_code: 'prepaid',
        amount: 2000,
        phone: '08031234567',
      }),
    });
    const paid = (await pay.json()) as Record<string, unknown> & {
      content: { transactions: { status: string } };
    };
    assert.equal(paid.code, '000');
    assert.equal(paid.content.transactions.status, 'delivered');
    assert.equal(paid.purchased_code, '');
    assert.equal(paid.token, null);
    assert.ok(typeof paid.units === 'string', 'the units are known at the vend');
    const requeried = await fetch(`${sandbox.baseUrl}/__sandbox/vtu/bills/api/requery`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ request_id: ref }),
    });
    const later = (await requeried.json()) as Record<string, unknown>;
    assert.match(String(later.token), /^\d{20}$/);
    assert.match(String(later.purchased_code), /^Token : [\d ]+$/);
  });

  it('verifies customers by number, and a number ending in 9 is not found', async () => {
    const cable = await client.verifyCustomer({ service: 'cable', provider: 'gotv', iuc: '7023456782' });
    assert.ok(cable.found);
    assert.match(cable.name, /^[A-Z]+ [A-Z]+$/);
    assert.match(cable.details.Current_Bouquet ?? '', /^GOtv /);
    assert.match(cable.details.Renewal_Amount ?? '', /^\d+$/);
    const again = await client.verifyCustomer({ service: 'cable', provider: 'gotv', iuc: '7023456782' });
    assert.ok(again.found);
    assert.equal(again.name, cable.name, 'the same number, the same name');
    // A renewal pays the amount verify quoted.
    const renewal = await client.purchase({
      service: 'cable',
      reference: reference(),
      provider: 'gotv',
      iuc: '7023456782',
      planId: cable.details.Current_Bouquet_Code ?? '',
      amountKobo: BigInt(cable.details.Renewal_Amount ?? '0') * 100n,
      phone: '08031234567',
      subscriptionType: 'renew',
    });
    assert.equal(renewal.status, 'pending', 'the IUC ends in 2');

    const meter = await client.verifyCustomer({
      service: 'electricity',
      disco: 'ikeja-electric',
      meter: '45012345678',
      meterType: 'prepaid',
    });
    assert.ok(meter.found);
    assert.equal(meter.details.Meter_Number, '45012345678');
    assert.equal(meter.details.Min_Purchase_Amount, '1000');
    assert.equal(meter.details.Meter_Type, 'PREPAID');
    const bettor = await client.verifyCustomer({
      service: 'betting',
      company: 'bet9ja',
      customerId: '812345',
    });
    assert.ok(bettor.found);
    assert.equal(bettor.details.Customer_ID, '812345');

    for (const lookup of [
      { service: 'cable', provider: 'dstv', iuc: '7023456789' },
      { service: 'electricity', disco: 'eko-electric', meter: '45012345679', meterType: 'postpaid' },
      { service: 'betting', company: 'bet9ja', customerId: '812349' },
    ] as const) {
      const answer = await client.verifyCustomer(lookup);
      assert.equal(answer.found, false, lookup.service);
      assert.match(answer.found ? '' : answer.reason, /invalid/);
    }
    await assert.rejects(
      client.verifyCustomer({ service: 'cable', provider: 'nowhere-tv', iuc: '7023456781' }),
      /012 PRODUCT DOES NOT EXIST/,
    );
  });

  it('serves the whole catalogue in the shapes the client normalises', async () => {
    assert.deepEqual(
      (await client.networks('airtime')).map((n) => n.id),
      ['mtn', 'glo', 'airtel', '9mobile'],
    );
    assert.deepEqual(
      (await client.networks('data')).map((n) => n.id),
      ['mtn', 'glo', 'airtel', '9mobile'],
    );
    for (const network of ['mtn', 'glo', 'airtel', '9mobile'] as const) {
      const plans = await client.dataPlans(network);
      assert.ok(plans.length >= 5, network);
      for (const plan of plans) {
        assert.equal(plan.network, network);
        assert.ok(plan.wholesaleKobo > 0n);
        assert.notEqual(plan.validity, null, plan.name);
      }
    }
    const sme = (await client.dataPlans('mtn')).find((plan) => plan.planId === 'mtn-sme-1gb');
    assert.deepEqual(sme, {
      planId: 'mtn-sme-1gb',
      network: 'mtn',
      planType: 'SME',
      name: 'MTN SME 1GB - 30 days',
      validity: '30 days',
      wholesaleKobo: 28_950n,
    });

    assert.deepEqual(
      (await client.cableProviders()).map((p) => p.id),
      ['dstv', 'gotv', 'startimes', 'showmax'],
    );
    const startimes = await client.cablePlans('startimes');
    assert.ok(
      startimes.some((plan) => plan.planId === 'nova' && plan.wholesaleKobo === 190_000n),
      'varations',
    );
    const dstv = await client.cablePlans('dstv');
    assert.ok(dstv.some((plan) => plan.planId === 'dstv79' && plan.wholesaleKobo === 1_900_000n));
    assert.ok((await client.cablePlans('showmax')).length >= 2);

    const discos = await client.discos();
    assert.equal(discos.length, 12);
    assert.ok(discos.some((d) => d.id === 'ikeja-electric' && /IKEDC/.test(d.name)));
    assert.ok((await client.bettingCompanies()).some((c) => c.id === 'bet9ja' && c.name === 'Bet9ja'));

    const exams = await client.educationItems();
    assert.deepEqual(
      exams.map((item) => `${item.exam}/${item.variation}`),
      [
        'waec/waecdirect',
        'waec-registration/waec-registration',
        'neco/neco-result',
        'nabteb/nabteb-result',
        'jamb/utme',
        'jamb/de',
      ],
    );
    assert.equal(exams[0]!.wholesaleKobo, 390_000n);
  });
});

describe('sandbox bills provider lifecycle', () => {
  it('accepts a Lagos-time request id around midnight UTC, and refuses one written in UTC', async () => {
    const sandbox = await startSandbox(new Date('2026-01-01T23:30:00Z'));
    try {
      const client = clientFor(sandbox);
      const lagos = purchaseReference(sandbox.clock.at, 'midnight1');
      assert.equal(lagos, '202601020030midnight1');
      assert.equal((await client.purchase(purchaseFor('airtime', '5', lagos))).status, 'success');
      const utc = await client.purchase(purchaseFor('airtime', '5', '202601012330midnight2'));
      assert.equal(utc.status, 'failed');
      assert.match(utc.status === 'failed' ? utc.reason : '', /085/);
    } finally {
      await sandbox.app.close();
    }
  });

  it('releases every held request at once when the app closes', async () => {
    const sandbox = await startSandbox();
    sandbox.state.timeoutHoldMs = 600_000;
    const client = clientFor(sandbox, { timeoutMs: 600_000 });
    const pending = [
      client.purchase(purchaseFor('airtime', '4', referenceAt(sandbox.clock.at))),
      client.purchase(purchaseFor('electricity', '4', referenceAt(sandbox.clock.at))),
    ];
    // Both orders are recorded before the app is closed, so both requests are held.
    await until(() => sandbox.state.orders.size === 2, 'both orders recorded');
    const started = Date.now();
    await sandbox.app.close();
    const outcomes = await Promise.all(pending);
    assert.ok(Date.now() - started < 5_000, 'close did not wait for the hold');
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'unknown');
      assert.match(outcome.status === 'unknown' ? outcome.reason : '', /unreachable/);
    }
  });
});
