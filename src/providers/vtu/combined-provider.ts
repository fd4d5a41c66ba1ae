import { notOffered, type VtuProvider, type VtuService } from './vtu-provider.ts';

// One routed party made of several adapters: the bills party sells airtime, electricity, cable,
// betting and exam pins through VTpass and airtime-to-cash through a reseller's airtime-to-cash API
// (SPEC.md item 3 routes all of them to the second provider; VTpass has no airtime-to-cash). Each
// call goes to the adapter that offers its service; the party's float is the first adapter's.

export function combineProviders(name: string, primary: VtuProvider, ...others: VtuProvider[]): VtuProvider {
  const all = [primary, ...others];
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
  };
}
