import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { Config, VtuProviderName, VtuServiceName } from '../config.ts';
import type { PaymentProvider } from '../providers/payments/payment-provider.ts';
import type {
  BettingCompanyItem,
  CablePlanItem,
  CableProviderItem,
  DataPlanItem,
  DiscoItem,
  EducationItem,
  Network,
  NetworkItem,
  SocialServiceItem,
  VtuProvider,
} from '../providers/vtu/vtu-provider.ts';
import { type Bank, usableBanks } from './banks.ts';
import {
  type CatalogueCache,
  createCatalogueCache,
  createMemoryCacheStore,
  createRedisCacheStore,
} from './cache.ts';
import { createVerifiedCustomers, type VerifiedCustomers } from './verified-customers.ts';

// The provider catalogues (networks, data plans, cable providers and plans, discos, betting
// companies, exam pins, social services, airtime-to-cash receiving lines), each read from the provider routed for its service and cached (cache.ts),
// and the payment provider's bank list, cached the same way.
// Prices stay WHOLESALE here: the markup is applied when a catalogue is read (pricing.ts), so a
// changed markup shows on the very next read without touching the cache.
//
// Keys carry the provider's name, so a change of routing never serves another provider's plans.
// Items named by a caller (a network, a cable provider) are checked against the cached lists before
// they become part of a key: nobody can fill the cache, or keep the provider busy, with made-up ids.

/** SPEC.md "Limits": a catalogue refreshes at most every 30 minutes. */
export const catalogueFreshMs = 30 * 60 * 1000;
/** Stale values are kept this long in Redis, to be served while a provider is failing. */
const staleRetainMs = 24 * 60 * 60 * 1000;
const lockWaitMs = 3_000;
const lockPollMs = 50;

export type Catalogue = {
  /** The provider routed for a service (config.vtu.routes). */
  providerFor(service: VtuServiceName): VtuProviderName;
  airtimeNetworks(): Promise<NetworkItem[]>;
  dataNetworks(): Promise<NetworkItem[]>;
  /** Null when the routed data provider does not sell that network. */
  dataPlans(network: Network): Promise<DataPlanItem[] | null>;
  cableProviders(): Promise<CableProviderItem[]>;
  /** Null when the cable provider is not in the catalogue. */
  cablePlans(identifier: string): Promise<CablePlanItem[] | null>;
  discos(): Promise<DiscoItem[]>;
  bettingCompanies(): Promise<BettingCompanyItem[]>;
  /** Every exam pin the routed education provider sells, wholesale. */
  educationItems(): Promise<EducationItem[]>;
  /** The SMM panel's services (rates per 1,000 units, wholesale). */
  socialServices(): Promise<SocialServiceItem[]>;
  /** The line the routed airtime-to-cash provider receives a network's airtime on. */
  airtimeToCashLine(network: Network): Promise<string>;
  /** The payment provider's Nigerian banks that accounts can be held at, by name (banks.ts). */
  banks(): Promise<Bank[]>;
  /** The names the customer look-ups found lately, for naming a purchase (verified-customers.ts). */
  verifiedCustomers: VerifiedCustomers;
};

export type CatalogueDeps = {
  /** Where the cache lives (Redis when REDIS_URL is set), the routing, and the providers' timeout. */
  config: Pick<Config, 'redisUrl'> & { vtu: Pick<Config['vtu'], 'routes' | 'timeoutMs'> };
  clock: Clock;
  logger: Logger;
  /** Read on every call, so that a replaced adapter (or method) is the one used. */
  providers: Record<VtuProviderName, VtuProvider>;
  /** The payment provider, whose bank list is cached here like the VTU catalogues. */
  payments: PaymentProvider;
  /** Prefix of the Redis keys, distinct per deployment. */
  redisPrefix: string;
};

/** The catalogue, and the closing of its cache (a Redis connection) for whoever built it. */
export function createCatalogue(deps: CatalogueDeps): Catalogue & { close(): Promise<void> } {
  const { config } = deps;
  const store =
    config.redisUrl === undefined
      ? createMemoryCacheStore()
      : createRedisCacheStore({
          url: config.redisUrl,
          prefix: deps.redisPrefix,
          retainMs: staleRetainMs,
          // A refresh is one provider call, bounded by the VTU timeout (a GET may retry inside it).
          lockTtlMs: config.vtu.timeoutMs + 5_000,
          logger: deps.logger,
        });
  const cache: CatalogueCache = createCatalogueCache({
    store,
    clock: deps.clock,
    logger: deps.logger,
    freshMs: catalogueFreshMs,
    lockWaitMs,
    lockPollMs,
  });

  const providerFor = (service: VtuServiceName) => config.vtu.routes[service];
  /** Reads through the cache from the provider routed for `service`. */
  function read<T>(service: VtuServiceName, what: string, fetch: (provider: VtuProvider) => Promise<T>) {
    const name = providerFor(service);
    return cache.read(`${name}:${what}`, () => fetch(deps.providers[name]));
  }

  const dataNetworks = () => read('data', 'networks:data', (p) => p.networks('data'));
  const cableProviders = () => read('cable', 'cable-providers', (p) => p.cableProviders());

  return {
    providerFor,
    airtimeNetworks: () => read('airtime', 'networks:airtime', (p) => p.networks('airtime')),
    dataNetworks,
    async dataPlans(network) {
      if (!(await dataNetworks()).some((n) => n.id === network)) return null;
      return read('data', `data-plans:${network}`, (p) => p.dataPlans(network));
    },
    cableProviders,
    async cablePlans(identifier) {
      if (!(await cableProviders()).some((c) => c.id === identifier)) return null;
      return read('cable', `cable-plans:${identifier}`, (p) => p.cablePlans(identifier));
    },
    discos: () => read('electricity', 'discos', (p) => p.discos()),
    bettingCompanies: () => read('betting', 'betting-companies', (p) => p.bettingCompanies()),
    educationItems: () => read('education', 'education-items', (p) => p.educationItems()),
    socialServices: () => read('social', 'social-services', (p) => p.socialServices()),
    airtimeToCashLine: (network) =>
      read('airtime_to_cash', `airtime-cash-line:${network}`, (p) => p.airtimeToCashLine(network)),
    // One payment provider (Paystack): its name keys the list like a VTU provider's.
    banks: () =>
      cache.read('paystack:banks', async () => {
        const banks = usableBanks(await deps.payments.listBanks());
        // No bank at all is a broken answer, not a fact to keep for 30 minutes: Tier 3 would refuse
        // every bank meanwhile. The stale list (or a 502) serves instead.
        if (banks.length === 0) throw new Error('the payment provider listed no usable bank');
        return banks;
      }),
    verifiedCustomers: createVerifiedCustomers(deps.clock),
    close: () => cache.close(),
  };
}
