import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.ts';
import { createPaymentEventInbox, signaturesValid, webhookBodyLimitBytes } from '../funding/webhook.ts';

// POST /api/public/payments/webhook/payment: the payment provider's signed events (SPEC.md "Inbound
// webhook endpoint"). No session and no rate limit: the caller is authenticated by the signature
// alone, over the raw bytes, before anything parses them. A valid signature always gets 200 (ignored
// events, unknown references, duplicates, unparseable or malformed bodies), so the provider stops
// retrying; an invalid one gets 401 in plain text and nothing is stored.
//
// The event is stored (with the deliveries that arrived meanwhile: see createPaymentEventInbox), the
// provider gets its 200 at once, and this process drains the stored events right after: the wallet
// is credited within milliseconds, without waiting for a worker's poll, and without making the
// provider wait on our crediting. Should this process crash first, the sweep job does it.

export const paymentWebhookPath = '/api/public/payments/webhook/payment';

/**
 * Where the signature may come: SPEC.md's name, and Paystack's own, which the real provider sends
 * (API.md section 8). Each one present must hold the valid signature.
 */
const signatureHeaders = ['x-payment-signature', 'x-paystack-signature'] as const;

/** Deliveries stored per transaction at most: bounds one statement's size (bodies are ≤ 256 KiB). */
const inboxBatchMax = 64;

export function registerPaymentWebhookRoute(app: FastifyInstance, ctx: Context): void {
  const inbox = createPaymentEventInbox({ db: ctx.db, clock: ctx.clock }, ctx.database.batching, {
    batchMax: inboxBatchMax,
  });

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
    scope.addHook('onClose', async () => {
      await inbox.drained();
      await ctx.paymentEvents.drainNow();
    });

    scope.post(
      paymentWebhookPath,
      { bodyLimit: webhookBodyLimitBytes, config: { rateLimit: false }, schema: { hide: true } },
      async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        const signatures = signatureHeaders.map((name) => request.headers[name]);
        if (!signaturesValid(raw, signatures, ctx.config.secrets.paymentSigning)) {
          request.log.warn('payment webhook with an invalid signature refused');
          return reply.code(401).type('text/plain; charset=utf-8').send('invalid signature');
        }
        // A failure to store is a 500: the provider retries, and nothing was acknowledged.
        const stored = await inbox.store(raw);
        request.log.info({ eventId: stored.eventId, duplicate: !stored.created }, 'payment webhook stored');
        if (stored.needsProcessing) ctx.paymentEvents.kick();
        return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      },
    );
  });
}
