import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import type { SandboxPaymentsState, SandboxWebhookDelivery } from '../../src/sandbox/payments/state.ts';
import type { World } from '../helpers/world.ts';

// Shared by the payment tests: the Paystack client pointed at a world's sandbox, the checkout page's
// buttons, and a webhook receiver whose promises resolve when the deliveries a test waits for arrive
// (no sleeping: a missing delivery ends in the test runner's timeout).

export const sandboxPayments = (world: World): SandboxPaymentsState => world.ctx.sandbox!.state.payments;

export const paystackBaseUrl = (world: World) => `${world.baseUrl}/__sandbox/payments`;

export function paystackClient(world: World, overrides: { secretKey?: string; timeoutMs?: number } = {}) {
  return createPaystackClient({
    baseUrl: paystackBaseUrl(world),
    secretKey: overrides.secretKey ?? world.ctx.config.secrets.paymentSigning,
    timeoutMs: overrides.timeoutMs ?? 5_000,
  });
}

/** Presses Pay or Decline on the checkout page as a browser would (form post, follows the redirect). */
export async function checkout(authorizationUrl: string, button: 'pay' | 'decline'): Promise<string> {
  const response = await fetch(`${authorizationUrl}/${button}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: '',
  });
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  return response.text();
}

let referenceCounter = 0;
/** A transaction reference unique in this process (letters, digits and "-" only, as Paystack wants). */
export function uniqueReference(prefix = 'top'): string {
  referenceCounter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${referenceCounter}`;
}
/** A transfer reference unique in this process: 16-50 lower-case letters, digits, "-" and "_". */
export function uniqueTransferReference(): string {
  referenceCounter += 1;
  return `jit_${process.pid}_${Date.now().toString(36)}_${referenceCounter}`.padEnd(16, '0');
}

/** The delivery record the sandbox keeps for an event about a reference. */
export function deliveryOf(world: World, event: string, reference: string): SandboxWebhookDelivery {
  const found = sandboxPayments(world).webhookDeliveries.filter(
    (d) => d.event === event && d.reference === reference,
  );
  assert.equal(found.length, 1, `one ${event} delivery for ${reference}, got ${found.length}`);
  return found[0]!;
}

/** What `respond` returns to close the connection without an answer (a network error for the sender). */
export const hangUp = 0;

export type ReceivedWebhook = {
  headers: IncomingHttpHeaders;
  raw: Buffer;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: webhook data is read field by field in assertions
  data: any;
  /** The status the receiver answered with (hangUp: none). */
  answered: number;
};

export type WebhookReceiver = {
  url: string;
  received: ReceivedWebhook[];
  /** Chooses each answer's status (200 unless a test says otherwise, `hangUp` for none); `index` counts from 0. */
  respond: (webhook: Omit<ReceivedWebhook, 'answered'>, index: number) => number;
  /** Resolves with the first `count` webhooks matching `match`, once that many have arrived. */
  waitFor(match: (webhook: ReceivedWebhook) => boolean, count?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const waiters: Array<{
    match: (w: ReceivedWebhook) => boolean;
    count: number;
    resolve: (w: ReceivedWebhook[]) => void;
  }> = [];
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    respond: () => 200,
    waitFor(match, count = 1) {
      return new Promise((resolve) => {
        waiters.push({ match, count, resolve });
        check();
      });
    },
    close: async () => {},
  };
  function check() {
    for (const waiter of [...waiters]) {
      const matching = receiver.received.filter(waiter.match);
      if (matching.length >= waiter.count) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(matching.slice(0, waiter.count));
      }
    }
  }
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const parsed = JSON.parse(raw.toString('utf8')) as { event: string; data: unknown };
      const webhook = { headers: request.headers, raw, event: parsed.event, data: parsed.data };
      const answered = receiver.respond(webhook, receiver.received.length);
      receiver.received.push({ ...webhook, answered });
      if (answered === hangUp) request.socket.destroy();
      else response.writeHead(answered, { 'content-type': 'text/plain' }).end(answered < 300 ? 'ok' : 'no');
      check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
  receiver.close = async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** True when the x-payment-signature header is the HMAC-SHA-512 (lowercase hex) of the raw body. */
export function signatureValid(webhook: ReceivedWebhook, secret: string): boolean {
  const header = webhook.headers['x-payment-signature'];
  if (typeof header !== 'string' || !/^[0-9a-f]{128}$/.test(header)) return false;
  const expected = Buffer.from(createHmac('sha512', secret).update(webhook.raw).digest('hex'));
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
