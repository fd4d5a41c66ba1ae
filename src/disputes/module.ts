import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { everyRow } from '../paging.ts';
import type { VtuApi } from '../vtu/module.ts';
import type { MovesWallet } from '../wallet/module.ts';
import { openDisputesOf } from './account-closure.ts';
import { disputeOperations } from './ops.ts';
import { disputePostings } from './postings.ts';
import type { DisputeView } from './schemas.ts';
import { listMyDisputes } from './service.ts';

// Disputes (API.md section 16): a person reports a problem with a transaction they own, an operator
// resolves it with a refund (one posting, once) or a decline, and the person is told (the
// `disputes.resolved` event, which the notifications module turns into the inbox, email and push).
// It asks the purchases about a disputed purchase through their api (purchaseRecord), never their
// tables. No jobs; a closing account asks about the person's open disputes, and the data export
// reads them all, through the api.

export type DisputesModuleDeps = {
  /** Where disputes are stored, and the ledger a refund is posted to (service.ts, postings.ts). */
  db: Kysely<DB>;
  /** When a dispute was reported or resolved, and whether a movement is still in its window. */
  clock: Clock;
  /** Enqueues the `disputes.resolved` event in the resolution's transaction. */
  jobs: JobQueue;
  /** How many days after a movement it may still be reported (DISPUTE_WINDOW_DAYS). */
  windowDays: number;
  /** What the purchases keep about one of a user's purchases (the vtu module's api). */
  purchaseRecord: VtuApi['purchaseRecord'];
  /** The phones of users by id (the auth module's api): whom an operator would call. */
  phonesOf: AuthApi['phonesOf'];
};

export type DisputesApi = {
  /** Every problem the person reported and its outcome, newest first (their data export). */
  personalDataOf(userId: string): Promise<DisputeView[]>;
  /** How many of the person's disputes are open, on the handle given (a closing account's reasons). */
  openDisputesOf: typeof openDisputesOf;
};

export function createDisputesModule(
  deps: DisputesModuleDeps,
): DomainModule & MovesWallet & { api: DisputesApi } {
  return {
    ...emptyModule,
    operations: disputeOperations(deps),
    // An operator's refund of a disputed movement.
    movementKinds: [{ kind: 'dispute_refund', reference: disputePostings.refund }],
    api: {
      personalDataOf: async (userId) => (await listMyDisputes(deps, userId, {}, everyRow)).items,
      openDisputesOf,
    },
  };
}
