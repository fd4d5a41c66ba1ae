import type { Clock } from '../clock.ts';
import { createJsonTransportMailer, type Mailer } from '../providers/email/mailer.ts';
import { type SandboxState, sandboxEmailsMax } from './state.ts';

/** The sandbox's mail server: nodemailer renders each message and the mailbox keeps it in SandboxState. */
export function createSandboxMailer(state: SandboxState, clock: Clock, from: string): Mailer {
  return createJsonTransportMailer({
    from,
    deliver: (email) => {
      state.emails.push({ ...email, sentAt: clock.now().toISOString() });
      if (state.emails.length > sandboxEmailsMax)
        state.emails.splice(0, state.emails.length - sandboxEmailsMax);
    },
  });
}
