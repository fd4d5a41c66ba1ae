import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { ErrorCode } from '../../src/errors.ts';
import { type ErrorResponse, statusOf } from '../../src/http/errors.ts';
import { errorCodeCheck, operationErrorCodes } from '../../src/http/operation-errors.ts';
import { type AnyOperation, defineOperation } from '../../src/operation.ts';
import { createWorld, failure, post, signIn, type World } from '../helpers/world.ts';

// /openapi.json as a generated client reads it (issue 15): a valid OpenAPI 3 document in which every
// operation documents, per status, the error envelope of API.md section 2 with the codes it can
// answer, so that `error.code` is typed rather than `never`.

type Schema = {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  required?: string[];
  properties?: Record<string, Schema>;
  description?: string;
  minimum?: number;
  maximum?: number;
  format?: string;
};
type Response = {
  description: string;
  content?: Record<string, { schema: Schema }>;
  headers?: Record<string, { schema: Schema }>;
};
type Operation = {
  operationId: string;
  description?: string;
  tags?: string[];
  security?: unknown[];
  parameters?: Array<{ name: string; in: string; description?: string; schema: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, Response>;
};
type Document = {
  openapi: string;
  info: { license?: { name: string }; contact?: { name: string } };
  tags?: Array<{ name: string; description?: string }>;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};

describe('the OpenAPI document', () => {
  let world: World;
  let document: Document;
  /** Every operation served: app.ts's list and the modules' (issue 27), which are built with the context. */
  let operations: readonly AnyOperation[];
  before(async () => {
    world = await createWorld();
    operations = world.ctx.operations;
    const response = await fetch(`${world.baseUrl}/openapi.json`);
    assert.equal(response.status, 200);
    document = (await response.json()) as Document;
  });
  after(() => world?.close());

  const documented = (op: AnyOperation): Operation => {
    const operation = document.paths[`/_serverFn/${op.name}`]?.[op.method.toLowerCase()];
    assert.ok(operation !== undefined, `${op.name} is not documented`);
    return operation;
  };

  /** The schema a response refers to, resolved against components.schemas. */
  const schemaOf = (response: Response): Schema => {
    const schema = response.content?.['application/json']?.schema;
    assert.ok(schema !== undefined, `no JSON schema in ${JSON.stringify(response)}`);
    if (schema.$ref === undefined) return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = document.components.schemas[name];
    assert.ok(target !== undefined, `dangling ${schema.$ref}`);
    return target;
  };

  /** The codes an error response documents, after checking that it is the error envelope. */
  const codesOf = (op: AnyOperation, status: string): ErrorCode[] => {
    const response = documented(op).responses[status];
    assert.ok(response !== undefined, `${op.name} does not document ${status}`);
    const schema = schemaOf(response);
    assert.equal(schema.type, 'object', `${op.name} ${status}`);
    assert.deepEqual(schema.required, ['success', 'error'], `${op.name} ${status}`);
    assert.deepEqual(schema.properties?.success?.enum, [false], `${op.name} ${status}`);
    const error = schema.properties?.error;
    assert.deepEqual(error?.required, ['code', 'message'], `${op.name} ${status}`);
    assert.deepEqual(Object.keys(error?.properties ?? {}), ['code', 'message', 'errorId', 'details']);
    const code = error?.properties?.code;
    assert.equal(code?.type, 'string', `${op.name} ${status}`);
    assert.ok(Array.isArray(code.enum) && code.enum.length > 0, `${op.name} ${status} has no code enum`);
    return code.enum as ErrorCode[];
  };

  const errorStatuses = (op: AnyOperation): string[] =>
    Object.keys(documented(op).responses).filter((status) => Number(status) >= 400);

  it('passes a standard OpenAPI validator', async () => {
    // The validator dereferences the document it is given in place: it gets a copy.
    await SwaggerParser.validate(structuredClone(document) as never);
    assert.match(document.openapi, /^3\.0\./);
  });

  it('names the server, the licence, and that public operations need no token', () => {
    assert.deepEqual(document.servers, [{ url: world.baseUrl }]);
    assert.equal(typeof document.info.license?.name, 'string');
    const publicOps = operations.filter((op) => op.auth === 'public');
    assert.deepEqual(publicOps.map((op) => op.name).sort(), [
      'getPushPublicKey',
      'refreshSession',
      'requestOtp',
      'verifyOtp',
    ]);
    for (const op of operations) {
      assert.deepEqual(documented(op).security, op.auth === 'public' ? [] : [{ bearer: [] }], op.name);
    }
  });

  it('documents the errors every operation of its kind can get', () => {
    for (const op of operations) {
      const statuses = errorStatuses(op);
      for (const status of ['400', '429', '500', '503'])
        assert.ok(statuses.includes(status), `${op.name} ${status}`);
      // A public operation answers 401 only where its own rule does (a wrong sign-in code).
      const unauthenticated = op.auth !== 'public' || op.errors.includes('UNAUTHENTICATED');
      assert.equal(statuses.includes('401'), unauthenticated, `${op.name} 401`);
      assert.equal(statuses.includes('413'), op.method === 'POST', `${op.name} 413`);
      assert.ok(codesOf(op, '400').includes('VALIDATION_ERROR'), op.name);
      if (op.method === 'POST') {
        assert.ok(codesOf(op, '400').includes('IDEMPOTENCY_KEY_REQUIRED'), op.name);
        assert.ok(codesOf(op, '409').includes('IDEMPOTENCY_IN_PROGRESS'), op.name);
        assert.ok(codesOf(op, '422').includes('IDEMPOTENCY_KEY_REUSED'), op.name);
      }
      if (op.auth === 'admin') assert.ok(codesOf(op, '403').includes('FORBIDDEN'), op.name);
    }
  });

  it('documents each code under its status, and exactly the codes the operation can answer', () => {
    for (const op of operations) {
      const documentedCodes = errorStatuses(op).flatMap((status) =>
        codesOf(op, status).map((code) => {
          assert.equal(String(statusOf(code)), status, `${op.name}: ${code} under ${status}`);
          return code;
        }),
      );
      assert.deepEqual(documentedCodes.sort(), operationErrorCodes(op).sort(), op.name);
      for (const code of op.errors) assert.ok(documentedCodes.includes(code), `${op.name} ${code}`);
      // A status nothing raises is not documented: 200 and the errors are all there is.
      assert.deepEqual(
        Object.keys(documented(op).responses).filter((status) => Number(status) < 400),
        ['200'],
        op.name,
      );
    }
  });

  it('documents the rules of known operations', () => {
    const op = (name: string) => {
      const found = operations.find((o) => o.name === name);
      assert.ok(found !== undefined, name);
      return found;
    };
    const review = op('adminReviewKyc');
    assert.ok(codesOf(review, '404').includes('NOT_FOUND'));
    assert.ok(codesOf(review, '409').includes('CONFLICT'));

    const airtime = op('buyAirtime');
    assert.ok(codesOf(airtime, '409').includes('INSUFFICIENT_FUNDS'));
    // An operator's freeze (decision 0040) and the CBN daily limit (0044) refuse a payment out as the
    // PIN and the tier do.
    assert.deepEqual(codesOf(airtime, '403').sort(), [
      'ACCOUNT_FROZEN',
      'INVALID_PIN',
      'KYC_TIER_REQUIRED',
      'LIMIT_EXCEEDED',
      'PIN_NOT_SET',
    ]);
    assert.deepEqual(codesOf(airtime, '423'), ['PIN_LOCKED']);
    assert.ok(codesOf(airtime, '422').includes('NETWORK_MISMATCH'));
    // An operator's pause (decision 0042), beside the database's outage the router adds.
    assert.ok(codesOf(airtime, '503').includes('SERVICE_PAUSED'));

    const data = op('buyData');
    assert.ok(codesOf(data, '409').includes('PRICE_CHANGED'));

    for (const name of ['verifyMeter', 'verifyCableIUC', 'verifyBetAccount']) {
      assert.deepEqual(codesOf(op(name), '502'), ['UPSTREAM_UNAVAILABLE'], name);
      assert.deepEqual(codesOf(op(name), '404'), ['NOT_FOUND'], name);
    }
    // A read no rule refuses documents only what the router raises.
    assert.deepEqual(errorStatuses(op('getWallet')), ['400', '401', '429', '500', '503']);
    // A public operation can still answer 401 when its own rule says so (a wrong sign-in code).
    assert.deepEqual(codesOf(op('verifyOtp'), '401'), ['UNAUTHENTICATED']);
  });

  it('shares one component per set of codes instead of repeating the envelope', () => {
    const refs = new Set<string>();
    for (const op of operations) {
      for (const status of errorStatuses(op)) {
        const ref = documented(op).responses[status]?.content?.['application/json']?.schema.$ref;
        assert.ok(ref !== undefined, `${op.name} ${status} is not a reference`);
        refs.add(ref);
      }
    }
    assert.ok(refs.has('#/components/schemas/Error_NOT_FOUND'));
    assert.ok(refs.has('#/components/schemas/Error_VALIDATION_ERROR_or_IDEMPOTENCY_KEY_REQUIRED'));
    // The success responses are left as they were: inline, one per operation.
    assert.equal(
      documented(operations[0]!).responses['200']?.content?.['application/json']?.schema.$ref,
      undefined,
    );
  });

  /** Every property schema of the operations' inputs and successful answers, with its name and where. */
  const properties = (): Array<{ where: string; name: string; schema: Schema }> => {
    const found: Array<{ where: string; name: string; schema: Schema }> = [];
    const visit = (schema: unknown, where: string) => {
      if (Array.isArray(schema)) {
        for (const each of schema) visit(each, where);
        return;
      }
      if (typeof schema !== 'object' || schema === null) return;
      const node = schema as Record<string, unknown>;
      for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, Schema>)) {
        found.push({ where: `${where}.${name}`, name, schema: child });
        visit(child, `${where}.${name}`);
      }
      for (const key of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties']) visit(node[key], where);
    };
    for (const op of operations) {
      const operation = documented(op);
      for (const parameter of operation.parameters ?? []) {
        // A query parameter's description stands beside its schema, not in it.
        const schema = {
          ...parameter.schema,
          description: parameter.description ?? parameter.schema.description ?? '',
        };
        found.push({ where: `${op.name}?${parameter.name}`, name: parameter.name, schema });
      }
      visit(operation.requestBody?.content['application/json']?.schema, `${op.name}>`);
      visit(operation.responses['200']?.content?.['application/json']?.schema, `${op.name}<`);
    }
    return found;
  };

  it('describes every amount as naira with at most 2 decimals, between its bounds', () => {
    // The amounts of the contract, by the names they go by; each one, wherever it appears.
    const moneyNames = new Set([
      'amount',
      'balance',
      'balanceAfter',
      'lockedSavings',
      'lockedBonus',
      'checkinAccrued',
      'wholesale',
      'markup',
      'retail',
      'refunded',
      'faceValue',
      'rate',
      'payout',
      'penalty',
      'accrued',
      'reward',
      'withdrawn',
      'threshold',
      'flat',
      'charged',
      'refundable',
    ]);
    const amounts = properties().filter(
      ({ name, schema }) => moneyNames.has(name) && schema.type === 'number',
    );
    assert.ok(amounts.length > 50, `only ${amounts.length} amounts found`);
    for (const { where, schema } of amounts) {
      assert.match(schema.description ?? '', /naira with at most 2 decimals/, where);
      assert.equal(typeof schema.minimum, 'number', `${where} has no minimum`);
      assert.equal(typeof schema.maximum, 'number', `${where} has no maximum`);
      assert.ok(schema.minimum! >= 0 && schema.minimum! <= schema.maximum!, where);
      // 0.01 as a float divides hardly any amount exactly: a validator applying it refuses good ones.
      assert.equal((schema as { multipleOf?: number }).multipleOf, undefined, where);
    }
    // An operation's own limits are its bounds, and a request's amount is more than nothing.
    const bounds = (where: string) => {
      const found = amounts.find((a) => a.where === where);
      assert.ok(found !== undefined, where);
      return [found.schema.minimum, found.schema.maximum];
    };
    assert.deepEqual(bounds('buyAirtime>.data.amount'), [50, 50_000]);
    assert.deepEqual(bounds('createTopupIntent>.data.amount'), [100, 1_000_000]);
    assert.deepEqual(bounds('quoteAirtimeToCash?amount'), [100, 50_000]);
    assert.deepEqual(bounds('buyData>.data.amount'), [0.01, 9_999_999_999_999.99]);
    assert.deepEqual(bounds('getWallet<.data.balance'), [0, 9_999_999_999_999.99]);
    assert.doesNotMatch(JSON.stringify(document), /"multipleOf"/);
  });

  it('declares every instant as a date-time', () => {
    const instants = properties().filter(({ name }) => /[a-z]At$/.test(name));
    assert.ok(instants.length > 30, `only ${instants.length} instants found`);
    for (const { where, schema } of instants) {
      if (schema.type !== 'string') continue;
      assert.equal(schema.format, 'date-time', where);
    }
    // A string named ...At that is not one would be left above; there is none.
    assert.deepEqual(
      instants
        .filter(({ schema }) => schema.type !== 'string' && schema.type !== undefined)
        .map((i) => i.where),
      [],
    );
  });

  it('describes every operation and defines each tag at the top, with what it groups', () => {
    const defined = new Map((document.tags ?? []).map((tag) => [tag.name, tag.description]));
    for (const op of operations) {
      const operation = documented(op);
      assert.ok((operation.description ?? '').startsWith(op.summary), op.name);
      assert.match(
        operation.description ?? '',
        op.auth === 'public' ? /No token is needed/ : /Needs the bearer token/,
        op.name,
      );
      for (const tag of operation.tags ?? []) {
        assert.ok(
          (defined.get(tag) ?? '').length > 10,
          `tag ${tag} of ${op.name} is not defined with a description`,
        );
      }
    }
    assert.deepEqual(
      [...defined.keys()],
      [...new Set(operations.flatMap((op) => op.tags))].sort(),
      'the tags defined are exactly those in use',
    );
    assert.equal(typeof document.info.contact?.name, 'string');
  });

  it('declares the headers the answers come with', () => {
    const headersOf = (name: string, status: string) => {
      const op = operations.find((o) => o.name === name);
      assert.ok(op !== undefined, name);
      return Object.keys(documented(op).responses[status]?.headers ?? {}).sort();
    };
    const rateLimit = ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];
    assert.deepEqual(headersOf('buyAirtime', '200'), ['Idempotent-Replayed', ...rateLimit]);
    assert.deepEqual(headersOf('buyAirtime', '429'), [...rateLimit, 'Retry-After'].sort());
    assert.deepEqual(headersOf('buyAirtime', '423'), ['Idempotent-Replayed', 'Retry-After']);
    assert.deepEqual(headersOf('buyAirtime', '409'), ['Idempotent-Replayed']);
    assert.deepEqual(headersOf('buyAirtime', '500'), []);
    assert.deepEqual(headersOf('buyAirtime', '503'), ['Retry-After']);
    assert.deepEqual(headersOf('getWallet', '200'), rateLimit);
    // Answers that carry tokens are never kept, so never replayed.
    assert.deepEqual(headersOf('verifyOtp', '200'), rateLimit);
  });

  it('sends the headers it declares', async () => {
    const user = await signIn(world);
    const key = randomUUID();
    const send = () =>
      fetch(`${world.baseUrl}/_serverFn/createTopupIntent`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${user.accessToken}`,
          'content-type': 'application/json',
          'idempotency-key': key,
        },
        body: JSON.stringify({ data: { amount: 2500 } }),
      });
    const first = await send();
    assert.equal(first.status, 200);
    assert.equal(first.headers.get('idempotent-replayed'), null);
    for (const name of ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
      assert.match(first.headers.get(name) ?? '', /^\d+$/, name);
    const again = await send();
    assert.equal(again.status, 200);
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await again.json(), await first.json());
  });

  it('runs in a world whose router fails an undeclared code (NODE_ENV=test)', () => {
    assert.equal(world.ctx.config.env, 'test');
  });

  it('still sends error bodies as they were, details and all', async () => {
    const answer = failure(await post(world, 'verifyOtp', { phone: '08031234567', code: '000000' }));
    assert.equal(answer.status, 401);
    assert.equal(answer.code, 'UNAUTHENTICATED');
    assert.deepEqual(answer.details, { attemptsLeft: 0 });
  });
});

describe('an error code an operation does not declare', () => {
  const op = defineOperation({
    name: 'declaresNothing',
    method: 'GET',
    auth: 'user',
    summary: 'for the test',
    tags: [],
    input: z.object({}),
    output: z.object({}),
    errors: ['NOT_FOUND'],
    handler: async () => ({}),
  });
  const response = (code: ErrorCode): ErrorResponse => ({
    status: statusOf(code),
    body: { success: false, error: { code, message: 'refused', details: { attemptsLeft: 1 } } },
    retryAfterSeconds: undefined,
  });
  const loggedRequest = () => {
    const logged: unknown[] = [];
    const request = {
      log: { error: (...args: unknown[]) => logged.push(args) },
    } as unknown as FastifyRequest;
    return { request, logged };
  };

  it('passes a declared code and those of the router untouched, logging nothing', () => {
    const check = errorCodeCheck(op, operationErrorCodes(op), true);
    const { request, logged } = loggedRequest();
    for (const code of ['NOT_FOUND', 'UNAUTHENTICATED', 'VALIDATION_ERROR', 'RATE_LIMITED'] as const) {
      const given = response(code);
      assert.equal(check(given, request), given, code);
    }
    assert.deepEqual(logged, []);
  });

  it('is logged as an error and answered as it is in production', () => {
    const check = errorCodeCheck(op, operationErrorCodes(op), false);
    const { request, logged } = loggedRequest();
    const given = response('CONFLICT');
    assert.equal(check(given, request), given);
    assert.equal(logged.length, 1);
    assert.match(JSON.stringify(logged[0]), /"code":"CONFLICT"/);
  });

  it('fails the request with a 500 naming it under test, so a test of that path fails', () => {
    const check = errorCodeCheck(op, operationErrorCodes(op), true);
    const { request, logged } = loggedRequest();
    const answered = check(response('CONFLICT'), request);
    assert.equal(answered.status, 500);
    assert.equal(answered.body.error.code, 'INTERNAL');
    assert.match(answered.body.error.message, /declaresNothing answered CONFLICT/);
    assert.equal(typeof answered.body.error.errorId, 'string');
    assert.equal(logged.length, 1);
  });
});
