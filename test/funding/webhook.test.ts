import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { after, afterEach, before, describe, it } from 'node:test';
import { promisify } from 'node:util';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  creditPostings,
  eventCount,
  type Intent,
  intentRow,
  processed,
  sendWebhook,
  sign,
  storedEvent,
  walletKobo,
  webhookPath,
} from './support.ts';

/** POSTs a body with exactly these headers (beside the content type); a list sends the header that many times. */
function sendRaw(
  world: World,
  body: string,
  headers: Record<string, string | string[]>,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${world.baseUrl}${webhookPath}`,
      { method: 'POST', headers: { 'content-type': 'application/json', ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

/** The signature as a shell user would compute it, an oracle independent of this process's crypto. */
async function opensslSignature(body: string, secret: string): Promise<string> {
  const run = promisify(execFile)('openssl', ['dgst', '-sha512', '-hmac', secret, '-r'], {
    encoding: 'utf8',
  });
  run.child.stdin?.end(body);
  const { stdout } = await run;
  return stdout.trim().split(/\s+/)[0]!;
}

// The signed inbound webhook (SPEC.md "Inbound webhook endpoint", "Authentication" 5, "Events"):
// the signature is checked over the raw bytes before anything parses them; a bad one is 401 in
// plain text with nothing stored; a good one is 200 whatever the event says.

describe(`payment webhook signature and acknowledgement (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let user: SignedIn;
  before(async () => {
    world = await createWorld();
    user = await signIn(world);
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  describe('refused signatures: 401 in plain text, nothing stored, nothing credited', () => {
    let intent: Intent;
    let body: string;
    let signature: string;
    before(async () => {
      intent = await createIntent(world, user, 500);
      // Spaces and key order a proxy would change when it re-serialises.
      body = `{ "event": "charge.success", "data": { "reference": "${intent.reference}", "status": "success", "currency": "NGN", "amount": 50000 } }`;
      signature = sign(body, world.ctx.config.secrets.paymentSigning);
    });

    const cases: Array<[string, () => { body: string; signature: string | null }]> = [
      ['a missing signature', () => ({ body, signature: null })],
      ['a signature under another secret', () => ({ body, signature: sign(body, 'sk_test_someone_else') })],
      ['a signature of the wrong length', () => ({ body, signature: signature.slice(0, 126) })],
      ['a signature one character longer', () => ({ body, signature: `${signature}0` })],
      ['the right signature in uppercase hex', () => ({ body, signature: signature.toUpperCase() })],
      ['an empty signature', () => ({ body, signature: '' })],
      [
        'the body re-serialised by a proxy, with the signature of the original',
        () => ({ body: JSON.stringify(JSON.parse(body)), signature }),
      ],
      [
        'the right signature over a changed amount',
        () => ({ body: body.replace('50000', '90000'), signature }),
      ],
    ];
    for (const [name, make] of cases) {
      it(`refuses ${name}`, BOUNDED, async () => {
        const before = await eventCount(world);
        const sent = make();
        const answer = await sendWebhook(world, sent.body, { signature: sent.signature });
        assert.equal(answer.status, 401);
        assert.match(answer.contentType, /^text\/plain/);
        assert.equal(answer.text, 'invalid signature');
        assert.equal(await eventCount(world), before, 'nothing was stored');
        assert.equal(await storedEvent(world, sent.body), undefined);
        assert.equal(await walletKobo(world, user.userId), 0n);
        assert.equal(await creditPostings(world, intent.reference), 0);
        assert.equal((await intentRow(world, intent.reference))?.status, 'pending');
      });
    }

    it('accepts the same body with its valid signature, and credits it', BOUNDED, async () => {
      const answer = await sendWebhook(world, body, { signature });
      assert.equal(answer.status, 200);
      assert.match(answer.contentType, /^text\/plain/);
      const event = await processed(world, body);
      assert.equal(event.body, body, 'stored exactly as received');
      assert.equal(event.event, 'charge.success');
      assert.equal(event.reference, intent.reference);
      assert.equal(event.outcome, 'credited');
      assert.equal(await walletKobo(world, user.userId), 50_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
    });
  });

  it('reads the raw bytes whatever the content type says', BOUNDED, async () => {
    for (const contentType of [
      'text/plain',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
    ]) {
      const body = JSON.stringify({ event: 'customeridentification.success', data: { note: contentType } });
      const answer = await sendWebhook(world, body, { contentType });
      assert.equal(answer.status, 200, contentType);
      assert.equal((await processed(world, body)).outcome, 'ignored_event');
    }
  });

  it('needs no bearer token, and ignores one that is invalid', BOUNDED, async () => {
    const body = JSON.stringify({ event: 'subscription.create', data: { n: 1 } });
    const response = await fetch(`${world.baseUrl}/api/public/payments/webhook/payment`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: 'Bearer not-a-real-token-at-all-xxxxxxxx',
        'x-payment-signature': sign(body, world.ctx.config.secrets.paymentSigning),
      },
      body,
    });
    assert.equal(response.status, 200);
  });

  describe("the provider's own header, x-paystack-signature (API.md section 8)", () => {
    const secret = () => world.ctx.config.secrets.paymentSigning;
    const intentBody = async (naira: number) => {
      const intent = await createIntent(world, user, naira);
      return { intent, body: chargeSuccess(intent.reference, naira * 100) };
    };

    it('accepts a body signed under x-paystack-signature alone, and credits it', BOUNDED, async () => {
      const { intent, body } = await intentBody(400);
      const balance = await walletKobo(world, user.userId);
      const signature = await opensslSignature(body, secret());
      assert.equal(signature, sign(body, secret()), 'openssl and node agree on the signature');
      const answer = await sendRaw(world, body, { 'x-paystack-signature': signature });
      assert.equal(answer.status, 200);
      assert.equal((await processed(world, body)).outcome, 'credited');
      assert.equal(await walletKobo(world, user.userId), balance + 40_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
    });

    it('accepts both headers when each carries the valid signature', BOUNDED, async () => {
      const { body } = await intentBody(250);
      const signature = sign(body, secret());
      const answer = await sendRaw(world, body, {
        'x-payment-signature': signature,
        'x-paystack-signature': signature,
      });
      assert.equal(answer.status, 200);
      assert.equal((await processed(world, body)).outcome, 'credited');
    });

    const refused: Array<[string, (signature: string, body: string) => Record<string, string | string[]>]> = [
      [
        'x-paystack-signature under another secret',
        (_s, b) => ({ 'x-paystack-signature': sign(b, 'sk_other') }),
      ],
      ['an empty x-paystack-signature', () => ({ 'x-paystack-signature': '' })],
      [
        'a valid x-payment-signature beside a wrong x-paystack-signature',
        (s, b) => ({ 'x-payment-signature': s, 'x-paystack-signature': sign(b, 'sk_other') }),
      ],
      [
        'a valid x-paystack-signature beside a wrong x-payment-signature',
        (s) => ({ 'x-payment-signature': 'f'.repeat(128), 'x-paystack-signature': s }),
      ],
      [
        'a valid x-payment-signature beside an empty x-paystack-signature',
        (s) => ({ 'x-payment-signature': s, 'x-paystack-signature': '' }),
      ],
      [
        'a valid x-payment-signature beside the same signature in uppercase under x-paystack-signature',
        (s) => ({ 'x-payment-signature': s, 'x-paystack-signature': s.toUpperCase() }),
      ],
      ['x-paystack-signature given twice, valid both times', (s) => ({ 'x-paystack-signature': [s, s] })],
      ['x-payment-signature given twice, valid both times', (s) => ({ 'x-payment-signature': [s, s] })],
    ];
    for (const [name, headersOf] of refused) {
      it(`refuses ${name}: 401, nothing stored`, BOUNDED, async () => {
        const { intent, body } = await intentBody(300);
        const before = await eventCount(world);
        const answer = await sendRaw(world, body, headersOf(sign(body, secret()), body));
        assert.equal(answer.status, 401);
        assert.equal(answer.text, 'invalid signature');
        assert.equal(await eventCount(world), before, 'nothing was stored');
        assert.equal(await creditPostings(world, intent.reference), 0);
      });
    }
  });

  describe('valid signatures always get 200', () => {
    it('an unknown event type: stored, ignored, nothing credited', BOUNDED, async () => {
      const intent = await createIntent(world, user, 200);
      const body = JSON.stringify({
        event: 'charge.dispute.create',
        data: { reference: intent.reference, amount: 20000 },
      });
      const balance = await walletKobo(world, user.userId);
      assert.equal((await sendWebhook(world, body)).status, 200);
      const event = await processed(world, body);
      assert.equal(event.event, 'charge.dispute.create');
      assert.equal(event.outcome, 'ignored_event');
      assert.equal(await walletKobo(world, user.userId), balance);
      assert.equal(await creditPostings(world, intent.reference), 0);
    });

    it('a charge.success for a reference we never issued: stored, nothing credited', BOUNDED, async () => {
      const body = chargeSuccess('top-000000000000000000000000', 100_000);
      assert.equal((await sendWebhook(world, body)).status, 200);
      assert.equal((await processed(world, body)).outcome, 'unknown_reference');
      assert.equal(await creditPostings(world, 'top-000000000000000000000000'), 0);
    });

    it('unparseable JSON: stored with event null and closed as unparseable', BOUNDED, async () => {
      const body = '{"event": "charge.success", "data": {';
      const answer = await sendWebhook(world, body);
      assert.equal(answer.status, 200);
      const event = await storedEvent(world, body);
      assert.ok(event !== undefined);
      assert.equal(event.event, null);
      assert.equal(event.outcome, 'unparseable');
      assert.notEqual(event.processed_at, null);
      assert.equal(event.body, body);
    });

    it('bytes that are not UTF-8 are kept exactly (base64) and closed as unparseable', BOUNDED, async () => {
      const body = Buffer.from([0x7b, 0xff, 0x00, 0xfe, 0x7d]);
      assert.equal((await sendWebhook(world, body)).status, 200);
      const event = await storedEvent(world, body);
      assert.equal(event?.body_encoding, 'base64');
      assert.ok(Buffer.from(event.body, 'base64').equals(body));
      assert.equal(event.outcome, 'unparseable');
    });

    it('charge.success that is not a verified NGN success credits nothing', BOUNDED, async () => {
      const intent = await createIntent(world, user, 300);
      const balance = await walletKobo(world, user.userId);
      const bodies = [
        chargeSuccess(intent.reference, 30_000, { currency: 'USD' }),
        chargeSuccess(intent.reference, 30_000, { status: 'failed' }),
        chargeSuccess(intent.reference, 0),
        chargeSuccess(intent.reference, -30_000),
        chargeSuccess(intent.reference, 300.5),
      ];
      for (const body of bodies) {
        assert.equal((await sendWebhook(world, body)).status, 200);
        assert.equal((await processed(world, body)).outcome, 'invalid_charge', body);
      }
      assert.equal(await walletKobo(world, user.userId), balance);
      assert.equal(await creditPostings(world, intent.reference), 0);
      assert.equal((await intentRow(world, intent.reference))?.status, 'pending');
    });

    it('a body over 256 KiB is refused before anything is stored', BOUNDED, async () => {
      const before = await eventCount(world);
      const body = JSON.stringify({ event: 'charge.success', data: { pad: 'x'.repeat(256 * 1024) } });
      const answer = await sendWebhook(world, body);
      assert.equal(answer.status, 413);
      assert.equal(await eventCount(world), before);
    });
  });
});

describe('payment webhook is not rate limited', () => {
  let world: World;
  before(async () => {
    world = await createWorld({
      env: { RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_ANONYMOUS_PER_MINUTE: '2' },
    });
  });
  after(() => world.close());

  it('answers every delivery even when other routes would be limited', BOUNDED, async () => {
    for (let i = 0; i < 6; i++) {
      const body = JSON.stringify({ event: 'paymentrequest.pending', data: { i } });
      assert.equal((await sendWebhook(world, body)).status, 200, `delivery ${i}`);
      assert.equal((await sendWebhook(world, body, { signature: 'f'.repeat(128) })).status, 401);
    }
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${world.baseUrl}/_serverFn/requestOtp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ data: { phone: 'not-a-phone' } }),
      });
      statuses.push(response.status);
    }
    assert.ok(statuses.includes(429), `the operations are limited: ${statuses}`);
  });
});
