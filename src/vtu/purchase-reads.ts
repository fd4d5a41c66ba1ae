import type { Kysely } from 'kysely';
import type { PinState } from '../auth/pin.ts';
import { createLoader } from '../batching.ts';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { createMarkupLoader, type Markup } from './pricing.ts';

// What every purchase reads before its debit (its buyer's tier and PIN state, the markup of its
// service), batched: under load the purchases arriving together share one query for each.

export type Buyer = PinState & { kyc_tier: number };

export type PurchaseReads = {
  /** The buyer's tier and PIN columns as they are now; undefined for no such user. */
  buyer(userId: string): Promise<Buyer | undefined>;
  markup(service: VtuServiceName, provider: VtuProviderName): Promise<Markup>;
};

export function createPurchaseReads(db: () => Kysely<DB>): PurchaseReads {
  const buyer = createLoader(
    async (ids: string[]) =>
      new Map(
        (
          await db()
            .selectFrom('users')
            .select(['id', 'kyc_tier', 'pin_hash', 'pin_failed_count', 'pin_locked_until'])
            .where('id', 'in', ids)
            .execute()
        ).map(({ id, ...row }) => [id, row]),
      ),
    { batchMax: 200, concurrency: 4 },
  );
  return { buyer, markup: createMarkupLoader(db) };
}
