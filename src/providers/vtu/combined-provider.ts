import {
  notOffered,
  type ProviderOrder,
  type ProviderOrderListRequest,
  type VtuProvider,
  type VtuService,
} from './vtu-provider.ts';

// One routed party made of several adapters: the bills party sells airtime, electricity, cable,
// betting and exam pins through VTpass and airtime-to-cash through a reseller's airtime-to-cash API
// (SPEC.md item 3 routes all of them to the second provider; VTpass has no airtime-to-cash). Each
// call goes to the adapter that offers its service; the party's float is the first adapter's.

/** An adapter that lists its own orders. */
type ListingProvider = VtuProvider & Required<Pick<VtuProvider, 'listOrders'>>;

export function combineProviders(name: string, primary: VtuProvider, ...others: VtuProvider[]): VtuProvider {
  const all = [primary, ...others];
  const listing = all.filter((adapter): adapter is ListingProvider => adapter.listOrders !== undefined);
  const offering = (service: VtuService): VtuProvider =>
    all.find((adapter) => adapter.services.has(service)) ?? notOffered(name, service);
  return {
    name,
    services: new Set(all.flatMap((adapter) => [...adapter.services])),
    airtimeAmounts: all.find((adapter) => adapter.services.has('airtime'))?.airtimeAmounts ?? null,
    networks: async (service) => offering(service).networks(service),
    dataPlans: async (network) => offering('data').dataPlans(network),
    cableProviders: async () => offering('cable').cableProviders(),
    cablePlans: async (provider) => offering('cable').cablePlans(provider),
    discos: async () => offering('electricity').discos(),
    bettingCompanies: async () => offering('betting').bettingCompanies(),
    educationItems: async () => offering('education').educationItems(),
    socialServices: async () => offering('social').socialServices(),
    verifyCustomer: async (request) => offering(request.service).verifyCustomer(request),
    airtimeToCashLine: async (network) => offering('airtime_to_cash').airtimeToCashLine(network),
    purchase: async (request) => offering(request.service).purchase(request),
    requery: async (request) => offering(request.service).requery(request),
    balance: async () => primary.balance(),
    // A list only when every adapter keeps one: the orders of some adapters alone would read, to
    // the reconciliation, as the whole party's, and every order of the others as missing there.
    ...(listing.length === all.length ? { listOrders: async (request) => listAll(listing, request) } : {}),
  };
}

/** The orders of every adapter, one list after another (any that cannot be read throws). */
async function listAll(
  adapters: ListingProvider[],
  request: ProviderOrderListRequest,
): Promise<ProviderOrder[]> {
  const lists = [];
  for (const adapter of adapters) lists.push(await adapter.listOrders(request));
  return lists.flat();
}
