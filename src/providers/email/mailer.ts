import nodemailer, { type Transporter } from 'nodemailer';

// Transactional email (SPEC.md item 9: triggered by platform events, never sent on request). The
// real mailer speaks SMTP through nodemailer; in the sandbox the same nodemailer path renders the
// message with its JSON transport and hands it to the sandbox's mailbox instead of a server.

/** Text always; HTML too for the transactional templates (the text is its plain alternative). */
export type EmailMessage = { to: string; subject: string; text: string; html?: string };

export type Mailer = {
  send(message: EmailMessage): Promise<void>;
};

export class EmailDeliveryError extends Error {
  override name = 'EmailDeliveryError';
}

/** What the JSON transport renders: the fields the sandbox keeps. */
export type RenderedEmail = {
  messageId: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html?: string;
};

function wrap(
  transporter: Transporter,
  from: string,
  onSent?: (info: unknown) => void | Promise<void>,
): Mailer {
  return {
    async send(message) {
      try {
        const info: unknown = await transporter.sendMail({
          from,
          to: message.to,
          subject: message.subject,
          text: message.text,
          ...(message.html !== undefined ? { html: message.html } : {}),
        });
        // Delivery is part of sending: a mailbox that refuses it fails the send (the job retries).
        await onSent?.(info);
      } catch (error) {
        throw new EmailDeliveryError(`email to ${message.to} was not accepted: ${(error as Error).message}`, {
          cause: error,
        });
      }
    },
  };
}

export type SmtpMailerOptions = {
  /** smtp://user:pass@host:587 (STARTTLS when offered) or smtps://user:pass@host:465 (TLS from the start). */
  url: string;
  from: string;
  /** Connecting, the server's greeting and each socket read: a stuck server fails the job, which retries. */
  timeoutMs: number;
};

export function createSmtpMailer(options: SmtpMailerOptions): Mailer {
  const url = new URL(options.url);
  const secure = url.protocol === 'smtps:';
  const transporter = nodemailer.createTransport({
    host: url.hostname,
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(url.username !== ''
      ? { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }
      : {}),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  return wrap(transporter, options.from);
}

/**
 * The same nodemailer path with its JSON transport: the message is rendered, not sent, and given to
 * `deliver` (the sandbox's mailbox).
 */
export function createJsonTransportMailer(options: {
  from: string;
  deliver: (email: RenderedEmail) => void | Promise<void>;
}): Mailer {
  const transporter = nodemailer.createTransport({ jsonTransport: true });
  return wrap(transporter, options.from, async (info) => {
    const { messageId, message } = info as { messageId: string; message: string };
    const parsed = JSON.parse(message) as {
      from: { address: string; name: string };
      to: Array<{ address: string }>;
      subject: string;
      text: string;
      html?: string;
    };
    for (const to of parsed.to) {
      await options.deliver({
        messageId,
        from: parsed.from.name !== '' ? `${parsed.from.name} <${parsed.from.address}>` : parsed.from.address,
        to: to.address,
        subject: parsed.subject,
        text: parsed.text,
        ...(parsed.html !== undefined ? { html: parsed.html } : {}),
      });
    }
  });
}

/** The sandbox mailbox's way in over HTTP (a sandbox that runs as its own process). */
export const sandboxMailboxPath = '/__sandbox/mailbox/messages';

/**
 * The sandbox's mailbox when the sandbox runs as its own process (SANDBOX_URL): the same JSON
 * transport renders each message, which is posted to the mailbox's way in, one per recipient.
 */
export function createHttpMailboxMailer(options: {
  sandboxUrl: string;
  from: string;
  timeoutMs: number;
}): Mailer {
  const url = `${options.sandboxUrl}${sandboxMailboxPath}`;
  return createJsonTransportMailer({
    from: options.from,
    deliver: async (email) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(email),
        redirect: 'manual',
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`the sandbox mailbox answered HTTP ${response.status}`);
    },
  });
}
