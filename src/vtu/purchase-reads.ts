import type { Kysely } from 'kysely';
import { type BuyerState, readBuyerStates } from '../auth/pin.ts';
import { type Markup, markupAmong, readMarkups } from '../catalogue/pricing.ts';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { Batching } from '../db/batching.ts';
import type { DB } from '../db/schema.ts';

// What every purchase reads before its debit, its buyer's tier and PIN state and the markups, in one
// batched step: under load the purchases arriving together share one query for their buyers and one
// for the markups (a table of a few dozen rows at most: one per service, and per provider). The
// buyers are auth's rows, read through auth (readBuyerStates), and the markups the catalogue's
// (readMarkups); the two queries run side by side. The buyer's PIN state read here is taken without
// a lock, so it decides nothing: it only chooses how verifyTransactionPin checks the PIN, on the
// user row read again under its lock (decision 0018).

export type PurchaseFacts = {
  /** The buyer's tier and PIN columns as they were read (no lock); undefined for no such user. */
  buyer: BuyerState | undefined;
  /** The markup of a service sold through a provider: the provider's own row wins over the service's. */
  markupOf(service: VtuServiceName, provider: VtuProviderName): Markup;
};

export function createPurchaseReads(
  db: () => Kysely<DB>,
  batching: Batching,
): (userId: string) => Promise<PurchaseFacts> {
  const load = batching.loader(
    async (ids: string[]) => {
      const [byId, markups] = await Promise.all([readBuyerStates(db(), ids), readMarkups(db())]);
      const markupOf = (service: VtuServiceName, provider: VtuProviderName): Markup =>
        markupAmong(markups, service, provider);
      return new Map(ids.map((id) => [id, { buyer: byId.get(id), markupOf }]));
    },
    { batchMax: 200, concurrency: 4 },
  );
  return async (userId) => (await load(userId))!;
}
