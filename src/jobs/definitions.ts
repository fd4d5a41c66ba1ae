import type { Context } from '../context.ts';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency-store.ts';
import type { JobDefinition } from './queue.ts';

export const JOB_MAINTENANCE = 'maintenance.purge-expired';

/** Every job the service knows. Each domain adds its own here as it arrives. */
export function jobDefinitions(ctx: Context): JobDefinition[] {
  return [
    {
      // Idempotency keys are kept 24 h; then they are deleted. (Sessions: the auth module's job.)
      name: JOB_MAINTENANCE,
      cron: '*/15 * * * *',
      retryLimit: 3,
      retryDelaySeconds: 30,
      expireInSeconds: 300,
      runOnClockAdvance: true,
      handler: async () => {
        await purgeExpiredIdempotencyKeys(ctx.db, ctx.clock.now());
      },
    },
  ];
}
