import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import { createWorld, type World } from '../helpers/world.ts';
import { paystackBaseUrl, uniqueReference } from './helpers.ts';
import { describeErrors, loadSpec, type Spec } from './openapi.ts';

// How the sandbox payment provider reads request bodies: as Paystack does, JSON with or without a
// Content-Type (Paystack's own Node SDK, @paystack/paystack-sdk, sends its JSON with none), form
// bodies, and a clear 400 for a body that is not JSON. Sent with node:http, which adds no header of
// its own, so that "no Content-Type" is what really travels.

type Answer = { status: number; body: { status: boolean; message: string; data?: Record<string, unknown> } };

function send(
  world: World,
  method: 'GET' | 'POST',
  path: string,
  options: { contentType?: string; body?: string } = {},
): Promise<Answer> {
  const url = new URL(`${paystackBaseUrl(world)}${path}`);
  const headers: Record<string, string> = {
    authorization: `Bearer ${world.ctx.config.secrets.paymentSigning}`,
  };
  if (options.contentType !== undefined) headers['content-type'] = options.contentType;
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: url.hostname, port: Number(url.port), path: `${url.pathname}${url.search}`, method, headers },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as Answer['body'] }),
        );
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

describe('sandbox payment provider request bodies', () => {
  let world: World;
  let spec: Spec;
  before(async () => {
    world = await createWorld();
    spec = loadSpec();
  });
  after(() => world?.close());

  /** Checks an answer against Paystack's own document for that operation and status. */
  const assertPaystackShape = (method: string, template: string, answer: Answer) => {
    const validator = spec.responseValidator(method, template, answer.status);
    assert.ok(validator !== null, `${method} ${template} documents no ${answer.status}`);
    assert.ok(validator.validate(answer.body), describeErrors(validator.validate.errors));
  };

  it('reads a JSON body sent without a Content-Type, as Paystack does', async () => {
    const reference = uniqueReference('nohdr');
    const initialized = await send(world, 'POST', '/transaction/initialize', {
      body: JSON.stringify({ email: 'ada@example.com', amount: 250_000, reference }),
    });
    assert.equal(initialized.status, 200, JSON.stringify(initialized.body));
    assert.equal(initialized.body.data?.reference, reference);
    assertPaystackShape('POST', '/transaction/initialize', initialized);
    // What was read is what was sent: the amount and the email came through the body.
    const verified = await send(world, 'GET', `/transaction/verify/${reference}`);
    assert.equal(verified.status, 200);
    assert.equal(verified.body.data?.amount, 250_000);
    assert.equal((verified.body.data?.customer as { email?: string } | undefined)?.email, 'ada@example.com');
    assertPaystackShape('GET', '/transaction/verify/{reference}', verified);

    // Another operation of another group reads it the same way.
    const customer = await send(world, 'POST', '/customer', {
      body: JSON.stringify({ email: 'bola@example.com', first_name: 'Bola', last_name: 'Bello' }),
    });
    assert.equal(customer.status, 200, JSON.stringify(customer.body));
    assert.equal(customer.body.data?.first_name, 'Bola');
  });

  it('reads the same body the same way with application/json', async () => {
    const reference = uniqueReference('json');
    const initialized = await send(world, 'POST', '/transaction/initialize', {
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ email: 'ada@example.com', amount: 100_000, reference }),
    });
    assert.equal(initialized.status, 200, JSON.stringify(initialized.body));
    assert.equal(initialized.body.data?.reference, reference);
  });

  it('refuses a body that is not JSON with 400, in Paystack shape, whatever the Content-Type said', async () => {
    for (const contentType of [undefined, 'application/json']) {
      const answer = await send(world, 'POST', '/transaction/initialize', {
        ...(contentType === undefined ? {} : { contentType }),
        body: '{"email": "ada@example.com", "amount": ',
      });
      assert.equal(answer.status, 400, String(contentType));
      assert.deepEqual(answer.body, { status: false, message: 'Invalid JSON body' });
    }
  });

  it('still refuses a Content-Type it does not read', async () => {
    const answer = await send(world, 'POST', '/transaction/initialize', {
      contentType: 'application/xml',
      body: '<email>ada@example.com</email>',
    });
    assert.equal(answer.status, 415);
    assert.equal(answer.body.status, false);
  });
});
