import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import {
  createJsonTransportMailer,
  type Mailer,
  type RenderedEmail,
  sandboxMailboxPath,
} from '../providers/email/mailer.ts';
import { type SandboxState, sandboxEmailsMax } from './state.ts';

/** The sandbox's mail server: nodemailer renders each message and the mailbox keeps it in SandboxState. */
export function createSandboxMailer(state: SandboxState, clock: Clock, from: string): Mailer {
  return createJsonTransportMailer({ from, deliver: (email) => keepEmail(state, clock, email) });
}

function keepEmail(state: SandboxState, clock: Clock, email: RenderedEmail): void {
  state.emails.push({ ...email, sentAt: clock.now().toISOString() });
  if (state.emails.length > sandboxEmailsMax) state.emails.splice(0, state.emails.length - sandboxEmailsMax);
}

const text = (max: number) => z.string().max(max);
const renderedEmail = z
  .object({
    messageId: text(1_000),
    from: text(1_000),
    to: z.email(),
    subject: text(10_000),
    text: text(1_000_000),
    html: text(2_000_000).optional(),
  })
  .strict();

/**
 * The mailbox's way in over HTTP (POST /__sandbox/mailbox/messages, hidden), for the services that
 * use a sandbox running as its own process: the JSON transport's rendering of one message to one
 * recipient (createHttpMailboxMailer), kept as the in-process mailer keeps it. A bad body is a 400.
 */
export function registerSandboxMailbox(app: FastifyInstance, state: SandboxState, clock: Clock): void {
  app.post(
    sandboxMailboxPath,
    { schema: { hide: true }, config: { rateLimit: false }, bodyLimit: 4 * 1024 * 1024 },
    async (request, reply) => {
      const body = renderedEmail.safeParse(request.body);
      if (!body.success) {
        return reply.code(400).send({
          success: false,
          error: {
            code: 'VALIDATION_ERROR',
            message: 'a rendered email: messageId, from, to, subject, text',
          },
        });
      }
      const { html, ...rest } = body.data;
      keepEmail(state, clock, { ...rest, ...(html !== undefined ? { html } : {}) });
      return reply.code(201).send({ success: true });
    },
  );
}
