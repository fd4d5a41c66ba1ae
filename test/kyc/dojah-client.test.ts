import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createDojahKycProvider } from '../../src/providers/kyc/dojah-client.ts';
import { type KycProvider, KycProviderUnavailableError } from '../../src/providers/kyc/kyc-provider.ts';
import { SANDBOX_KYC_APP_ID, SANDBOX_KYC_SECRET } from '../../src/sandbox/state.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The real KYC client (Dojah's wire shapes) against the sandbox simulator over HTTP, for every magic
// value of API.md section 8; then against a local server that misbehaves on purpose, for every way
// the provider can fail to give a usable answer.

const ada = { firstName: 'Ada', lastName: 'Obi' };

/** Asserts that the call fails with KycProviderUnavailableError whose message matches `message`. */
async function assertUnavailable(
  call: Promise<unknown>,
  message: RegExp,
): Promise<KycProviderUnavailableError> {
  let caught: unknown;
  await call.then(
    (value) => assert.fail(`expected KycProviderUnavailableError, got ${JSON.stringify(value)}`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof KycProviderUnavailableError, `got ${String(caught)}`);
  assert.match(caught.message, message);
  return caught;
}

describe('Dojah KYC client against the sandbox provider', () => {
  let world: World;
  let kyc: KycProvider;
  const sandboxUrl = () => `${world.baseUrl}/__sandbox/kyc`;
  const clientWith = (appId: string, secretKey: string) =>
    createDojahKycProvider({ baseUrl: sandboxUrl(), appId, secretKey, timeoutMs: 2000 });

  before(async () => {
    world = await createWorld();
    kyc = clientWith(SANDBOX_KYC_APP_ID, SANDBOX_KYC_SECRET);
  });
  after(async () => {
    await world.close();
  });

  /** Asks the sandbox provider for a token, as the liveness page does. */
  async function issueToken(outcome: 'pass' | 'fail'): Promise<string> {
    const response = await fetch(`${sandboxUrl()}/liveness/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome }),
    });
    assert.equal(response.status, 200);
    const { token } = (await response.json()) as { token: string };
    assert.equal(typeof token, 'string');
    return token;
  }

  describe('liveness', () => {
    it('passes sandbox-pass, every time (a magic value is not used up)', async () => {
      for (let round = 0; round < 2; round++) {
        assert.deepEqual(await kyc.verifyLiveness('sandbox-pass'), {
          status: 'passed',
          reference: 'sandbox-pass',
        });
      }
    });

    it('fails sandbox-fail with the provider’s reason', async () => {
      const result = await kyc.verifyLiveness('sandbox-fail');
      assert.equal(result.status, 'failed');
      assert.ok(result.status === 'failed');
      assert.equal(result.reference, 'sandbox-fail');
      assert.match(result.reason, /no live face/i);
    });

    for (const token of ['never-issued', 'SANDBOX-PASS', 'sandbox-pass ', 'a b&reference_id=sandbox-pass']) {
      it(`answers unknown_token for ${JSON.stringify(token)}`, async () => {
        assert.deepEqual(await kyc.verifyLiveness(token), { status: 'unknown_token' });
      });
    }

    it('passes a token the liveness page issued as "pass", once only', async () => {
      const token = await issueToken('pass');
      assert.deepEqual(await kyc.verifyLiveness(token), { status: 'passed', reference: token });
      assert.deepEqual(await kyc.verifyLiveness(token), { status: 'unknown_token' });
    });

    it('fails a token the liveness page issued as "fail", once only', async () => {
      const token = await issueToken('fail');
      const result = await kyc.verifyLiveness(token);
      assert.equal(result.status, 'failed');
      assert.ok(result.status === 'failed');
      assert.equal(result.reference, token);
      assert.ok(result.reason.length > 0);
      assert.deepEqual(await kyc.verifyLiveness(token), { status: 'unknown_token' });
    });

    it('issues a different token every time', async () => {
      const tokens = new Set([await issueToken('pass'), await issueToken('pass'), await issueToken('fail')]);
      assert.equal(tokens.size, 3);
    });

    it('refuses a liveness session with an unknown outcome (400)', async () => {
      for (const body of [{ outcome: 'maybe' }, {}, { outcome: true }]) {
        const response = await fetch(`${sandboxUrl()}/liveness/sessions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        assert.equal(response.status, 400, JSON.stringify(body));
      }
    });
  });

  describe('NIN', () => {
    it('resolves any 11-digit NIN to the names sent, without middle name or phone', async () => {
      for (const nin of ['12345678901', '70123456789', '00000000001']) {
        assert.deepEqual(await kyc.lookupNin({ nin, ...ada }), {
          found: true,
          record: { firstName: 'Ada', middleName: null, lastName: 'Obi', phone: null },
        });
      }
    });

    it('resolves a NIN starting with 9 to somebody else', async () => {
      assert.deepEqual(await kyc.lookupNin({ nin: '90000000001', ...ada }), {
        found: true,
        record: { firstName: 'MUSA', middleName: 'IBRAHIM', lastName: 'DANJUMA', phone: null },
      });
    });

    it('resolves a NIN starting with 8 to the names sent with another phone on the record', async () => {
      assert.deepEqual(await kyc.lookupNin({ nin: '80000000001', ...ada }), {
        found: true,
        record: { firstName: 'Ada', middleName: null, lastName: 'Obi', phone: '07000000008' },
      });
    });

    it('does not find 00000000000', async () => {
      assert.deepEqual(await kyc.lookupNin({ nin: '00000000000', ...ada }), { found: false });
    });

    it('turns the provider’s 400 for a malformed NIN into KycProviderUnavailableError', async () => {
      await assertUnavailable(kyc.lookupNin({ nin: '1234567890', ...ada }), /NIN verify\) answered 400/);
    });
  });

  describe('bank account', () => {
    it('resolves any 10-digit account to "SURNAME FIRSTNAME" in capitals', async () => {
      assert.deepEqual(
        await kyc.lookupBankAccount({ bankCode: '058', accountNumber: '0123456789', ...ada }),
        { found: true, accountName: 'OBI ADA' },
      );
    });

    it('resolves an account starting with 9 to somebody else', async () => {
      assert.deepEqual(
        await kyc.lookupBankAccount({ bankCode: '044', accountNumber: '9876543210', ...ada }),
        { found: true, accountName: 'DANJUMA MUSA IBRAHIM' },
      );
    });

    for (const [label, request] of [
      ['a 9-digit account', { bankCode: '058', accountNumber: '012345678' }],
      ['letters in the account', { bankCode: '058', accountNumber: '01234567ab' }],
      ['a bank code with letters', { bankCode: 'GTB', accountNumber: '0123456789' }],
    ] as const) {
      it(`turns the provider’s 400 for ${label} into KycProviderUnavailableError`, async () => {
        await assertUnavailable(
          kyc.lookupBankAccount({ ...request, ...ada }),
          /bank account verify\) answered 400/,
        );
      });
    }
  });

  describe('credentials', () => {
    for (const [label, appId, secret] of [
      ['a wrong secret', SANDBOX_KYC_APP_ID, 'not-the-secret'],
      ['a wrong app id', 'not-the-app', SANDBOX_KYC_SECRET],
      ['the secret sent as Bearer', SANDBOX_KYC_APP_ID, `Bearer ${SANDBOX_KYC_SECRET}`],
    ] as const) {
      it(`refuses ${label} on every call, and the error does not carry the secret`, async () => {
        const wrong = clientWith(appId, secret);
        const calls = [
          wrong.verifyLiveness('sandbox-pass'),
          wrong.lookupNin({ nin: '12345678901', ...ada }),
          wrong.lookupBankAccount({ bankCode: '058', accountNumber: '0123456789', ...ada }),
        ];
        for (const call of calls) {
          const error = await assertUnavailable(call, /refused our credentials \(401\)/);
          assert.ok(!error.message.includes(secret), error.message);
        }
      });
    }

    it('answers 401 {error} to a request without the headers', async () => {
      const response = await fetch(`${sandboxUrl()}/api/v1/kyc/liveness/verify?reference_id=sandbox-pass`);
      assert.equal(response.status, 401);
      const body = (await response.json()) as { error: unknown };
      assert.equal(typeof body.error, 'string');
    });
  });
});

describe('Dojah KYC client against a misbehaving provider', () => {
  let server: ScriptedServer;
  let baseUrl: string;
  let handler: Handler;
  const received: Received[] = [];

  before(async () => {
    server = await startScriptedServer(
      (request, body, response) => handler(request, body, response),
      received,
    );
    baseUrl = server.baseUrl;
  });
  after(() => server.close());

  const client = (timeoutMs = 2000) =>
    createDojahKycProvider({ baseUrl, appId: 'app-1', secretKey: 'sk-secret-1', timeoutMs });
  /** Runs `call` and returns what the server received, asserting it received exactly one request. */
  async function onlyRequest<T>(
    call: () => Promise<T>,
  ): Promise<{ result: T; request: (typeof received)[0] }> {
    received.length = 0;
    const result = await call();
    assert.equal(received.length, 1);
    return { result, request: received[0]! };
  }

  it('sends Dojah’s headers, method, path and body', async () => {
    handler = json(200, {
      entity: { reference_id: 'tok-1', liveness_check: true, liveness_probability: 77, message: 'ok' },
    });
    const liveness = await onlyRequest(() => client().verifyLiveness('tok-1'));
    assert.deepEqual(liveness.result, { status: 'passed', reference: 'tok-1' });
    assert.equal(liveness.request.method, 'GET');
    assert.equal(liveness.request.url, '/api/v1/kyc/liveness/verify?reference_id=tok-1');
    assert.equal(liveness.request.headers.appid, 'app-1');
    assert.equal(liveness.request.headers.authorization, 'sk-secret-1');

    handler = json(200, {
      entity: {
        nin: '12345678901',
        first_name: ' ADA ',
        middle_name: '',
        last_name: 'OBI',
        phone_number: '08031234567',
        gender: 'F',
        date_of_birth: '1990-01-01',
      },
    });
    const nin = await onlyRequest(() =>
      client().lookupNin({ nin: '12345678901', firstName: 'Ada', lastName: 'Obi' }),
    );
    assert.deepEqual(nin.result, {
      found: true,
      record: { firstName: 'ADA', middleName: null, lastName: 'OBI', phone: '08031234567' },
    });
    assert.equal(nin.request.method, 'POST');
    assert.equal(nin.request.url, '/api/v1/kyc/nin/verify');
    assert.equal(nin.request.headers['content-type'], 'application/json');
    assert.equal(nin.request.headers.appid, 'app-1');
    assert.equal(nin.request.headers.authorization, 'sk-secret-1');
    assert.deepEqual(JSON.parse(nin.request.body), {
      nin: '12345678901',
      first_name: 'Ada',
      last_name: 'Obi',
    });

    handler = json(200, {
      entity: { account_number: '0123456789', bank_code: '058', account_name: 'OBI ADA' },
    });
    const bank = await onlyRequest(() =>
      client().lookupBankAccount({
        bankCode: '058',
        accountNumber: '0123456789',
        firstName: 'Ada',
        lastName: 'Obi',
      }),
    );
    assert.deepEqual(bank.result, { found: true, accountName: 'OBI ADA' });
    assert.equal(bank.request.method, 'POST');
    assert.equal(bank.request.url, '/api/v1/kyc/nuban/verify');
    assert.deepEqual(JSON.parse(bank.request.body), {
      account_number: '0123456789',
      bank_code: '058',
      first_name: 'Ada',
      last_name: 'Obi',
    });
  });

  it('fails a live-looking face whose probability is not above 50', async () => {
    handler = json(200, {
      entity: { reference_id: 'tok-2', liveness_check: true, liveness_probability: 50 },
    });
    const result = await client().verifyLiveness('tok-2');
    assert.equal(result.status, 'failed');
    assert.ok(result.status === 'failed');
    assert.match(result.reason, /probability 50/);
  });

  it('answers not found on the provider’s 404 {error} for each call', async () => {
    handler = json(404, { error: 'not found' });
    assert.deepEqual(await client().verifyLiveness('tok-3'), { status: 'unknown_token' });
    assert.deepEqual(await client().lookupNin({ nin: '12345678901', ...ada }), { found: false });
    assert.deepEqual(
      await client().lookupBankAccount({ bankCode: '058', accountNumber: '0123456789', ...ada }),
      { found: false },
    );
  });

  it('times out on a provider that never answers', async () => {
    handler = () => {}; // holds the request open; closeAllConnections ends it
    await assertUnavailable(client(200).verifyLiveness('tok-4'), /did not answer within 200 ms/);
    await assertUnavailable(
      client(200).lookupNin({ nin: '12345678901', ...ada }),
      /did not answer within 200 ms/,
    );
    server.closeAllConnections();
  });

  it('times out on a provider that sends headers and then stalls the body', async () => {
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"entity":');
    };
    await assertUnavailable(client(200).verifyLiveness('tok-5'), /did not answer within 200 ms/);
    server.closeAllConnections();
  });

  it('reports a provider nobody listens on as unreachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = createDojahKycProvider({
      baseUrl: `http://127.0.0.1:${port}`,
      appId: 'app-1',
      secretKey: 'sk-secret-1',
      timeoutMs: 2000,
    });
    const error = await assertUnavailable(
      unreachable.verifyLiveness('tok-6'),
      /is unreachable .*ECONNREFUSED/,
    );
    assert.ok(!error.message.includes('sk-secret-1'));
  });

  for (const [label, respond, message] of [
    ['500', json(500, { error: 'boom' }), /failed upstream \(500\)/],
    ['503 with an HTML page', raw(503, '<h1>down</h1>', 'text/html'), /failed upstream \(503\)/],
    ['429', json(429, { error: 'slow down' }), /rate limiting us \(429\)/],
    ['403', json(403, { error: 'forbidden' }), /refused our credentials \(403\)/],
    ['401', json(401, { error: 'unauthorised' }), /refused our credentials \(401\)/],
    ['400', json(400, { error: 'bad nin' }), /answered 400: bad nin/],
    [
      'a redirect',
      (_request: IncomingMessage, _body: string, response: ServerResponse) => {
        response.writeHead(302, { location: '/api/v1/kyc/nin/verify-elsewhere' }).end();
      },
      /unreachable/,
    ],
    ['a 404 without the provider’s {error} body', raw(404, '<h1>Not Found</h1>', 'text/html'), /404 without/],
    ['malformed JSON', raw(200, '{"entity": {'), /not JSON/],
    ['an empty 200', raw(200, ''), /not JSON/],
    ['a wrongly shaped body', json(200, { data: { nin: '12345678901' } }), /unexpected body \(at entity\)/],
    [
      'a record without a last name',
      json(200, { entity: { nin: '12345678901', first_name: 'ADA', last_name: ' ' } }),
      /unexpected body \(at entity\.last_name\)/,
    ],
    [
      'somebody else’s record',
      json(200, { entity: { nin: '11111111111', first_name: 'ADA', last_name: 'OBI' } }),
      /different NIN/,
    ],
  ] as const) {
    it(`throws KycProviderUnavailableError on ${label}, after one request (no retry)`, async () => {
      handler = respond;
      received.length = 0;
      await assertUnavailable(client().lookupNin({ nin: '12345678901', ...ada }), message);
      assert.equal(received.length, 1, 'a POST is never retried here');
    });
  }

  it('throws KycProviderUnavailableError on wrong shapes of the liveness and bank answers', async () => {
    handler = json(200, {
      entity: { reference_id: 'tok-7', liveness_check: 'yes', liveness_probability: 99 },
    });
    await assertUnavailable(
      client().verifyLiveness('tok-7'),
      /unexpected body \(at entity\.liveness_check\)/,
    );
    handler = json(200, {
      entity: { reference_id: 'other', liveness_check: true, liveness_probability: 99 },
    });
    await assertUnavailable(client().verifyLiveness('tok-7'), /different reference/);
    handler = json(200, { entity: { account_number: '0123456789', bank_code: '058' } });
    await assertUnavailable(
      client().lookupBankAccount({ bankCode: '058', accountNumber: '0123456789', ...ada }),
      /unexpected body \(at entity\.account_name\)/,
    );
    handler = json(200, { entity: { account_number: '0000000001', bank_code: '058', account_name: 'X Y' } });
    await assertUnavailable(
      client().lookupBankAccount({ bankCode: '058', accountNumber: '0123456789', ...ada }),
      /different account/,
    );
  });
});
