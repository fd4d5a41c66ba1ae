import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Context } from '../context.ts';
import { toE164 } from '../phone.ts';
import { registerSandboxKyc } from './kyc-provider.ts';
import { registerSandboxLivenessPage } from './liveness-page.ts';
import { registerSandboxPayments } from './payment-provider.ts';
import { SANDBOX_SMS_API_KEY, type SandboxState } from './state.ts';
import { registerSandboxAirtimeCash } from './vtu/airtime-cash.ts';
import { registerSandboxBills } from './vtu/bills.ts';
import { registerSandboxData } from './vtu/data.ts';
import { registerSandboxSocial } from './vtu/social.ts';

// The sandbox's simulated outside parties, mounted under /__sandbox/. Each speaks its party's real
// wire format, and the service reaches it over HTTP through the same adapter it uses in production.

const rateLimitOff = { rateLimit: false } as const;
const hidden = { hide: true } as const;

/** The service's inbound payment webhook (shared/SPEC.md, "Inbound webhook endpoint"). */
export const paymentWebhookPath = '/api/public/payments/webhook/payment';

export function registerSandbox(app: FastifyInstance, ctx: Context, state: SandboxState): void {
  // The KYC provider (Dojah's wire shape) under /__sandbox/kyc, and its browser widget.
  registerSandboxKyc(app, state);
  registerSandboxLivenessPage(app);

  // The payment provider (Paystack's wire shape) under /__sandbox/payments, its checkout page, the
  // bank-transfer and webhook-mode controls. Its secret key is PAYMENT_SIGNING_SECRET, which signs the
  // webhooks it sends to the service's own endpoint.
  const { vtu } = ctx.config;
  /** The VTU simulator whose bank account this is (each provider's funding account), if any. */
  const simulatorFloat = (accountNumber: string): { balanceKobo: bigint } | undefined =>
    new Map<string, { balanceKobo: bigint }>([
      [vtu.data.funding.accountNumber, state.data],
      [vtu.bills.funding.accountNumber, state.bills],
      [vtu.social.funding.accountNumber, state.social],
    ]).get(accountNumber);
  registerSandboxPayments(app, state, {
    clock: ctx.clock,
    signingSecret: ctx.config.secrets.paymentSigning,
    webhookUrl: () => `${ctx.baseUrl.current}${paymentWebhookPath}`,
    publicBaseUrl: () => ctx.baseUrl.current,
    // A transfer into a VTU provider's configured bank account tops up that simulator's balance; its
    // reversal takes the money back out, as the provider's float would lose it.
    onTransferSettled: (accountNumber, amountKobo) => {
      const float = simulatorFloat(accountNumber);
      if (float !== undefined) float.balanceKobo += amountKobo;
    },
    onTransferReversed: (accountNumber, amountKobo) => {
      const float = simulatorFloat(accountNumber);
      if (float !== undefined) float.balanceKobo -= amountKobo;
    },
  });

  // The VTU providers under /__sandbox/vtu/<data|bills|social>, each with its settable balance at
  // /__sandbox/providers/<name>/balance (API.md section 8).
  registerSandboxData(app, state.data, { clock: ctx.clock });
  registerSandboxBills(app, state.bills, { clock: ctx.clock });
  registerSandboxSocial(app, state.social, { clock: ctx.clock });
  // The airtime-to-cash provider (VTU Africa's Airtime2Cash) under /__sandbox/vtu/airtime-cash/portal/api.
  registerSandboxAirtimeCash(app, state.airtimeCash, { clock: ctx.clock });

  // The SMS gateway (Termii's wire shape): accepts a message and remembers the last one per phone.
  app.post(
    '/__sandbox/sms-gateway/api/sms/send',
    { schema: hidden, config: rateLimitOff },
    async (request, reply) => {
      const body = z
        .object({
          api_key: z.string(),
          to: z.string(),
          from: z.string(),
          sms: z.string(),
          type: z.string(),
          channel: z.string(),
        })
        .safeParse(request.body);
      if (!body.success) return reply.code(400).send({ message: 'invalid request' });
      if (body.data.api_key !== SANDBOX_SMS_API_KEY)
        return reply.code(401).send({ message: 'invalid api key' });
      const phone = toE164(body.data.to);
      if (phone === null) return reply.code(400).send({ message: 'invalid destination' });
      const code = /\b(\d{6})\b/.exec(body.data.sms)?.[1] ?? null;
      state.lastSms.set(phone, {
        phone,
        message: body.data.sms,
        code,
        sentAt: ctx.clock.now().toISOString(),
      });
      return {
        message_id: crypto.randomUUID(),
        message: 'Successfully Sent',
        balance: 1000,
        user: 'billrail sandbox',
      };
    },
  );

  // What a tester's phone would have received.
  app.get('/__sandbox/sms', { schema: hidden, config: rateLimitOff }, async (request, reply) => {
    const raw = (request.query as { phone?: unknown }).phone;
    const phone = typeof raw === 'string' ? toE164(raw) : null;
    if (phone === null) {
      return reply
        .code(400)
        .send({ success: false, error: { code: 'VALIDATION_ERROR', message: 'phone is required' } });
    }
    const sms = state.lastSms.get(phone);
    if (sms === undefined) {
      return reply
        .code(404)
        .send({ success: false, error: { code: 'NOT_FOUND', message: 'no SMS sent to this phone' } });
    }
    return { success: true, data: sms };
  });

  // What the operations inbox would have received: the newest first, at most `limit` (default 20).
  app.get('/__sandbox/emails', { schema: hidden, config: rateLimitOff }, async (request, reply) => {
    const query = z
      .object({ to: z.email(), limit: z.coerce.number().int().min(1).max(100).default(20) })
      .strict()
      .safeParse(request.query);
    if (!query.success) {
      return reply.code(400).send({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'to: an email address; limit: 1 to 100' },
      });
    }
    const to = query.data.to.toLowerCase();
    const emails = state.emails.filter((e) => e.to.toLowerCase() === to);
    return { success: true, data: emails.slice(-query.data.limit).reverse() };
  });

  app.get('/__sandbox/clock', { schema: hidden, config: rateLimitOff }, async () => ({
    success: true,
    data: { now: ctx.clock.now().toISOString() },
  }));

  app.post('/__sandbox/clock', { schema: hidden, config: rateLimitOff }, async (request, reply) => {
    const body = z
      .object({
        advanceSeconds: z
          .number()
          .int()
          .min(0)
          .max(10 * 365 * 24 * 60 * 60),
      })
      .strict()
      .safeParse(request.body);
    if (!body.success || ctx.sandboxClock === undefined) {
      return reply.code(400).send({
        success: false,
        error: { code: 'VALIDATION_ERROR', message: 'advanceSeconds: a whole number of seconds ≥ 0' },
      });
    }
    ctx.sandboxClock.advance(body.data.advanceSeconds);
    // Whatever became due by the new time happens before the answer, so a client sees its effects.
    await ctx.jobs.runClockDrivenJobs();
    return { success: true, data: { now: ctx.clock.now().toISOString() } };
  });
}
