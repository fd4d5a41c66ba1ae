import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import { jobDefinition } from '../jobs/queue.ts';
import type { DomainModule } from '../module.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import { alertEmailJob, emailAlert, findAlert, raiseAlert, type StoredAlert } from './alerts.ts';
import { alertOperations } from './ops.ts';

// Operations alerts (alerts.ts): raised by any domain inside its own transaction, emailed to
// OPS_EMAIL and put in the administrators' inboxes by the job below, listed by adminListAlerts.

export type AlertsModuleDeps = {
  /** Where alerts are stored and read back for their email and the listing (alerts.ts). */
  db: Kysely<DB>;
  /** Sends an alert's email to OPS_EMAIL (the job below). */
  mailer: Mailer;
  /** Where alerts are emailed; nothing is sent while it is unset. */
  opsEmail: string | undefined;
  /** Puts one alert in every administrator's inbox, once per alert and administrator (notifications). */
  deliverToAdmins: (alert: StoredAlert) => Promise<unknown>;
};

export type AlertsModule = DomainModule & {
  api: {
    /** Stores an alert and enqueues its email, in the caller's transaction (alerts.ts). */
    raiseAlert: typeof raiseAlert;
  };
};

export function createAlertsModule(deps: AlertsModuleDeps): AlertsModule {
  return {
    operations: alertOperations(deps),
    jobs: [
      jobDefinition(alertEmailJob, {
        // The email of an operations alert, enqueued with the alert, and its entry in admins'
        // inboxes. Retried with backoff (an SMTP server that is down for a while); nothing is
        // emailed when OPS_EMAIL is unset.
        retryLimit: 8,
        retryDelaySeconds: 30,
        expireInSeconds: 120,
        handler: async ({ alertId }) => {
          // The administrators' inboxes first: once per alert, so a retry after a failed email
          // adds nothing there.
          const alert = await findAlert(deps.db, alertId);
          if (alert !== undefined) await deps.deliverToAdmins(alert);
          await emailAlert(deps, alertId);
        },
      }),
    ],
    subscribers: [],
    api: { raiseAlert },
  };
}
