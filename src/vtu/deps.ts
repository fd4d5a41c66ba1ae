import type { Context } from '../context.ts';
import { type DispatchDeps, type RequeryOptions, requeryDefaults } from './dispatch.ts';

/** What sending and settling purchases needs from the context, just-in-time funding included. */
export function vtuDeps(ctx: Context): DispatchDeps {
  const { vtu } = ctx.config;
  return {
    db: ctx.db,
    clock: ctx.clock,
    jobs: ctx.jobs,
    providers: ctx.vtuProviders,
    debitRules: ctx.debitRules,
    logger: ctx.logger,
    float: {
      payments: ctx.payments,
      destinations: { data: vtu.data.funding, bills: vtu.bills.funding, social: vtu.social.funding },
      topupMinKobo: vtu.floatTopupMinKobo,
      inFlight: ctx.floatInFlight,
    },
  };
}

/** The requery runner's limits, the airtime-to-cash window from the configuration. */
export function requeryOptions(ctx: Context, extra: Partial<RequeryOptions> = {}): RequeryOptions {
  return {
    ...requeryDefaults,
    creditConfirmWindowSeconds: ctx.config.airtimeToCash.windowMinutes * 60,
    ...extra,
  };
}
