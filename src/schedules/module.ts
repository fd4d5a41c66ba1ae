import { type DomainModule, emptyModule } from '../module.ts';
import { scheduleOperations } from './ops.ts';
import { JOB_SCHEDULES_RUN_DUE, runDueSchedules } from './runner.ts';
import type { ScheduleDeps } from './service.ts';

// Scheduled purchases (API.md section 16): created, listed, paused, resumed and cancelled by their
// owner (service.ts), and run by one job every minute (runner.ts) through the vtu module's api, so a
// run is an ordinary purchase of the one pipeline. Skips and pauses are domain events the
// notifications module puts in the person's inbox.

export type SchedulesModuleDeps = ScheduleDeps;

export function createSchedulesModule(deps: SchedulesModuleDeps): DomainModule {
  return {
    ...emptyModule,
    operations: scheduleOperations(deps),
    jobs: [
      {
        // The schedules due now, in batches; safe to run twice or on several workers at once (each
        // run is claimed under a row lock and its purchase is fenced on the claim, runner.ts).
        name: JOB_SCHEDULES_RUN_DUE,
        cron: '* * * * *',
        retryLimit: 1,
        retryDelaySeconds: 30,
        expireInSeconds: 600,
        runOnClockAdvance: true,
        handler: async () => {
          const counts = await runDueSchedules(deps);
          if (counts.claimed > 0) deps.logger.info({ counts }, 'scheduled purchases run');
        },
      },
    ],
  };
}
