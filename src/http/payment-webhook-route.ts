import type { FastifyInstance } from 'fastify';
import type { Context } from '../context.ts';
import { fundingDeps } from '../funding/ops.ts';
import {
  createPaymentEventInbox,
  processPaymentEvent,
  signatureValid,
  webhookBodyLimitBytes,
} from '../funding/webhook.ts';

// POST /api/public/payments/webhook/payment: the payment provider's signed events (SPEC.md "Inbound
// webhook endpoint"). No session and no rate limit: the caller is authenticated by the signature
// alone, over the raw bytes, before anything parses them. A valid signature always gets 200 (ignored
// events, unknown references, duplicates, unparseable bodies), so the provider stops retrying; an
// invalid one gets 401 in plain text and nothing is stored.
//
// The event is stored and its processing job enqueued in one transaction (shared with the deliveries
// that arrived meanwhile: see createPaymentEventInbox), then the provider gets its 200 at once, and this process runs the same processing right after: the wallet is credited within
// milliseconds, without waiting for a worker's poll, and without making the provider wait on our
// crediting. Should this process crash, the processing fail or too many runs be under way already,
// the job (fetched in batches, retried with backoff) does it.

export const paymentWebhookPath = '/api/public/payments/webhook/payment';

/** Deliveries stored per transaction at most: bounds one statement's size (bodies are ≤ 256 KiB). */
const inboxBatchMax = 64;
/** Events processed right after their 200 at once, at most; the rest wait for a worker's batch. */
const inlineProcessingMax = 4;

export function registerPaymentWebhookRoute(app: FastifyInstance, ctx: Context): void {
  const deps = fundingDeps(ctx);
  const inbox = createPaymentEventInbox(deps, { batchMax: inboxBatchMax });
  // Processing started after an answer; close waits for it, so a graceful stop does not cut it off.
  const inFlight = new Set<Promise<unknown>>();

  void app.register(async (scope) => {
    // In this scope only: every content type is read as raw bytes, for the signature is over them.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: webhookBodyLimitBytes },
      (_r, body, done) => done(null, body),
    );
    scope.addHook('onClose', async () => {
      await inbox.drained();
      await Promise.allSettled([...inFlight]);
    });

    scope.post(
      paymentWebhookPath,
      { bodyLimit: webhookBodyLimitBytes, config: { rateLimit: false }, schema: { hide: true } },
      async (request, reply) => {
        const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
        if (!signatureValid(raw, request.headers['x-payment-signature'], ctx.config.secrets.paymentSigning)) {
          request.log.warn('payment webhook with an invalid signature refused');
          return reply.code(401).type('text/plain; charset=utf-8').send('invalid signature');
        }
        // A failure to store is a 500: the provider retries, and nothing was acknowledged.
        const stored = await inbox.store(raw);
        request.log.info({ eventId: stored.eventId, duplicate: !stored.created }, 'payment webhook stored');
        // Under load the job workers (in batches) take over from the inline runs, so that storing,
        // which the provider waits on, is not starved by crediting, which it does not.
        if (stored.needsProcessing && inFlight.size < inlineProcessingMax) {
          const run = processPaymentEvent(deps, stored.eventId)
            .then((outcome) =>
              request.log.info({ eventId: stored.eventId, outcome }, 'payment webhook processed'),
            )
            .catch((error: unknown) =>
              request.log.error(
                { err: error, eventId: stored.eventId },
                'payment webhook processing failed; the job retries',
              ),
            )
            .finally(() => inFlight.delete(run));
          inFlight.add(run);
        }
        return reply.code(200).type('text/plain; charset=utf-8').send('ok');
      },
    );
  });
}
