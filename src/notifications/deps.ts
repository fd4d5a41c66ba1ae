import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Mailer } from '../providers/email/mailer.ts';
import type { PushApi } from '../push/module.ts';

/**
 * What notifications needs: its own tables (the inbox, broadcasts and polls, the switches), the
 * clock, the queue its delivery jobs go through, the mailer, and what other modules own: the users'
 * verified addresses (auth) and their devices (push).
 */
export type NotificationsDeps = {
  db: Kysely<DB>;
  clock: Clock;
  jobs: JobQueue;
  mailer: Mailer;
  /** Operations alerts go to the inboxes of the users with these phones (E.164). */
  adminPhones: ReadonlySet<string>;
  /**
   * auth: the verified email address of each of these users that has one, by user id, read on the
   * handle given (the inbox decides whom to email in its own transaction).
   */
  verifiedEmailsOf: (
    db: Kysely<DB> | Transaction<DB>,
    userIds: readonly string[],
  ) => Promise<ReadonlyMap<string, string>>;
  /** push: who has a device, the devices, and sending to them. */
  push: PushApi;
  /** auth: the ids of the users with these phones (E.164), those who exist: the administrators. */
  findUserIdsByPhones: (phones: string[]) => Promise<string[]>;
};
