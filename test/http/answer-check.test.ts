import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { type AnswerCheck, checkAnswers, toJsonSchema } from '../helpers/answer-check.ts';
import { createWorld, get, ok, post, signIn, uniquePhone, type World } from '../helpers/world.ts';

// The check every test world makes of its answers (test/helpers/answer-check.ts, issue 39 item 9):
// here on an app of fake routes documented as the service documents its own (zod schemas, OpenAPI
// 3.0.3), each answering what its route says, so that the check is seen to catch a wrong answer
// and to pass a right one. A check that never fails would let every drift through.

const thing = z.object({
  count: z.number().int(),
  at: z.iso.datetime(),
  kind: z.enum(['plain', 'fancy']).nullable(),
  note: z.string().nullable(),
});

/** The answer each fake route sends, with the status it sends it with. */
const answers: Record<string, { status: number; body: unknown }> = {
  right: { status: 200, body: { count: 2, at: '2026-11-28T21:00:00.000Z', kind: 'plain', note: null } },
  wrongType: {
    status: 200,
    body: { count: 'two', at: '2026-11-28T21:00:00.000Z', kind: 'plain', note: 'x' },
  },
  nullInEnum: { status: 200, body: { count: 2, at: '2026-11-28T21:00:00.000Z', kind: null, note: null } },
  extraField: {
    status: 200,
    body: { count: 2, at: '2026-11-28T21:00:00.000Z', kind: 'fancy', note: null, secret: 'leaked' },
  },
  badInstant: { status: 200, body: { count: 2, at: 'yesterday', kind: 'fancy', note: null } },
  undocumentedStatus: {
    status: 418,
    body: { count: 2, at: '2026-11-28T21:00:00.000Z', kind: 'plain', note: null },
  },
  notJson: { status: 200, body: 'not json {' },
};

async function fakeApp(): Promise<{ app: FastifyInstance; check: AnswerCheck }> {
  const app = Fastify();
  app.setValidatorCompiler(validatorCompiler);
  // As the service: handlers send their JSON as it is, and the schemas only document it.
  app.setSerializerCompiler(() => (data) => (typeof data === 'string' ? data : JSON.stringify(data)));
  await app.register(swagger, {
    openapi: { openapi: '3.0.3', info: { title: 'fake', version: '1' } },
    transform: jsonSchemaTransform,
  });
  for (const [name, answer] of Object.entries(answers)) {
    app.get(
      `/fake/${name}`,
      { schema: { operationId: name, response: { 200: thing } } },
      async (_request, reply) =>
        reply
          // Typed as the documented status: answering another one is what a route here may do.
          .code(answer.status as 200)
          .type('application/json')
          .send(typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)),
    );
  }
  // A route with a path parameter, and one hidden from the document (which the check leaves be).
  app.get(
    '/fake/items/:id',
    { schema: { operationId: 'item', params: z.object({ id: z.string() }), response: { 200: thing } } },
    async () => JSON.stringify({ count: 1.5, at: '2026-11-28T21:00:00.000Z', kind: 'plain', note: null }),
  );
  app.get('/fake-hidden', { schema: { hide: true } }, async () => JSON.stringify({ anything: true }));
  const check = checkAnswers(app);
  await app.ready();
  return { app, check };
}

describe('the answer check of the test worlds', () => {
  let app: FastifyInstance;
  let check: AnswerCheck;
  before(async () => {
    ({ app, check } = await fakeApp());
  });
  after(() => app.close());

  /** The mismatches the answer of one route adds. */
  async function mismatchesOf(url: string) {
    const before = check.mismatches.length;
    await app.inject({ method: 'GET', url });
    return check.mismatches.slice(before);
  }

  it('passes an answer that matches its schema', async () => {
    const checked = check.checked;
    assert.deepEqual(await mismatchesOf('/fake/right'), []);
    assert.equal(check.checked, checked + 1);
  });

  it('catches a field of the wrong type, naming the operation, the status and the field', async () => {
    const [mismatch, ...more] = await mismatchesOf('/fake/wrongType');
    assert.equal(more.length, 0);
    assert.equal(mismatch?.operation, 'wrongType');
    assert.equal(mismatch?.status, 200);
    assert.match(mismatch?.problem ?? '', /\/count must be integer/);
  });

  it('catches a null that a nullable enum does not list', async () => {
    // zod's OpenAPI 3.0 output writes `.nullable()` on an enum as `nullable: true` beside an enum
    // without null: the drift a generated client found in markupOutput.provider.
    const [mismatch] = await mismatchesOf('/fake/nullInEnum');
    assert.match(mismatch?.problem ?? '', /\/kind must be equal to one of the allowed values/);
  });

  it('catches a field the schema does not declare, an instant that is none, and a body that is no JSON', async () => {
    assert.match(
      (await mismatchesOf('/fake/extraField'))[0]?.problem ?? '',
      /additional properties \(secret\)/,
    );
    assert.match(
      (await mismatchesOf('/fake/badInstant'))[0]?.problem ?? '',
      /\/at must match format "date-time"/,
    );
    assert.match((await mismatchesOf('/fake/notJson'))[0]?.problem ?? '', /no JSON/);
  });

  it('catches a status the operation does not document', async () => {
    const [mismatch] = await mismatchesOf('/fake/undocumentedStatus');
    assert.equal(mismatch?.status, 418);
    assert.match(mismatch?.problem ?? '', /status 418 is not documented/);
  });

  it('finds the operation of a path with a parameter', async () => {
    const [mismatch] = await mismatchesOf('/fake/items/abc');
    assert.equal(mismatch?.operation, 'item');
    assert.match(mismatch?.problem ?? '', /\/count must be integer/);
  });

  it('leaves be what the document does not describe: a hidden route, a path no route answers', async () => {
    const checked = check.checked;
    assert.deepEqual(await mismatchesOf('/fake-hidden'), []);
    assert.deepEqual(await mismatchesOf('/nowhere'), []);
    assert.equal(check.checked, checked);
  });

  it('fails with every mismatch listed', () => {
    assert.throws(
      () => check.assertNone(),
      (error: Error) =>
        /answers do not match \/openapi\.json/.test(error.message) &&
        /wrongType 200: .*\/count must be integer/.test(error.message) &&
        /undocumentedStatus 418: status 418 is not documented/.test(error.message),
    );
  });

  it('reads nullable as OpenAPI 3.0.3 does: null joins the type, not the enum', () => {
    assert.deepEqual(toJsonSchema({ type: 'string', nullable: true, enum: ['a'] }), {
      type: ['string', 'null'],
      enum: ['a'],
    });
    assert.deepEqual(toJsonSchema({ type: 'string', nullable: true, enum: ['a', null] }), {
      type: ['string', 'null'],
      enum: ['a', null],
    });
    assert.deepEqual(toJsonSchema({ nullable: true, anyOf: [{ type: 'string' }, { type: 'integer' }] }), {
      anyOf: [{ anyOf: [{ type: 'string' }, { type: 'integer' }] }, { type: 'null' }],
    });
    assert.deepEqual(toJsonSchema({ type: 'string', nullable: false }), { type: 'string' });
  });
});

describe('the answer check in a test world', () => {
  const adminPhone = uniquePhone();
  let world: World;
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());

  it('checks the service’s answers, the markup of every provider (provider: null) among them', async () => {
    const admin = await signIn(world, adminPhone);
    const asAdmin = { token: admin.accessToken };
    const checked = world.answers.checked;
    const markup = ok(
      await post<{ provider: string | null }>(world, 'adminSetMarkup', { service: 'data', flat: 5 }, asAdmin),
    );
    assert.equal(markup.provider, null);
    ok(await get(world, 'adminListPriceLevels', {}, asAdmin));
    // A refusal is an answer too: its status and envelope are checked like a success.
    assert.equal((await get(world, 'adminListPriceLevels', {})).status, 401);
    assert.equal(world.answers.checked, checked + 3);
    assert.deepEqual(world.answers.mismatches, []);
  });
});
