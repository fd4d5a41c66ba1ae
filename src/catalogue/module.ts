import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import { type Catalogue, type CatalogueDeps, createCatalogue } from './catalogue.ts';
import { catalogueOperations } from './ops.ts';
import { priceLevelExists, storedMarkups } from './price-levels.ts';
import { type StoredMarkup, setMarkup } from './pricing.ts';

// The catalogues of the routed providers and the payment provider's banks, cached (catalogue.ts),
// the retail prices over them at each user's price level (pricing.ts, price-levels.ts), and the customer look-ups before a purchase
// (lookups.ts). VTU prices its purchases from the api; KYC checks a bank against it.

export type CatalogueModuleDeps = CatalogueDeps & {
  db: Kysely<DB>;
  /** The bounds of a markup an administrator may set. */
  markupMax: Parameters<typeof setMarkup>[0]['markupMax'];
  /** The price level a user pays (auth's): the prices shown to them carry its markups. */
  priceLevelOf: (userId: string) => Promise<string | null>;
};

/**
 * What other modules use: the cached catalogues, the routing and the customers looked up lately,
 * and the setting of a markup (the administrator's).
 */
export type CatalogueApi = Catalogue & {
  setMarkup: (change: Parameters<typeof setMarkup>[1]) => ReturnType<typeof setMarkup>;
  /** Every stored markup, the default ones first, then each price level's (price-levels.ts). */
  storedMarkups: () => Promise<StoredMarkup[]>;
  /** Whether a price level has a markup, and so can be given to a user. */
  priceLevelExists: (level: string) => Promise<boolean>;
};

export type CatalogueModule = DomainModule & {
  api: CatalogueApi;
  /** Closes the cache's Redis connection: for the composition root, after the last read. */
  close(): Promise<void>;
};

export function createCatalogueModule(deps: CatalogueModuleDeps): CatalogueModule {
  const { close, ...catalogue } = createCatalogue(deps);
  return {
    operations: catalogueOperations({
      db: deps.db,
      catalogue,
      providers: deps.providers,
      logger: deps.logger,
      priceLevelOf: deps.priceLevelOf,
    }),
    jobs: [],
    subscribers: [],
    api: {
      ...catalogue,
      setMarkup: (change) => setMarkup({ db: deps.db, clock: deps.clock, markupMax: deps.markupMax }, change),
      storedMarkups: () => storedMarkups(deps.db),
      priceLevelExists: (level) => priceLevelExists(deps.db, level),
    },
    close,
  };
}
