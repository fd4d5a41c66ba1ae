import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { toE164 } from '../phone.ts';
import { SANDBOX_SMS_API_KEY, type SandboxState } from './state.ts';

// The SMS gateway (Termii's wire shape), which accepts a message and remembers the last one per
// phone, and what a tester's phone and the operations inbox would have received (API.md section 8).

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const smsRequest = z.object({
  api_key: z.string(),
  to: z.string(),
  from: z.string(),
  sms: z.string(),
  type: z.string(),
  channel: z.string(),
});

const emailsQuery = z
  .object({ to: z.email(), limit: z.coerce.number().int().min(1).max(100).default(20) })
  .strict();

export function registerSandboxMessages(app: FastifyInstance, state: SandboxState, clock: Clock): void {
  app.post('/__sandbox/sms-gateway/api/sms/send', routeOptions, async (request, reply) =>
    sendSms(state, clock, request, reply),
  );
  app.get('/__sandbox/sms', routeOptions, async (request, reply) => lastSms(state, request, reply));
  app.get('/__sandbox/emails', routeOptions, async (request, reply) => emails(state, request, reply));
}

function sendSms(state: SandboxState, clock: Clock, request: FastifyRequest, reply: FastifyReply) {
  const body = smsRequest.safeParse(request.body);
  if (!body.success) return reply.code(400).send({ message: 'invalid request' });
  if (body.data.api_key !== SANDBOX_SMS_API_KEY) return reply.code(401).send({ message: 'invalid api key' });
  const phone = toE164(body.data.to);
  if (phone === null) return reply.code(400).send({ message: 'invalid destination' });
  const code = /\b(\d{6})\b/.exec(body.data.sms)?.[1] ?? null;
  state.lastSms.set(phone, { phone, message: body.data.sms, code, sentAt: clock.now().toISOString() });
  return {
    message_id: crypto.randomUUID(),
    message: 'Successfully Sent',
    balance: 1000,
    user: 'billrail sandbox',
  };
}

/** What a tester's phone would have received: the last SMS to it. */
function lastSms(state: SandboxState, request: FastifyRequest, reply: FastifyReply) {
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
}

/** What the operations inbox would have received: the newest first, at most `limit` (default 20). */
function emails(state: SandboxState, request: FastifyRequest, reply: FastifyReply) {
  const query = emailsQuery.safeParse(request.query);
  if (!query.success) {
    return reply.code(400).send({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'to: an email address; limit: 1 to 100' },
    });
  }
  const to = query.data.to.toLowerCase();
  const received = state.emails.filter((e) => e.to.toLowerCase() === to);
  return { success: true, data: received.slice(-query.data.limit).reverse() };
}
