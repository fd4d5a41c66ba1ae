import type { Context } from '../context.ts';
import { vtuDeps } from './deps.ts';
import { failWaiting, purchasesWaitingFor } from './float.ts';

// Purchases react to their provider's float top-up: sent once it settled, failed and refunded when
// it failed (they were never sent). Subscribers run in the domain-event job, so each may run twice:
// dispatch and failWaiting act only on purchases still processing and unsent.
export function subscribePurchasesToFunding(ctx: Context): void {
  ctx.events.subscribe('funding.transfer_settled', async (event) => {
    await ctx.purchases.dispatchWaitingFor(event.reference);
  });
  ctx.events.subscribe('funding.transfer_failed', async (event) => {
    const deps = vtuDeps(ctx);
    for (const id of await purchasesWaitingFor(deps, event.reference)) {
      await failWaiting(deps, id, `the provider could not be funded: ${event.reason}`);
    }
  });
}
