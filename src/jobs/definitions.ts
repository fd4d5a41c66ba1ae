import type { Context } from '../context.ts';
import { purgeExpiredIdempotencyKeys } from '../http/idempotency-store.ts';
import { requeryOptions } from '../vtu/deps.ts';
import { JOB_VTU_DISPATCH, JOB_VTU_REQUERY } from '../vtu/dispatch.ts';
import type { JobDefinition } from './queue.ts';

export const JOB_MAINTENANCE = 'maintenance.purge-expired';

/** Every job the service knows. Each domain adds its own here as it arrives. */
export function jobDefinitions(ctx: Context): JobDefinition[] {
  return [
    {
      // The purchases accepted by one transaction: the accepting process sends them right after
      // commit; this job is the safety net after a crash. At most one run sends each (dispatch
      // claims the row), so the job nearly always finds them all sent.
      name: JOB_VTU_DISPATCH,
      batchSize: 20,
      retryLimit: 5,
      retryDelaySeconds: 10,
      expireInSeconds: 120,
      handler: async (data) => {
        // { id } is the form of jobs enqueued before purchases were accepted in batches.
        const { ids, id } = data as { ids?: string[]; id?: string };
        await Promise.all((ids ?? [id!]).map((one) => ctx.purchases.dispatch(one)));
      },
    },
    {
      // Purchases still processing (pending or unknown at the provider): requeried on their backoff
      // schedule under the same reference; alerted, never refunded, when they stay unresolved.
      name: JOB_VTU_REQUERY,
      cron: '* * * * *',
      retryLimit: 1,
      retryDelaySeconds: 30,
      expireInSeconds: 300,
      runOnClockAdvance: true,
      handler: async () => {
        const counts = await ctx.purchases.requeryDue(requeryOptions(ctx));
        if (counts.checked > 0) ctx.logger.info({ counts }, 'purchase requery run');
      },
    },
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
