import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import { type AddressInfo, createConnection } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Paystack } from '@paystack/paystack-sdk';
import { createWorld, type World } from '../helpers/world.ts';
import { checkout, paystackBaseUrl, uniqueReference } from './helpers.ts';

// Paystack's own Node SDK (@paystack/paystack-sdk) against the sandbox provider, as an integrator
// would use it. The SDK sends its JSON bodies with no Content-Type (and chunked, with no length), which
// the sandbox must read as Paystack does.
//
// The SDK has no base-URL option: it always opens https://api.paystack.co through Node's global HTTPS
// agent. So for this test that agent hands each connection, in plain TCP, to a small forwarder that
// sends the request on to the sandbox's base URL unchanged: the same method, path, headers and body
// bytes, with only Host and the path prefix told apart. Nothing reaches the internet.

type SdkAnswer = { status: boolean; message: string; data?: Record<string, unknown> };

/** Forwards every request, as received, to `${base}${path}`, and records the request headers. */
async function startForwarder(base: string, seen: IncomingMessage['headers'][]): Promise<Server> {
  const target = new URL(base);
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    seen.push(incoming.headers);
    const headers = { ...incoming.headers, host: target.host };
    const forwarded = request(
      {
        host: target.hostname,
        port: Number(target.port),
        path: `${target.pathname}${incoming.url ?? ''}`,
        method: incoming.method,
        headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/** An HTTPS agent whose connections are plain TCP to the forwarder: the SDK's requests land there. */
class ForwardingAgent extends https.Agent {
  readonly port: number;
  constructor(port: number) {
    super({ keepAlive: false });
    this.port = port;
  }
  override createConnection(): ReturnType<typeof createConnection> {
    return createConnection({ host: '127.0.0.1', port: this.port });
  }
}

describe("Paystack's Node SDK against the sandbox payment provider", () => {
  let world: World;
  let forwarder: Server;
  let paystack: Paystack;
  const originalAgent = https.globalAgent;
  const seen: IncomingMessage['headers'][] = [];

  before(async () => {
    world = await createWorld();
    forwarder = await startForwarder(paystackBaseUrl(world), seen);
    https.globalAgent = new ForwardingAgent((forwarder.address() as AddressInfo).port);
    paystack = new Paystack(world.ctx.config.secrets.paymentSigning);
  });
  after(async () => {
    https.globalAgent = originalAgent;
    await new Promise((resolve) => forwarder?.close(resolve));
    await world?.close();
  });

  it('initializes a transaction, which the checkout pays and verify then reports', async () => {
    const reference = uniqueReference('sdk');
    const initialized = (await paystack.transaction.initialize({
      email: 'ada@example.com',
      amount: 150_000,
      reference,
    })) as SdkAnswer;
    assert.equal(initialized.status, true, initialized.message);
    assert.equal(initialized.data?.reference, reference);
    // The body really travelled as the SDK sends it: no Content-Type.
    const sent = seen.at(-1);
    assert.equal(sent?.['content-type'], undefined);
    assert.match(String(sent?.['user-agent']), /@paystack\/paystack-sdk/);

    await checkout(String(initialized.data?.authorization_url), 'pay');
    const verified = (await paystack.transaction.verify({ reference })) as SdkAnswer;
    assert.equal(verified.status, true, verified.message);
    assert.equal(verified.data?.status, 'success');
    assert.equal(verified.data?.amount, 150_000);
  });

  it('creates a customer and reads the balance', async () => {
    const customer = (await paystack.customer.create({
      email: 'bola@example.com',
      first_name: 'Bola',
      last_name: 'Bello',
      phone: '+2348031234567',
    })) as SdkAnswer;
    assert.equal(customer.status, true, customer.message);
    assert.equal(customer.data?.email, 'bola@example.com');
    assert.equal(customer.data?.first_name, 'Bola');

    const balance = (await paystack.balance.fetch()) as SdkAnswer & { data?: unknown };
    assert.equal(balance.status, true, balance.message);
    assert.ok(Array.isArray(balance.data));
  });

  it('lists the transactions of a period and fetches one by its id', async () => {
    const from = world.ctx.sandboxClock!.advance(1);
    const reference = uniqueReference('sdk-list');
    const initialized = (await paystack.transaction.initialize({
      email: 'chi@example.com',
      amount: 250_000,
      reference,
      metadata: JSON.stringify({ userId: 'u-sdk' }),
    })) as SdkAnswer;
    assert.equal(initialized.status, true, initialized.message);
    await checkout(String(initialized.data?.authorization_url), 'pay');

    const listed = (await paystack.transaction.list({
      from,
      to: world.ctx.clock.now(),
      perPage: 10,
      page: 1,
    })) as SdkAnswer & { data?: Array<Record<string, unknown>> };
    assert.equal(listed.status, true, listed.message);
    assert.deepEqual(
      listed.data?.map((t) => [t.reference, t.status, t.amount, t.metadata]),
      [[reference, 'success', 250_000, { userId: 'u-sdk' }]],
    );

    const id = String(listed.data?.[0]?.id);
    const fetched = (await paystack.transaction.fetch({ id })) as SdkAnswer;
    assert.equal(fetched.status, true, fetched.message);
    assert.equal(fetched.data?.reference, reference);
    assert.equal(fetched.data?.amount, 250_000);
    const unknown = (await paystack.transaction.fetch({ id: '999999999' })) as SdkAnswer;
    assert.equal(unknown.status, false);
  });

  it("answers the SDK's refusals in Paystack's shape", async () => {
    const refused = (await paystack.transaction.initialize({
      email: 'not-an-email',
      amount: 5_000,
    })) as SdkAnswer;
    assert.equal(refused.status, false);
    assert.match(refused.message, /email/i);
  });
});
