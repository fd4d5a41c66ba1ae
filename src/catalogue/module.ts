import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AuthApi } from '../auth/module.ts';
import type { Clock } from '../clock.ts';
import type { Config, VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import type { DomainModule } from '../module.ts';
import type { PausesApi } from '../pauses/module.ts';
import type { PaymentProvider } from '../providers/payments/payment-provider.ts';
import type { VtuProvider } from '../providers/vtu/vtu-provider.ts';
import { type Availability, availabilityOf } from './availability.ts';
import { type Catalogue, createCatalogue } from './catalogue.ts';
import { catalogueOperations } from './ops.ts';
import { priceLevelExists, storedMarkups } from './price-levels.ts';
import {
  applyMarkup,
  type Markup,
  type MarkupRow,
  markupAmong,
  readMarkups,
  type StoredMarkup,
  setMarkup,
} from './pricing.ts';

export type { Markup, MarkupRow, StoredMarkup };

/** A change of one markup, as the catalogue stores it (pricing.ts's setMarkup). */
export type MarkupChange = Parameters<typeof setMarkup>[1];

// The catalogues of the routed providers and the payment provider's banks, cached (catalogue.ts),
// the retail prices over them at each user's price level (pricing.ts, price-levels.ts), and the customer look-ups before a purchase
// (lookups.ts). VTU prices its purchases from the api; KYC checks a bank against it.

export type CatalogueModuleDeps = {
  /** Where the markups of every price level are stored (pricing.ts, price-levels.ts). */
  db: Kysely<DB>;
  /** Where the cache lives (Redis when REDIS_URL is set), the routing, and the providers' timeout. */
  config: Pick<Config, 'redisUrl'> & { vtu: Pick<Config['vtu'], 'routes' | 'timeoutMs'> };
  /** When a cached catalogue goes stale, how long a looked-up customer is kept, when a markup was set. */
  clock: Clock;
  /** Where the cache's failures are logged (a refresh that serves the stale value, among others). */
  logger: Logger;
  /** The VTU providers whose catalogues are cached; read on every call, so a replaced adapter is used. */
  providers: Record<VtuProviderName, VtuProvider>;
  /** The payment provider, whose bank list is cached here like the VTU catalogues. */
  payments: PaymentProvider;
  /** Prefix of the Redis keys, distinct per deployment. */
  redisPrefix: string;
  /** The bounds of a markup an administrator may set. */
  markupMax: Parameters<typeof setMarkup>[0]['markupMax'];
  /** The price level a user pays (auth's api): the prices shown to them carry its markups. */
  priceLevelOf: AuthApi['priceLevelOf'];
  /** The pause in force of a service through a provider (pauses' api): a service's lists say it is unavailable. */
  pauseOf: PausesApi['pauseOf'];
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
  /**
   * Every stored markup, of every level, for a caller that prices many purchases at once with
   * markupAmong (the purchases read them once per batch, whatever their buyers' levels).
   */
  readMarkups: () => Promise<MarkupRow[]>;
  /** The markup of a service through a provider at a level (null: the default), among read rows. */
  markupAmong: typeof markupAmong;
  /** A wholesale price with a markup applied: the retail price and the markup's part of it. */
  applyMarkup: typeof applyMarkup;
  /** Whether the service can be bought now, through the provider it is routed to, and why not (a pause). */
  availabilityOf: (service: VtuServiceName) => Promise<Availability>;
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
      pauseOf: deps.pauseOf,
    }),
    jobs: [],
    subscribers: [],
    api: {
      ...catalogue,
      setMarkup: (change) => setMarkup({ db: deps.db, clock: deps.clock, markupMax: deps.markupMax }, change),
      storedMarkups: () => storedMarkups(deps.db),
      priceLevelExists: (level) => priceLevelExists(deps.db, level),
      readMarkups: () => readMarkups(deps.db),
      markupAmong,
      applyMarkup,
      availabilityOf: (service) => availabilityOf({ catalogue, pauseOf: deps.pauseOf }, service),
    },
    close,
  };
}
