import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkoutContentSecurityPolicy, checkoutPage, unknownCheckoutPage } from './checkout-page.ts';
import { routeOptions } from './requests.ts';
import { customerOf, type PaymentsSimulator, sendChargeSuccess } from './simulator.ts';

// The hosted checkout page of an initialized transaction, /__sandbox/checkout/<reference>. Pay makes
// the transaction "success" (channel card, paid_at = the sandbox clock) and sends charge.success;
// Decline makes it "failed" and sends nothing (Paystack sends webhooks for successful charges only).
// Either outcome is final: a second press (or a reload) does nothing.

const outcomes = ['pay', 'decline'] as const;
type Outcome = (typeof outcomes)[number];

export function registerCheckoutRoutes(sandbox: FastifyInstance, sim: PaymentsSimulator): void {
  sandbox.get('/__sandbox/checkout/:reference', routeOptions, async (request, reply) =>
    showCheckout(sim, request, reply),
  );
  for (const outcome of outcomes) {
    sandbox.post(`/__sandbox/checkout/:reference/${outcome}`, routeOptions, async (request, reply) =>
      answerCheckout(sim, outcome, request, reply),
    );
  }
}

function showCheckout(sim: PaymentsSimulator, request: FastifyRequest, reply: FastifyReply) {
  const { reference } = request.params as { reference: string };
  const transaction = sim.payments.transactions.get(reference);
  if (transaction === undefined) return html(reply, 404, unknownCheckoutPage(reference));
  return html(reply, 200, checkoutPage(transaction, customerOf(sim.payments, transaction.customerCode)));
}

function answerCheckout(
  sim: PaymentsSimulator,
  outcome: Outcome,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const { reference } = request.params as { reference: string };
  const transaction = sim.payments.transactions.get(reference);
  if (transaction === undefined) return html(reply, 404, unknownCheckoutPage(reference));
  // Only an unpaid transaction changes.
  if (transaction.status === 'abandoned') {
    if (outcome === 'pay') {
      transaction.status = 'success';
      transaction.paidAt = sim.clock.now();
      sendChargeSuccess(sim, transaction);
    } else {
      transaction.status = 'failed';
    }
  }
  return reply.redirect(`/__sandbox/checkout/${encodeURIComponent(reference)}`, 303);
}

function html(reply: FastifyReply, status: number, body: string) {
  return reply
    .code(status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', checkoutContentSecurityPolicy)
    .header('referrer-policy', 'no-referrer')
    .send(body);
}
