import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { type JobQueue, jobDefinition } from '../jobs/queue.ts';
import { type DomainModule, emptyModule } from '../module.ts';
import { everyRow } from '../paging.ts';
import type { VtuApi } from '../vtu/module.ts';
import { deleteSchedulesOf, openSchedulesOf } from './account-closure.ts';
import { scheduleOperations } from './ops.ts';
import { runDueSchedules, schedulesRunDueJob } from './runner.ts';
import type { ScheduleView } from './schemas.ts';
import { listSchedules } from './service.ts';

// Scheduled purchases (API.md section 16): created, listed, paused, resumed and cancelled by their
// owner (service.ts), and run by one job every minute (runner.ts) through the vtu module's api, so a
// run is an ordinary purchase of the one pipeline. Skips and pauses are domain events the
// notifications module puts in the person's inbox.

/**
 * Everything the schedules are given (createModules). The service and the runner take the part
 * they need (ScheduleDeps in service.ts), which the compiler checks these satisfy.
 */
export type SchedulesModuleDeps = {
  /** The database: this module's table (schedules), its runs claimed under a row lock. */
  db: Kysely<DB>;
  /** The service clock: when a schedule is due, and what is due now. */
  clock: Clock;
  /** The job queue the skips' and pauses' domain events are published through, in their transactions. */
  jobs: JobQueue;
  /** The runner's lines: the runs made, and a run that failed and runs again. */
  logger: Logger;
  /**
   * Vtu's api: the PIN's approval, an operator's pause of the service (a run is then skipped), a
   * run's checks and price, and the one purchase pipeline.
   */
  vtu: Pick<
    VtuApi,
    'authorise' | 'requireOpen' | 'orderFor' | 'buyTogether' | 'chargeOf' | 'purchaseReference'
  >;
  /** The schedules' config slice (config.schedules). */
  config: {
    /** Runs the wallet could not cover in a row that pause a schedule (SCHEDULE_SKIPS_MAX). */
    skipsMax: number;
  };
};

export type SchedulesApi = {
  /** Every schedule of the person, whatever its status, newest first (their data export). */
  personalDataOf(userId: string): Promise<ScheduleView[]>;
  /** How many of the person's schedules are open (active or paused), on the handle given (a closing account's). */
  openSchedulesOf: typeof openSchedulesOf;
  /** Deletes every schedule of the person, in the closing account's transaction. */
  deleteSchedulesOf: typeof deleteSchedulesOf;
};

export function createSchedulesModule(deps: SchedulesModuleDeps): DomainModule & { api: SchedulesApi } {
  return {
    ...emptyModule,
    operations: scheduleOperations(deps),
    jobs: [
      jobDefinition(schedulesRunDueJob, {
        // The schedules due now, in batches; safe to run twice or on several workers at once (each
        // run is claimed under a row lock and its purchase is fenced on the claim, runner.ts).
        cron: '* * * * *',
        retryLimit: 1,
        retryDelaySeconds: 30,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const counts = await runDueSchedules(deps);
          if (counts.claimed > 0) deps.logger.info({ counts }, 'scheduled purchases run');
        },
      }),
    ],
    api: {
      personalDataOf: async (userId) => (await listSchedules(deps.db, userId, undefined, everyRow)).items,
      openSchedulesOf,
      deleteSchedulesOf,
    },
  };
}
