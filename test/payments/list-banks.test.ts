import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { PaymentProviderError } from '../../src/providers/payments/payment-provider.ts';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import { sandboxBanks } from '../../src/sandbox/payments/wire.ts';
import {
  type Handler,
  json,
  type Received,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { paystackBaseUrl, paystackClient, sandboxPayments } from './helpers.ts';

// List Banks (GET /bank): the sandbox answers it as Paystack does, all at once or by cursor, and the
// client follows the cursor to the last page; then the client against a server that pages wrongly.

/** The call fails with PaymentProviderError, definite or not, with a message like `message`. */
async function rejectsWith(call: Promise<unknown>, definite: boolean, message: RegExp): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof PaymentProviderError, String(error));
    assert.equal(error.definite, definite, error.message);
    assert.match(error.message, message);
    return true;
  });
}

describe('List Banks at the sandbox provider', () => {
  let world: World;
  const key = () => `Bearer ${world.ctx.config.secrets.paymentSigning}`;
  const list = async (query: string, authorization = key()) =>
    fetch(`${paystackBaseUrl(world)}/bank${query}`, {
      headers: { authorization, accept: 'application/json' },
    });

  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('lists every Nigerian bank it keeps, retired ones included, in one answer without a cursor', async () => {
    const response = await list('?country=nigeria');
    assert.equal(response.status, 200);
    const body = (await response.json()) as {
      status: boolean;
      data: Array<Record<string, unknown>>;
      meta?: unknown;
    };
    assert.equal(body.status, true);
    assert.equal(body.meta, undefined);
    assert.deepEqual(
      body.data.map((b) => [b.code, b.name, b.active, b.is_deleted]),
      sandboxBanks.map((b) => [b.code, b.name, b.active, b.isDeleted]),
    );
    assert.ok(body.data.every((b) => b.country === 'Nigeria' && b.currency === 'NGN' && b.type === 'nuban'));
  });

  it('pages by cursor: perPage at a time, meta.next until the last page, previous back', async () => {
    const first = (await (await list('?country=nigeria&use_cursor=true&perPage=10')).json()) as {
      data: Array<{ id: number }>;
      meta: { next: string | null; previous: string | null; perPage: number };
    };
    assert.deepEqual(
      first.data.map((b) => b.id),
      sandboxBanks.slice(0, 10).map((b) => b.id),
    );
    assert.deepEqual(
      { previous: first.meta.previous, perPage: first.meta.perPage },
      { previous: null, perPage: 10 },
    );
    assert.ok(first.meta.next);
    const second = (await (
      await list(`?country=nigeria&use_cursor=true&perPage=10&next=${encodeURIComponent(first.meta.next)}`)
    ).json()) as typeof first;
    assert.deepEqual(
      second.data.map((b) => b.id),
      sandboxBanks.slice(10, 20).map((b) => b.id),
    );
    const back = (await (
      await list(`?use_cursor=true&perPage=10&next=${encodeURIComponent(second.meta.previous!)}`)
    ).json()) as typeof first;
    assert.deepEqual(back.data, first.data);
    const last = (await (
      await list(`?use_cursor=true&perPage=10&next=${encodeURIComponent(second.meta.next!)}`)
    ).json()) as typeof first;
    assert.deepEqual(
      last.data.map((b) => b.id),
      sandboxBanks.slice(20).map((b) => b.id),
    );
    assert.equal(last.meta.next, null);
  });

  it('lists no bank of another country, and refuses a bad cursor, a bad perPage and a wrong key', async () => {
    for (const query of ['?country=ghana', '?currency=KES']) {
      const body = (await (await list(query)).json()) as { data: unknown[] };
      assert.deepEqual(body.data, [], query);
    }
    for (const query of ['?use_cursor=true&next=not-a-cursor', '?use_cursor=true&perPage=0']) {
      const response = await list(query);
      assert.equal(response.status, 400, query);
      assert.equal(((await response.json()) as { status: boolean }).status, false);
    }
    const refused = await list('', 'Bearer sk_test_not_the_key');
    assert.equal(refused.status, 401);
  });

  it('is read whole by the client, which follows every cursor, however small the pages', async () => {
    const client = paystackClient(world);
    const expected = sandboxBanks.map((b) => ({
      code: b.code,
      name: b.name,
      active: b.active && !b.isDeleted,
      type: 'nuban',
      country: 'Nigeria',
      currency: 'NGN',
    }));
    assert.deepEqual(await client.listBanks(), expected);
    sandboxPayments(world).bankPageSizeMax = 3;
    try {
      assert.deepEqual(await client.listBanks(), expected);
    } finally {
      sandboxPayments(world).bankPageSizeMax = 100;
    }
  });
});

describe('List Banks against a provider that pages wrongly', () => {
  let server: ScriptedServer;
  let handler: Handler;
  const received: Received[] = [];
  const client = () =>
    createPaystackClient({ baseUrl: server.baseUrl, secretKey: 'sk_test_secret_1', timeoutMs: 2_000 });
  const entry = (code: string, name: string) => ({
    id: Number(code),
    name,
    slug: name.toLowerCase(),
    code,
    longcode: code,
    gateway: null,
    pay_with_bank: false,
    supports_transfer: true,
    available_for_direct_debit: false,
    active: true,
    is_deleted: false,
    country: 'Nigeria',
    currency: 'NGN',
    type: 'nuban',
    createdAt: '2020-01-01T00:00:00.000Z',
    updatedAt: '2020-01-01T00:00:00.000Z',
  });
  /** A page of one bank whose meta.next is `next`. */
  const page = (code: string, next: string | null) =>
    json(200, {
      status: true,
      message: 'Banks retrieved',
      data: [entry(code, `Bank ${code}`)],
      meta: { next, previous: null, perPage: 1 },
    });

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

  it('asks for the Nigerian list by cursor and sends each next cursor back until it is null', async () => {
    const pages: Record<string, Handler> = {
      '': page('001', 'c1'),
      c1: page('002', 'c2'),
      c2: page('003', null),
    };
    handler = (request, body, response) =>
      pages[new URL(request.url ?? '', 'http://x').searchParams.get('next') ?? '']!(request, body, response);
    const banks = await client().listBanks();
    assert.deepEqual(
      banks.map((b) => b.code),
      ['001', '002', '003'],
    );
    assert.deepEqual(
      received.map((r) => r.url),
      [
        '/bank?country=nigeria&use_cursor=true&perPage=100',
        '/bank?country=nigeria&use_cursor=true&perPage=100&next=c1',
        '/bank?country=nigeria&use_cursor=true&perPage=100&next=c2',
      ],
    );
    assert.ok(
      received.every((r) => r.method === 'GET' && r.headers.authorization === 'Bearer sk_test_secret_1'),
    );
  });

  it('reads an answer without meta as the whole list, and a deleted bank as inactive', async () => {
    handler = json(200, {
      status: true,
      message: 'Banks retrieved',
      data: [entry('044', 'Access Bank'), { ...entry('063', 'Diamond Bank'), is_deleted: true }],
    });
    assert.deepEqual(
      (await client().listBanks()).map((b) => [b.code, b.active]),
      [
        ['044', true],
        ['063', false],
      ],
    );
    assert.equal(received.length, 1);
  });

  it('gives up (indefinite) on a cursor given twice, on endless pages, and on a malformed bank', async () => {
    handler = page('001', 'same');
    await rejectsWith(client().listBanks(), false, /a cursor it gave before/);
    assert.equal(received.length, 2);

    let n = 0;
    handler = (request, body, response) => page('001', `c${++n}`)(request, body, response);
    await rejectsWith(client().listBanks(), false, /more than 20 pages/);

    handler = json(200, {
      status: true,
      message: 'ok',
      data: [{ ...entry('044', 'Access Bank'), code: 44 }],
    });
    await rejectsWith(client().listBanks(), false, /unexpected body \(at data\.0\.code\)/);
  });

  it('reads a refused key as definite, and repeats the GET once after a 5xx', async () => {
    handler = json(401, { status: false, message: 'Invalid key' });
    await rejectsWith(client().listBanks(), true, /refused our secret key \(401\)/);
    received.length = 0;
    let calls = 0;
    handler = (request, body, response) =>
      (++calls === 1 ? json(502, { message: 'bad gateway' }) : page('001', null))(request, body, response);
    assert.equal((await client().listBanks()).length, 1);
    assert.equal(received.length, 2);
  });
});
