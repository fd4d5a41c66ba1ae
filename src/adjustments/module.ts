import type { Kysely } from 'kysely';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { LimitsApi } from '../limits/module.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import type { MovesWallet } from '../wallet/module.ts';
import { adjustmentOperations } from './ops.ts';
import { adjustmentPostings } from './postings.ts';

// Adjustments, four eyes (API.md section 17.4): an operator proposes a correction of a person's
// wallet, another approves it (one posting against the `adjustments` system account, once, under
// the adjustment's row lock: decisions.ts) or either rejects it. The person sees an approved one in
// their wallet history as kind `adjustment`, with the reason. No jobs, and nothing another domain calls.

export type AdjustmentsModuleDeps = {
  /** Where adjustments are stored, and the ledger an approval is posted to (service.ts, decisions.ts). */
  db: Kysely<DB>;
  /** When an adjustment was proposed, approved or rejected, and the posting's time. */
  clock: Clock;
  /** The job queue the approval's domain event is published through, in its transaction. */
  jobs: JobQueue;
  /** The person to adjust, by id (auth's api): a proposal for no one is 404. */
  findUserById: AuthApi['findUserById'];
  /** The phones of users by id (auth's api): whom the operators are correcting. */
  phonesOf: AuthApi['phonesOf'];
  /**
   * Limits' api: a credit is never refused for the person's maximum balance; the part over it is
   * held and the person told (API.md 17.2).
   */
  limits: Pick<LimitsApi, 'splitCredits' | 'creditEntries' | 'announceHeld'>;
};

export function createAdjustmentsModule(deps: AdjustmentsModuleDeps): DomainModule & MovesWallet {
  return {
    ...emptyModule,
    operations: adjustmentOperations(deps),
    // An approved adjustment, credit or debit: one posting, under the adjustment's reference.
    movementKinds: [{ kind: 'adjustment', reference: adjustmentPostings.posting }],
  };
}
