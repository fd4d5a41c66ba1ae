import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pino from 'pino';
import { errorCodes } from '../../src/errors.ts';
import { BODY_LIMIT_BYTES } from '../../src/http/router.ts';
import {
  createWorld,
  failure,
  get,
  ok,
  post,
  readSms,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';

// The transport and envelope of API.md sections 1 and 2, seen from a client: what a request that is
// not exactly right gets back, and that nothing a client can send turns into a 5xx.

type RawResponse = { status: number; headers: Headers; text: string; json: unknown };

async function raw(world: World, path: string, init: RequestInit = {}): Promise<RawResponse> {
  const response = await fetch(`${world.baseUrl}${path}`, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, headers: response.headers, text, json };
}

type ErrorEnvelope = {
  success: false;
  error: { code: string; message: string; errorId?: string; details?: Record<string, unknown> };
};

/** The error of an error envelope; fails when the answer is not exactly that shape. */
function envelopeError(response: RawResponse): ErrorEnvelope['error'] {
  const body = response.json as ErrorEnvelope | undefined;
  assert.ok(body !== undefined, `not JSON (${response.status}): ${response.text.slice(0, 200)}`);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'success'], response.text.slice(0, 200));
  assert.equal(body.success, false);
  assert.equal(typeof body.error.code, 'string');
  assert.equal(typeof body.error.message, 'string');
  return body.error;
}

function issuePaths(error: ErrorEnvelope['error']): unknown[] {
  const issues = (error.details as { issues?: Array<{ path: unknown[] }> } | undefined)?.issues;
  assert.ok(Array.isArray(issues), `details.issues missing: ${JSON.stringify(error)}`);
  return issues.map((issue) => issue.path);
}

const jsonHeaders = (extra: Record<string, string> = {}) => ({
  'content-type': 'application/json',
  'idempotency-key': randomUUID(),
  ...extra,
});

/** Sends bytes as they are over a fresh socket and returns the status code of the answer. */
function rawHttp(world: World, request: string): Promise<number> {
  const url = new URL(world.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => socket.end(request));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      answer += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(answer);
      if (match === null) reject(new Error(`no HTTP status in ${JSON.stringify(answer.slice(0, 100))}`));
      else resolve(Number(match[1]));
    });
  });
}

describe('HTTP contract', () => {
  const logLines: string[] = [];
  let world: World;
  let user: SignedIn;
  let auth: Record<string, string>;

  before(async () => {
    // The service's log goes to memory so that a test can find an errorId in it.
    const logger = pino({ level: 'error' }, { write: (line: string) => void logLines.push(line) });
    world = await createWorld({ logger });
    user = await signIn(world);
    auth = { authorization: `Bearer ${user.accessToken}` };
  });
  after(() => world?.close());

  it('answers a success as {success: true, data}', async () => {
    const response = await raw(world, '/_serverFn/getMe', { headers: auth });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const body = response.json as { success: boolean; data: { id: string } };
    assert.deepEqual(Object.keys(body).sort(), ['data', 'success']);
    assert.equal(body.success, true);
    assert.equal(body.data.id, user.userId);

    const updated = ok(
      await post<{ firstName: string }>(
        world,
        'updateProfile',
        { firstName: 'Ada' },
        { token: user.accessToken },
      ),
    );
    assert.equal(updated.firstName, 'Ada');
  });

  it('answers an unknown operation with 404 NOT_FOUND, for GET and POST', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const response = await raw(world, '/_serverFn/noSuchOperation', {
        method,
        ...(method === 'POST' ? { headers: jsonHeaders(auth), body: '{"data":{}}' } : { headers: auth }),
      });
      assert.equal(response.status, 404, method);
      assert.equal(envelopeError(response).code, 'NOT_FOUND');
    }
  });

  it('answers an operation called with the wrong method with 404', async () => {
    const getOfPost = await raw(world, '/_serverFn/requestOtp');
    assert.equal(getOfPost.status, 404);
    assert.equal(envelopeError(getOfPost).code, 'NOT_FOUND');

    const postOfGet = await raw(world, '/_serverFn/getMe', {
      method: 'POST',
      headers: jsonHeaders(auth),
      body: '{"data":{}}',
    });
    assert.equal(postOfGet.status, 404);
    assert.equal(envelopeError(postOfGet).code, 'NOT_FOUND');

    const put = await raw(world, '/_serverFn/updateProfile', {
      method: 'PUT',
      headers: jsonHeaders(auth),
      body: '{"data":{}}',
    });
    assert.equal(put.status, 404);
    assert.equal(envelopeError(put).code, 'NOT_FOUND');
  });

  it('refuses an unknown query parameter of a GET operation with 400 naming it', async () => {
    const response = await raw(world, '/_serverFn/getMe?bogus=1', { headers: auth });
    assert.equal(response.status, 400);
    const error = envelopeError(response);
    assert.equal(error.code, 'VALIDATION_ERROR');
    assert.ok(
      issuePaths(error).some((path) => Array.isArray(path) && path.at(-1) === 'bogus'),
      JSON.stringify(error),
    );
  });

  it('refuses an unknown field in data with 400 whose issues name its path', async () => {
    const response = await raw(world, '/_serverFn/updateProfile', {
      method: 'POST',
      headers: jsonHeaders(auth),
      body: JSON.stringify({ data: { firstName: 'Ada', bogus: 1, other: true } }),
    });
    assert.equal(response.status, 400);
    const error = envelopeError(response);
    assert.equal(error.code, 'VALIDATION_ERROR');
    const paths = issuePaths(error);
    assert.ok(
      paths.some((p) => JSON.stringify(p) === '["data","bogus"]'),
      JSON.stringify(paths),
    );
    assert.ok(
      paths.some((p) => JSON.stringify(p) === '["data","other"]'),
      JSON.stringify(paths),
    );
    // Nothing was executed.
    const me = ok(await get<{ firstName: string | null }>(world, 'getMe', {}, { token: user.accessToken }));
    assert.equal(me.firstName, 'Ada');
  });

  it('names the field of a wrong value, and refuses an unknown field beside data', async () => {
    const wrongType = await raw(world, '/_serverFn/updateProfile', {
      method: 'POST',
      headers: jsonHeaders(auth),
      body: JSON.stringify({ data: { email: 'not an email' } }),
    });
    assert.equal(wrongType.status, 400);
    assert.deepEqual(issuePaths(envelopeError(wrongType)), [['data', 'email']]);

    const beside = await raw(world, '/_serverFn/updateProfile', {
      method: 'POST',
      headers: jsonHeaders(auth),
      body: JSON.stringify({ data: {}, extra: 1 }),
    });
    assert.equal(beside.status, 400);
    assert.ok(issuePaths(envelopeError(beside)).some((p) => JSON.stringify(p) === '["extra"]'));
  });

  it('refuses a body without data with 400', async () => {
    for (const body of ['{}', '{"phone":"08031234567"}']) {
      const response = await raw(world, '/_serverFn/requestOtp', {
        method: 'POST',
        headers: jsonHeaders(),
        body,
      });
      assert.equal(response.status, 400, body);
      const error = envelopeError(response);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(
        issuePaths(error).some((p) => Array.isArray(p) && p[0] === 'data'),
        JSON.stringify(error),
      );
    }
  });

  it('refuses a body that is not JSON, an empty body and other content types with 400', async () => {
    const cases: Array<[string, Record<string, string>, string | Uint8Array]> = [
      ['not JSON', jsonHeaders(), '{"data": {"phone": '],
      ['single quotes', jsonHeaders(), "{'data': {}}"],
      ['empty body', jsonHeaders(), ''],
      ['text/plain', jsonHeaders({ 'content-type': 'text/plain' }), '{"data":{"phone":"08031234567"}}'],
      ['form', jsonHeaders({ 'content-type': 'application/x-www-form-urlencoded' }), 'data=1'],
      ['no content type', { 'idempotency-key': randomUUID() }, new TextEncoder().encode('{"data":{}}')],
    ];
    for (const [label, headers, body] of cases) {
      const response = await raw(world, '/_serverFn/requestOtp', { method: 'POST', headers, body });
      assert.equal(response.status, 400, `${label}: ${response.text}`);
      assert.equal(envelopeError(response).code, 'VALIDATION_ERROR', label);
    }
  });

  it('refuses __proto__ and constructor.prototype keys with 400 saying so, not "not valid JSON"', async () => {
    for (const [body, key] of [
      ['{"data":{"phone":"08031234567","__proto__":{"admin":true}}}', '__proto__'],
      ['{"__proto__":{"x":1},"data":{}}', '__proto__'],
      ['{"data":{"constructor":{"prototype":{"admin":true}}}}', 'constructor'],
    ] as const) {
      const response = await raw(world, '/_serverFn/requestOtp', {
        method: 'POST',
        headers: jsonHeaders(),
        body,
      });
      assert.equal(response.status, 400, response.text);
      const error = envelopeError(response);
      assert.equal(error.code, 'VALIDATION_ERROR');
      assert.ok(error.message.includes(key), `${body}: ${error.message}`);
      assert.doesNotMatch(error.message, /not valid JSON/);
    }
  });

  it('answers headers or a query string over the limit with 431 in the envelope and closes, and the client goes on', async () => {
    // One keep-alive connection, as a browser or an HTTP client pool would hold.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const ask = (path: string, headers: Record<string, string> = {}) =>
        new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>(
          (resolve, reject) => {
            const url = new URL(path, world.baseUrl);
            const request = http.get(url, { agent, headers: { ...auth, ...headers } }, (response) => {
              let text = '';
              response.setEncoding('utf8');
              response.on('data', (chunk: string) => {
                text += chunk;
              });
              response.on('end', () =>
                resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
              );
            });
            request.on('error', reject);
          },
        );
      assert.equal((await ask('/_serverFn/getMe')).status, 200);
      for (const [label, path, headers] of [
        ['query string', `/_serverFn/getMe?q=${'x'.repeat(40_000)}`, {}],
        ['header', '/_serverFn/getMe', { 'x-padding': 'y'.repeat(40_000) }],
      ] as const) {
        const answer = await ask(path, headers);
        assert.equal(answer.status, 431, `${label}: ${answer.text.slice(0, 200)}`);
        assert.match(String(answer.headers['content-type']), /^application\/json/, label);
        assert.equal(answer.headers.connection, 'close', label);
        const body = JSON.parse(answer.text) as ErrorEnvelope;
        assert.equal(body.success, false);
        assert.equal(body.error.code, 'PAYLOAD_TOO_LARGE', label);
        // The next request through the same client works (on a new connection).
        assert.equal((await ask('/_serverFn/getMe')).status, 200, `after the ${label}`);
      }
    } finally {
      agent.destroy();
    }
  });

  it('refuses a body over 64 KiB with 413 PAYLOAD_TOO_LARGE, and takes one of exactly 64 KiB', async () => {
    assert.equal(BODY_LIMIT_BYTES, 64 * 1024);
    // {"data":{"phone":"xxx..."}} padded to an exact size: at the limit it is read (and refused by
    // the schema), one byte more and it is not read at all.
    const sized = (bytes: number) => {
      const shell = '{"data":{"phone":""}}';
      return `{"data":{"phone":"${'x'.repeat(bytes - shell.length)}"}}`;
    };
    const atLimit = await raw(world, '/_serverFn/requestOtp', {
      method: 'POST',
      headers: jsonHeaders(),
      body: sized(BODY_LIMIT_BYTES),
    });
    assert.equal(atLimit.status, 400);
    assert.equal(envelopeError(atLimit).code, 'VALIDATION_ERROR');

    const over = await raw(world, '/_serverFn/requestOtp', {
      method: 'POST',
      headers: jsonHeaders(),
      body: sized(BODY_LIMIT_BYTES + 1),
    });
    assert.equal(over.status, 413);
    assert.equal(envelopeError(over).code, 'PAYLOAD_TOO_LARGE');

    // Without a Content-Length (chunked), the limit holds while the body streams in.
    const chunks = [
      new TextEncoder().encode('{"data":{"phone":"'),
      new Uint8Array(BODY_LIMIT_BYTES).fill(120),
    ];
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    const chunked = await raw(world, '/_serverFn/requestOtp', {
      method: 'POST',
      headers: jsonHeaders(),
      body: stream,
      duplex: 'half',
    } as RequestInit);
    assert.equal(chunked.status, 413);
    assert.equal(envelopeError(chunked).code, 'PAYLOAD_TOO_LARGE');
  });

  it('turns an unexpected failure into a bare 500 whose errorId is logged with the stack', async () => {
    // A real failure: the table requestOtp writes to is gone. (Renamed rather than dropped, so that
    // it can be put back and the rest of the file keeps a working world.)
    await sql`alter table otp_codes rename to otp_codes_gone`.execute(world.ctx.db);
    let response: RawResponse;
    try {
      response = await raw(world, '/_serverFn/requestOtp', {
        method: 'POST',
        headers: jsonHeaders(),
        body: JSON.stringify({ data: { phone: uniquePhone() } }),
      });
    } finally {
      await sql`alter table otp_codes_gone rename to otp_codes`.execute(world.ctx.db);
    }
    assert.equal(response.status, 500);
    const error = envelopeError(response);
    assert.deepEqual(Object.keys(error).sort(), ['code', 'errorId', 'message']);
    assert.equal(error.code, 'INTERNAL');
    assert.match(error.errorId ?? '', /^[0-9a-f-]{36}$/);
    const leaked = /otp_codes|relation|does not exist|insert|select|stack|\.ts\b|node_modules|\n\s+at /i;
    assert.doesNotMatch(response.text, leaked);

    const logged = logLines
      .map((line) => JSON.parse(line) as { errorId?: string; err?: { message?: string; stack?: string } })
      .filter((entry) => entry.errorId === error.errorId);
    assert.equal(logged.length, 1, `errorId ${error.errorId} not in the log`);
    assert.match(logged[0]?.err?.stack ?? '', /otp_codes[\s\S]*\n\s+at /);

    // Put back, the same operation works again.
    ok(await post(world, 'requestOtp', { phone: uniquePhone() }));
  });

  it('never answers 5xx to malformed requests', async () => {
    // The bad inputs tried (every one at several operations, signed in and not):
    // - bodies: empty, whitespace, null, true, 0, -1, a string, [], [{data}], truncated JSON, single
    //   quotes, trailing garbage, NaN/undefined literals, data as null/[]/string/number/true/1e999,
    //   fields of the wrong type (null, number, array, object, {"$ne": ""}), SQL in a string, NUL
    //   characters in values and keys, a lone surrogate, full-width and Arabic-Indic digits, a 60 KB
    //   string, a 5,000-item array, __proto__ and constructor.prototype keys (inside and outside data),
    //   duplicate keys, a BOM, an unknown field beside data, objects and arrays nested 20,000 deep;
    // - content types: text/plain, form, multipart, XML, */*, application/jsonx, JSON in UTF-16 and
    //   latin1, none at all;
    // - headers: Idempotency-Key missing, empty, not a UUID, 1,000 characters, two keys; Authorization
    //   "Bearer", "Basic", lower-case "bearer", too short, too long, unknown token, two tokens;
    // - query strings: unknown keys, repeated keys, __proto__/constructor/toString keys, %zz, %00, an
    //   empty key, 2,000 parameters;
    // - paths and methods: /_serverFn, /_serverFn/, trailing and double slashes, %, %00, ..%2f, a
    //   5,000-character name; PUT, PATCH, DELETE, OPTIONS, HEAD;
    // - the sandbox clock with negative, fractional, huge and string advances;
    // - raw HTTP: a bad Content-Length, a broken chunked body, a header without a colon, HTTP/1.0;
    // - a sign-in whose referralCode holds a NUL character (valid code, so it reaches the database).
    const victim = await signIn(world);
    const victimAuth = { authorization: `Bearer ${victim.accessToken}` };
    const failures: string[] = [];
    const check = (label: string, response: RawResponse) => {
      if (response.status >= 500)
        failures.push(`${label} → ${response.status} ${response.text.slice(0, 120)}`);
      // HEAD answers carry no body; every other refusal is an error envelope with a catalogue code.
      if (response.status >= 400 && !label.startsWith('HEAD ')) {
        const code = (response.json as ErrorEnvelope | undefined)?.error?.code;
        if (!(errorCodes as readonly string[]).includes(code ?? '')) {
          failures.push(
            `${label} → ${response.status} not an error envelope: ${response.text.slice(0, 120)}`,
          );
        }
      }
    };

    const deepArray = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const deepObject = `${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}`;
    const bodies: string[] = [
      '',
      '   ',
      'null',
      'true',
      '0',
      '-1',
      '"data"',
      '[]',
      '[{"data":{}}]',
      '{',
      '{"data":',
      '{"data":{}',
      "{'data':{}}",
      '{"data":{"x":1}}garbage',
      'undefined',
      '{"data":NaN}',
      '{"data":null}',
      '{"data":[]}',
      '{"data":"x"}',
      '{"data":0}',
      '{"data":true}',
      '{"data":1e999}',
      '{"data":{"phone":null}}',
      '{"data":{"phone":8031234567}}',
      '{"data":{"phone":1e999}}',
      '{"data":{"phone":["08031234567"]}}',
      '{"data":{"phone":{"$ne":""}}}',
      '{"data":{"phone":"0803\'; drop table users; --"}}',
      '{"data":{"phone":"08031234567\\u0000"}}',
      '{"data":{"code":"12345\\u0000","phone":"08031234567"}}',
      `{"data":{"refreshToken":"${'a'.repeat(24)}\\u0000"}}`,
      '{"data":{"firstName":"A\\u0000"}}',
      '{"data":{"x\\u0000":1}}',
      '{"data":{"firstName":"\\ud800"}}',
      '{"data":{"pin":"１２３４"}}',
      '{"data":{"phone":"٠٨٠٣١٢٣٤٥٦٧"}}',
      '{"data":{"pin":1234}}',
      `{"data":{"email":"${'a'.repeat(60_000)}@example.com"}}`,
      `{"data":{"firstName":[${Array.from({ length: 5000 }, () => '1').join(',')}]}}`,
      '{"data":{"__proto__":{"admin":true}}}',
      '{"__proto__":{"data":{}}}',
      '{"data":{"constructor":{"prototype":{"admin":true}}}}',
      '{"data":{"phone":"08031234567"},"data":{"phone":1}}',
      '\ufeff{"data":{"x":1}}',
      '{"data":{"x":1},"extra":1}',
      `{"data":${deepArray}}`,
      `{"data":${deepObject}}`,
      `{"data":{"firstName":${deepArray}}}`,
      deepArray,
    ];
    const postOps = [
      'requestOtp',
      'verifyOtp',
      'refreshSession',
      'signOut',
      'updateProfile',
      'setTransactionPin',
    ];
    for (const op of postOps) {
      for (const [who, headers] of [
        ['anonymous', {}],
        ['signed in', victimAuth],
      ] as const) {
        for (const body of bodies) {
          const label = `POST ${op} (${who}) ${JSON.stringify(body.slice(0, 60))}`;
          check(
            label,
            await raw(world, `/_serverFn/${op}`, { method: 'POST', headers: jsonHeaders(headers), body }),
          );
        }
      }
    }

    const contentTypes = [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
      '*/*',
      'application/jsonx',
      'application/json; charset=utf-16',
      'application/json; charset=latin1',
    ];
    for (const op of ['requestOtp', 'updateProfile']) {
      for (const contentType of contentTypes) {
        check(
          `POST ${op} content-type ${contentType}`,
          await raw(world, `/_serverFn/${op}`, {
            method: 'POST',
            headers: jsonHeaders({ ...victimAuth, 'content-type': contentType }),
            body: '{"data":{"x":1}}',
          }),
        );
      }
      check(
        `POST ${op} without content type`,
        await raw(world, `/_serverFn/${op}`, {
          method: 'POST',
          headers: { ...victimAuth, 'idempotency-key': randomUUID() },
          body: new TextEncoder().encode('{"data":{"x":1}}'),
        }),
      );
    }

    const keyHeaders: Array<Record<string, string>> = [
      {},
      { 'idempotency-key': '' },
      { 'idempotency-key': 'not-a-uuid' },
      { 'idempotency-key': 'x'.repeat(1000) },
      { 'idempotency-key': `${randomUUID()}, ${randomUUID()}` },
      { 'idempotency-key': randomUUID().replaceAll('-', '') },
    ];
    const authHeaders: Array<Record<string, string>> = [
      { authorization: 'Bearer' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: `bearer ${victim.accessToken}` },
      { authorization: 'Bearer short' },
      { authorization: `Bearer ${'a'.repeat(201)}` },
      { authorization: `Bearer ${'A'.repeat(43)}` },
      { authorization: `Bearer ${victim.accessToken}, Bearer ${victim.accessToken}` },
    ];
    for (const op of ['requestOtp', 'updateProfile', 'signOut']) {
      for (const headers of [...keyHeaders, ...authHeaders]) {
        const label = `POST ${op} headers ${JSON.stringify(headers).slice(0, 80)}`;
        check(
          label,
          await raw(world, `/_serverFn/${op}`, {
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              ...(headers['idempotency-key'] === undefined && !('idempotency-key' in headers)
                ? { 'idempotency-key': randomUUID() }
                : {}),
              ...headers,
            },
            body: '{"data":{"x":1}}',
          }),
        );
      }
    }

    const queries = [
      '?bogus=1',
      '?a=1&a=2',
      '?__proto__=1',
      '?constructor=1',
      '?toString=1',
      '?%zz=1',
      '?x=%zz',
      '?x=%00',
      '?=1',
      '?&&&',
      `?${Array.from({ length: 2000 }, (_, i) => `p${i}=1`).join('&')}`,
    ];
    for (const op of ['getMe', 'getWallet', 'adminLedgerCheck']) {
      for (const query of queries) {
        check(
          `GET ${op}${query.slice(0, 40)}`,
          await raw(world, `/_serverFn/${op}${query}`, { headers: victimAuth }),
        );
      }
      for (const headers of authHeaders) {
        check(
          `GET ${op} ${JSON.stringify(headers).slice(0, 60)}`,
          await raw(world, `/_serverFn/${op}`, { headers }),
        );
      }
      for (const method of ['PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD']) {
        check(`${method} ${op}`, await raw(world, `/_serverFn/${op}`, { method, headers: victimAuth }));
      }
    }

    const paths = [
      '/_serverFn',
      '/_serverFn/',
      '/_serverFn/getMe/',
      '/_serverFn//getMe',
      '/_serverFn/getMe/extra',
      '/_serverFn/%',
      '/_serverFn/%00',
      '/_serverFn/..%2fhealthz',
      `/_serverFn/${'a'.repeat(5000)}`,
    ];
    for (const path of paths) {
      check(`GET ${path.slice(0, 40)}`, await raw(world, path, { headers: victimAuth }));
      check(
        `POST ${path.slice(0, 40)}`,
        await raw(world, path, { method: 'POST', headers: jsonHeaders(victimAuth), body: '{"data":{}}' }),
      );
    }

    for (const body of [
      '{"advanceSeconds":-1}',
      '{"advanceSeconds":0.5}',
      '{"advanceSeconds":1e308}',
      '{"advanceSeconds":"1"}',
      '[]',
      'x',
    ]) {
      check(
        `/__sandbox/clock ${body}`,
        await raw(world, '/__sandbox/clock', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        }),
      );
    }

    const rawRequests = [
      'POST /_serverFn/requestOtp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}',
      'POST /_serverFn/requestOtp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n',
      'GET /_serverFn/getMe HTTP/1.1\r\nHost: x\r\nNot a header\r\n\r\n',
      'GET /_serverFn/getMe HTTP/1.0\r\n\r\n',
    ];
    for (const request of rawRequests) {
      const status = await rawHttp(world, request);
      if (status >= 500) failures.push(`raw ${JSON.stringify(request.slice(0, 60))} → ${status}`);
    }

    // A NUL character that passes the schema would reach PostgreSQL, which refuses it in text.
    const phone = uniquePhone();
    ok(await post(world, 'requestOtp', { phone }));
    const { code } = await readSms(world, phone);
    const nul = await post(world, 'verifyOtp', { phone, code, referralCode: 'ab\u0000cd' });
    if (nul.status >= 500) failures.push(`verifyOtp referralCode with NUL → ${nul.status}`);
    else assert.equal(failure(nul).code, 'VALIDATION_ERROR');
    // Half of a surrogate pair passes every schema, and jsonb (an event, the audit trail) refuses it.
    const half = await post(world, 'verifyOtp', { phone, code, referralCode: 'ab\ud800cd' });
    if (half.status >= 500)
      failures.push(`verifyOtp referralCode with half a surrogate pair → ${half.status}`);
    else assert.equal(failure(half).code, 'VALIDATION_ERROR');

    assert.deepEqual(failures, []);
    // The victim's session was never touched by any of it.
    ok(await get(world, 'getMe', {}, { token: victim.accessToken }));
  });
});
