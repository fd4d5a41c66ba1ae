import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { defineJob, noPayload } from '../jobs/job.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import { type DomainModule, on } from '../module.ts';
import { dailyDebitAdmission, dailyDebitRule, giveBackRoom } from './daily-debits.ts';
import {
  announceHeld,
  type CreditSplit,
  createReleaseSweep,
  creditEntries,
  releaseHeld,
  splitCredits,
} from './held-balance.ts';
import { limitsOperations } from './ops.ts';

export type { CreditSplit };

// CBN tier limits (API.md 17.2, decisions 0044 and 0045): the daily debit limit every movement out of
// a person is judged by under their wallet's lock, the maximum balance whose excess is held and
// released by itself, and the person's view and own limit. The other domains call its api inside
// their own transactions: the purchases through the debit rule, transfers through an admission,
// refunds to give room back, and every credit from outside the person to split at the maximum.

export type LimitsModuleDeps = {
  /** The database: account_limits, and the ledger's wallet and held accounts it locks and moves. */
  db: Kysely<DB>;
  /** The Lagos day a debit counts on; when a release happens. */
  clock: Clock;
  /** The queue the held and released events are published through, in their transactions. */
  jobs: JobQueue;
  /** The release sweep's line when it moved something. */
  logger: Logger;
  /** The limits of each tier, kobo (LIMIT_TIER<n>_DAILY / _BALANCE). */
  config: Config['limits'];
  /** Auth's api: each person's tier, read under their wallet's lock. */
  tiersAmong: AuthApi['tiersAmong'];
  /** Auth's api: the PIN that guards a change of the person's own limit. */
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
};

type Debit = { userId: string; amountKobo: bigint };

export type LimitsApi = {
  /**
   * The daily debit limit as a purchase rule (vtu's DebitRule, by its shape: this module imports no
   * purchase code): every purchase, bulk order and scheduled run.
   */
  dailyDebitRule: ReturnType<typeof dailyDebitRule>;
  /**
   * The daily debit limit as the admission of one posting that takes `debit` out of a person (a
   * transfer): prepared under the posting's wallet lock, `save` once the posting is accepted.
   */
  dailyDebitAdmission(
    trx: Transaction<DB>,
    debit: Debit,
    now: Date,
  ): { prepare(): Promise<void>; admit(): Error | null; save(): Promise<void> };
  /** Refunds give their room back to the day their debit was accepted on; under the refund's wallet locks. */
  giveBackRoom(
    trx: Transaction<DB>,
    refunds: ReadonlyArray<Debit & { acceptedAt: Date }>,
    now: Date,
  ): Promise<void>;
  /**
   * Splits credits from outside the person (top-ups, bank deposits, transfers in, adjustments) at
   * their maximum balance: locks their wallets (and `alsoLocked` people's) first; post right after
   * with `creditEntries`, then `announceHeld` for the postings accepted.
   */
  splitCredits(
    trx: Transaction<DB>,
    credits: ReadonlyArray<Debit>,
    alsoLocked?: readonly string[],
  ): Promise<CreditSplit[]>;
  creditEntries: typeof creditEntries;
  announceHeld(trx: Transaction<DB>, splits: readonly CreditSplit[], now: Date): Promise<void>;
};

export const heldReleaseSweepJob = defineJob('limits.release-held', noPayload);

/** People looked at per sweep: the rest are the next minute's. */
const sweepMax = 500;

export function createLimitsModule(deps: LimitsModuleDeps): DomainModule & { api: LimitsApi } {
  const judge = { limits: deps.config, tiersAmong: deps.tiersAmong };
  const held = { db: deps.db, jobs: deps.jobs, limits: deps.config, tiersAmong: deps.tiersAmong };
  const release = (userId: string) => releaseHeld(held, userId, deps.clock.now());
  const sweep = createReleaseSweep(held, () => deps.clock.now(), sweepMax);
  return {
    operations: limitsOperations({
      db: deps.db,
      limits: deps.config,
      tiersAmong: deps.tiersAmong,
      now: () => deps.clock.now(),
      verifyTransactionPin: (userId, pin) => deps.verifyTransactionPin(userId, pin),
    }),
    jobs: [
      jobDefinition(heldReleaseSweepJob, {
        // A held balance moves in as soon as there is room: the balance fell (a purchase, a lock) or
        // the limits changed. Every minute, so within a minute; safe to run twice (each release is
        // decided under the locks on what is still held).
        cron: '* * * * *',
        retryLimit: 2,
        retryDelaySeconds: 10,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const moved = await sweep();
          if (moved > 0n) deps.logger.info({ movedKobo: moved.toString() }, 'held balances released');
        },
      }),
    ],
    // A tier approved raises the maximum: the held balance moves in at once, not at the next sweep.
    subscribers: [
      on('kyc.tier_approved', async (event) => {
        await release(event.userId);
      }),
    ],
    api: {
      dailyDebitRule: dailyDebitRule(judge),
      dailyDebitAdmission: (trx, debit, now) => dailyDebitAdmission(judge, trx, debit, now),
      giveBackRoom,
      splitCredits: (trx, credits, alsoLocked) => splitCredits(held, trx, credits, alsoLocked),
      creditEntries,
      announceHeld: (trx, splits, now) => announceHeld(held, trx, splits, now),
    },
  };
}
