import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { paymentWebhookPath } from '../../src/http/payment-webhook-route.ts';
import { createWorld, type SignedIn, signIn, uniquePhone, type World } from '../helpers/world.ts';

// CORS_ORIGINS (API.md section 13): a front end on a listed origin may call the operations from a
// browser; any other origin, and the payment webhook from any origin, get no CORS answer at all, so
// the browser keeps the response from the page. Requests are sent as a browser would send them.

const appOrigin = 'https://app.example.com';
const otherOrigin = 'https://evil.example.net';

const corsHeaderNames = (response: Response): string[] =>
  [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

function preflight(world: World, path: string, origin: string, method = 'POST'): Promise<Response> {
  return fetch(`${world.baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': method,
      'access-control-request-headers': 'authorization,content-type,idempotency-key',
    },
  });
}

describe('CORS with an allow-list', () => {
  let world: World;
  let user: SignedIn;
  before(async () => {
    world = await createWorld({ env: { CORS_ORIGINS: `${appOrigin}, http://localhost:5173` } });
    user = await signIn(world, uniquePhone());
  });
  after(() => world?.close());

  it('answers the preflight of an operation from a listed origin', async () => {
    const response = await preflight(world, '/_serverFn/createTopupIntent', appOrigin);
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), appOrigin);
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /\bPOST\b/);
    const allowedHeaders = (response.headers.get('access-control-allow-headers') ?? '').toLowerCase();
    for (const header of ['authorization', 'content-type', 'idempotency-key'])
      assert.match(allowedHeaders, new RegExp(`\\b${header}\\b`));
    assert.equal(response.headers.get('access-control-max-age'), '600');
    // A cache in between must not hand one origin's answer to another.
    assert.match(response.headers.get('vary') ?? '', /\borigin\b/i);
    // The second listed origin is as good as the first; the preflight of a GET operation too.
    const local = await preflight(world, '/_serverFn/getWallet', 'http://localhost:5173', 'GET');
    assert.equal(local.status, 204);
    assert.equal(local.headers.get('access-control-allow-origin'), 'http://localhost:5173');
    // The document describing the operations is readable from there too (a docs viewer, a generator).
    const document = await fetch(`${world.baseUrl}/openapi.json`, { headers: { origin: appOrigin } });
    assert.equal(document.status, 200);
    assert.equal(document.headers.get('access-control-allow-origin'), appOrigin);
  });

  it('lets the page read the answer and its headers on the actual request', async () => {
    const response = await fetch(`${world.baseUrl}/_serverFn/createTopupIntent`, {
      method: 'POST',
      headers: {
        origin: appOrigin,
        authorization: `Bearer ${user.accessToken}`,
        'content-type': 'application/json',
        'idempotency-key': randomUUID(),
      },
      body: JSON.stringify({ data: { amount: 1500 } }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    assert.equal(response.headers.get('access-control-allow-origin'), appOrigin);
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const header of ['retry-after', 'idempotent-replayed', 'x-ratelimit-remaining'])
      assert.match(exposed, new RegExp(`\\b${header}\\b`));
    // The rate limit's headers the page is allowed to read are really sent.
    assert.match(response.headers.get('x-ratelimit-remaining') ?? '', /^\d+$/);
    // Tokens travel in a header, so no credentials mode is offered.
    assert.equal(response.headers.get('access-control-allow-credentials'), null);
    const body = (await response.json()) as { success: boolean; data: { reference: string } };
    assert.equal(body.success, true);
  });

  it('gives an unlisted origin no CORS header, on the preflight and on the request', async () => {
    const refused = await preflight(world, '/_serverFn/createTopupIntent', otherOrigin);
    assert.deepEqual(corsHeaderNames(refused), []);
    assert.equal(refused.status, 404);
    // The operation itself still answers (CORS is the browser's rule), but the browser keeps the
    // answer from the page: nothing allows that origin to read it.
    const response = await fetch(`${world.baseUrl}/_serverFn/getWallet`, {
      headers: { origin: otherOrigin, authorization: `Bearer ${user.accessToken}` },
    });
    assert.equal(response.status, 200);
    assert.deepEqual(corsHeaderNames(response), []);
    // An origin is compared whole: the listed host on another scheme or with a path is another origin.
    for (const near of ['http://app.example.com', `${appOrigin}.evil.example.net`, `${appOrigin}:8443`]) {
      assert.deepEqual(
        corsHeaderNames(await preflight(world, '/_serverFn/getWallet', near, 'GET')),
        [],
        near,
      );
    }
  });

  it('never answers a preflight of the payment webhook or a provider callback', async () => {
    for (const path of [paymentWebhookPath, '/api/public/vtu/airtime-cash/callback']) {
      const response = await preflight(world, path, appOrigin);
      assert.notEqual(response.status, 204, path);
      assert.deepEqual(corsHeaderNames(response), [], path);
    }
    // Nor a request to it from a listed origin: an unsigned body is refused, and without a CORS header.
    const posted = await fetch(`${world.baseUrl}${paymentWebhookPath}`, {
      method: 'POST',
      headers: { origin: appOrigin, 'content-type': 'application/json' },
      body: '{"event":"charge.success","data":{}}',
    });
    assert.equal(posted.status, 401);
    assert.deepEqual(corsHeaderNames(posted), []);
  });
});

describe('CORS by default', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world?.close());

  it('lists no origin, and sends no CORS header to any', async () => {
    assert.deepEqual(world.ctx.config.corsOrigins, []);
    const refused = await preflight(world, '/_serverFn/getWallet', appOrigin, 'GET');
    assert.equal(refused.status, 404);
    assert.deepEqual(corsHeaderNames(refused), []);
    const response = await fetch(`${world.baseUrl}/_serverFn/listAirtimeNetworks`, {
      headers: { origin: appOrigin },
    });
    assert.deepEqual(corsHeaderNames(response), []);
    assert.equal(response.headers.get('vary'), null);
  });
});
