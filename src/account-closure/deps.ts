import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { AlertsModule } from '../alerts/module.ts';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';

// What closing an account is given (createModules): its own table and the functions of the domains
// whose state it reads or changes, each taking the caller's transaction where it decides in one.
// Apart from module.ts so that the service files take their part of it without an import cycle.

type Handle = Kysely<DB> | Transaction<DB>;

/** Everything the module is given; module.ts builds it from these. */
export type AccountClosureModuleDeps = {
  /** The database: this module's table (account_closures), and the transactions the others' functions join. */
  db: Kysely<DB>;
  /** When a request is made, when it takes effect, and when retention ends. */
  clock: Clock;
  /** The job queue the requests' and cancellations' domain events are published through. */
  jobs: JobQueue;
  /** The jobs' lines when they closed, cancelled or erased something. */
  logger: Logger;
  /** ACCOUNT_DELETION_GRACE_DAYS and RETENTION_YEARS. */
  config: Config['accountClosure'];
  /** Auth's api: the transaction PIN, checked as a transfer checks it. */
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
  /** Auth's api: ends the sessions and puts a pseudonym in place of the phone, names and email. */
  closeUser: AuthApi['closeUser'];
  /** Vtu's api: the person's purchases still processing (purchases_processing). */
  processingPurchasesOf: (db: Handle, userId: string) => Promise<number>;
  /** Disputes' api: the person's open disputes (open_dispute). */
  openDisputesOf: (db: Handle, userId: string) => Promise<number>;
  /** Savings' api: the person's active locks (active_savings). */
  activeLocksOf: (db: Handle, userId: string) => Promise<number>;
  /** Schedules' api: the person's open schedules, active or paused (active_schedules). */
  openSchedulesOf: (db: Handle, userId: string) => Promise<number>;
  /** Schedules' api: deletes the person's schedules in the closing transaction. */
  deleteSchedulesOf: (trx: Transaction<DB>, userId: string) => Promise<number>;
  /** Beneficiaries' api: deletes the person's saved recipients in the closing transaction. */
  deleteBeneficiariesOf: (trx: Transaction<DB>, userId: string) => Promise<number>;
  /** Notifications' api: deletes the person's inbox and switches in the closing transaction. */
  forgetInboxOf: (trx: Transaction<DB>, userId: string) => Promise<number>;
  /** Push's api: deletes the person's push subscriptions in the closing transaction. */
  forgetDevicesOf: (trx: Transaction<DB>, userId: string) => Promise<number>;
  /** Kyc's api: the person's submissions let go of their NIN, in the closing transaction. */
  releaseIdentityOf: (trx: Transaction<DB>, userId: string, now: Date) => Promise<void>;
  /** Alerts' api: an operator is told of money that reached a closed account (closed-credits.ts). */
  raiseAlert: AlertsModule['api']['raiseAlert'];
  /** Kyc's api: erases the person's documents and submissions once retention has passed. */
  eraseKycRecordsOf: (userId: string) => Promise<{ documents: number; submissions: number }>;
};
