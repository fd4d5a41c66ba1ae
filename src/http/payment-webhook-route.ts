import type { FastifyInstance } from 'fastify';
import type { PaymentEvents } from '../funding/module.ts';
import { webhookBodyLimitBytes } from '../funding/webhook.ts';

// POST /api/public/payments/webhook/payment: the payment provider's signed events (SPEC.md "Inbound
// webhook endpoint"). No session and no rate limit: the caller is authenticated by the signature
// alone, over the raw bytes, before anything parses them. A valid signature always gets 200 (ignored
// events, unknown references, duplicates, unparseable or malformed bodies), so the provider stops
// retrying; an invalid one gets 401 in plain text and nothing is stored.
//
// The event is stored (with the deliveries that arrived meanwhile: see createPaymentEventInbox), the
// provider gets its 200 at once, and this process drains the stored events right after (the funding
// module's paymentEvents): the wallet is credited within milliseconds, without waiting for a worker's
// poll, and without making the provider wait on our crediting. Should this process crash first, the
// sweep job does it.

export const paymentWebhookPath = '/api/public/payments/webhook/payment';

/**
 * Where the signature may come: SPEC.md's name, and Paystack's own, which the real provider sends
 * (API.md section 8). Each one present must hold the valid signature.
 */
const signatureHeaders = ['x-payment-signature', 'x-paystack-signature'] as const;

export type PaymentWebhookRouteDeps = { paymentEvents: PaymentEvents };

export function registerPaymentWebhookRoute(app: FastifyInstance, deps: PaymentWebhookRouteDeps): void {
  const { paymentEvents } = deps;
  void app.register(async (scope) => {
    // In this scope only: every content type is read as raw bytes, for the signature is over them.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: webhookBodyLimitBytes },
      (_r, body, done) => done(null, body),
    );
    // Closing the app finishes what its deliveries started: the last batch stored, then processed.
    // (ctx.close drains too, for a process without the app: a worker, a test's context.)
    scope.addHook('onClose', () => paymentEvents.drained());

    scope.post(
      paymentWebhookPath,
      { bodyLimit: webhookBodyLimitBytes, config: { rateLimit: false }, schema: { hide: true } },
      async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signatures = signatureHeaders.map((name) => request.headers[name]);
        if (!paymentEvents.signaturesValid(raw, signatures)) {
          request.log.warn('payment webhook with an invalid signature refused');
          return reply.code(401).type('text/plain; charset=utf-8').send('invalid signature');
        }
        // A failure to store is a 500: the provider retries, and nothing was acknowledged.
        // Once stored, what it holds is processed right after, in this process.
        const stored = await paymentEvents.store(raw);
        request.log.info({ eventId: stored.eventId, duplicate: !stored.created }, 'payment webhook stored');
        return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      },
    );
  });
}
