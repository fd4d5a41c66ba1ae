import type { FastifyInstance } from 'fastify';
import { z } from 'zod';

// POST /api/public/vtu/airtime-cash/callback: the airtime-to-cash provider's notice that a sale's
// airtime arrived (its webhook, VTU Africa's shape: {ref, service, network, amount, status}). Such
// callbacks carry no signature, so the body is never believed: it only names our reference, and the
// provider is asked (a requery) what became of that sale, which settles it exactly as the requery
// runner would. The answer is 200 whatever the body, so the provider stops retrying; a sale it does
// not name, or one already settled, changes nothing.

export const airtimeCashCallbackPath = '/api/public/vtu/airtime-cash/callback';

const callbackBody = z.object({ ref: z.string().min(1).max(100) }).loose();

/** What the route needs of the purchases (the vtu module's api): a requery of the sale the callback names. */
export type AirtimeCashCallbackDeps = {
  /** Asks the provider what became of the sale under this reference, and settles it; null for no such sale in progress. */
  requeryReference(service: 'airtime_to_cash', reference: string): Promise<unknown>;
};

export function registerAirtimeCashCallbackRoute(app: FastifyInstance, deps: AirtimeCashCallbackDeps): void {
  app.post(
    airtimeCashCallbackPath,
    // Only a sale in progress under this reference costs a provider call: nothing else to limit.
    { config: { rateLimit: false }, schema: { hide: true } },
    async (request) => {
      const body = callbackBody.safeParse(request.body);
      if (!body.success) return { response: 'success' };
      try {
        const counts = await deps.requeryReference('airtime_to_cash', body.data.ref);
        request.log.info({ ref: body.data.ref, counts }, 'airtime-to-cash callback requeried');
      } catch (error) {
        // The requery runner asks again on its schedule: the provider need not retry for this.
        request.log.warn({ err: error, ref: body.data.ref }, 'airtime-to-cash callback requery failed');
      }
      return { response: 'success' };
    },
  );
}
