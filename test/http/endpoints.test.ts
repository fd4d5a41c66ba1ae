import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AnyOperation } from '../../src/operation.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The endpoints beside the operations (API.md section 13): health, readiness, metrics, OpenAPI.

type OpenApiOperation = {
  operationId?: string;
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  parameters?: Array<{ in: string; name: string; required?: boolean }>;
  security?: unknown[];
};
type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  oneOf?: JsonSchema[];
};
type OpenApiDocument = {
  openapi: string;
  info: unknown;
  paths: Record<string, Record<string, OpenApiOperation>>;
};

describe('service endpoints', () => {
  let world: World;
  /** Every operation served: app.ts's list and the modules' (issue 27), which are built with the context. */
  let operations: readonly AnyOperation[];
  before(async () => {
    world = await createWorld();
    operations = world.ctx.operations;
  });
  after(() => world?.close());

  it('answers /healthz with 200', async () => {
    const response = await fetch(`${world.baseUrl}/healthz`);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { ok: true });
  });

  it('answers /readyz with 200 while the database answers', async () => {
    const response = await fetch(`${world.baseUrl}/readyz`);
    assert.equal(response.status, 200);
  });

  it('serves Prometheus text counting requests by operation route', async () => {
    for (let i = 0; i < 3; i++) {
      assert.equal((await fetch(`${world.baseUrl}/_serverFn/getWallet`)).status, 401);
    }
    assert.equal((await fetch(`${world.baseUrl}/no-such-path-xyz`)).status, 404);

    const response = await fetch(`${world.baseUrl}/metrics`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    assert.match(text, /^# TYPE billrail_http_requests_total counter$/m);
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith('billrail_http_requests_total{') &&
          l.includes('route="/_serverFn/getWallet"') &&
          l.includes('status="401"'),
      );
    assert.ok(line !== undefined, text);
    assert.match(line, /method="GET"/);
    assert.equal(Number(line.split(' ').at(-1)), 3);
    // Unknown paths share one label value, so scanners cannot grow the series without bound.
    assert.doesNotMatch(text, /no-such-path-xyz/);
    assert.match(text, /billrail_http_requests_total\{[^}]*route="unmatched"/);
  });

  it('serves an OpenAPI 3 document of every operation', async () => {
    const response = await fetch(`${world.baseUrl}/openapi.json`);
    assert.equal(response.status, 200);
    const doc = (await response.json()) as OpenApiDocument;
    assert.match(doc.openapi, /^3\./);
    assert.ok(operations.length > 0);

    for (const op of operations) {
      const path = doc.paths[`/_serverFn/${op.name}`];
      assert.ok(path !== undefined, `no path for ${op.name}`);
      assert.deepEqual(Object.keys(path), [op.method.toLowerCase()], op.name);
      const documented = path[op.method.toLowerCase()]!;
      assert.equal(documented.operationId, op.name);
      assert.deepEqual(
        documented.security,
        op.auth === 'public' ? [] : [{ bearer: [] }],
        `${op.name} security`,
      );
      if (op.method === 'POST') {
        const schema = documented.requestBody?.content?.['application/json']?.schema;
        assert.ok(schema !== undefined, `${op.name} has no JSON body`);
        assert.equal(schema.type, 'object');
        assert.deepEqual(Object.keys(schema.properties ?? {}), ['data'], op.name);
        assert.deepEqual(schema.required, ['data'], op.name);
        // An object, or one of several objects (createSchedule's order differs by service).
        const data = schema.properties?.data;
        const shapes = data?.oneOf ?? [data];
        assert.ok(shapes.length > 0, op.name);
        for (const shape of shapes) assert.equal(shape?.type, 'object', op.name);
        const key = documented.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key');
        assert.equal(key?.required, true, `${op.name} documents Idempotency-Key`);
      } else {
        assert.equal(documented.requestBody, undefined, op.name);
      }
    }
    // Nothing else is documented as an operation: health, metrics and the sandbox stay out.
    assert.deepEqual(Object.keys(doc.paths).sort(), operations.map((op) => `/_serverFn/${op.name}`).sort());
  });
});

describe('readiness without a database', () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world?.close());

  it('answers /readyz with 503 once the database is closed, while /healthz stays 200', async () => {
    assert.equal((await fetch(`${world.baseUrl}/readyz`)).status, 200);
    await world.ctx.database.close();
    const response = await fetch(`${world.baseUrl}/readyz`);
    assert.equal(response.status, 503);
    assert.equal((await fetch(`${world.baseUrl}/healthz`)).status, 200);
  });
});
