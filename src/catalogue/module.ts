import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import { type Catalogue, type CatalogueDeps, createCatalogue } from './catalogue.ts';
import { catalogueOperations } from './ops.ts';
import { setMarkup } from './pricing.ts';

// The catalogues of the routed providers and the payment provider's banks, cached (catalogue.ts),
// the retail prices over them (pricing.ts), and the customer look-ups before a purchase
// (lookups.ts). VTU prices its purchases from the api; KYC checks a bank against it.

export type CatalogueModuleDeps = CatalogueDeps & {
  db: Kysely<DB>;
  /** The bounds of a markup an administrator may set. */
  markupMax: Parameters<typeof setMarkup>[0]['markupMax'];
};

/**
 * What other modules use: the cached catalogues, the routing and the customers looked up lately,
 * and the setting of a markup (the administrator's).
 */
export type CatalogueApi = Catalogue & {
  setMarkup: (change: Parameters<typeof setMarkup>[1]) => ReturnType<typeof setMarkup>;
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
    }),
    jobs: [],
    subscribers: [],
    api: {
      ...catalogue,
      setMarkup: (change) => setMarkup({ db: deps.db, clock: deps.clock, markupMax: deps.markupMax }, change),
    },
    close,
  };
}
