import type { Kysely } from 'kysely';
import type { VtuProviderName, VtuServiceName } from '../config.ts';
import type { DB } from '../db/schema.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { koboToNaira, nairaToKobo } from '../money.ts';
import { defineOperation } from '../operation.ts';
import type { DataPlanItem, Network } from '../providers/vtu/vtu-provider.ts';
import { type AvailabilityDeps, availabilityOf } from './availability.ts';
import type { Catalogue } from './catalogue.ts';
import { type LookupDeps, lookUpCustomer } from './lookups.ts';
import { applyMarkup, type Markup, markupAmong, readMarkups } from './pricing.ts';
import * as s from './schemas.ts';

// The catalogue, pricing and look-up operations (SPEC.md "Endpoints"; API.md section 5).
//
// Every one needs a signed-in caller: SPEC.md "Authentication" exempts only getPushPublicKey. Lists
// answer {items: [...]}. An id the catalogue does not hold (a network the data provider does not
// sell, a cable provider, a disco, a betting company, a plan type) is 400 VALIDATION_ERROR naming
// the field, like any other bad input; 404 is kept for "the provider found no such customer".

// The contract lists these among the VTU operations (their tag in /openapi.json), whichever folder
// the code is in.
const tags = ['vtu'];

/** A catalogue read: the provider could not be reached and no earlier copy is cached. */
const catalogueErrors: readonly ErrorCode[] = ['UPSTREAM_UNAVAILABLE'];
/** A look-up asks the provider every time: 404 for a number it does not know, 502 when unreachable. */
const lookupErrors: readonly ErrorCode[] = ['NOT_FOUND', 'UPSTREAM_UNAVAILABLE'];

/** 400 for an id that is well formed but not in the catalogue, shaped like a schema error. */
function unknownItem(path: string[], what: string): AppError {
  return new AppError('VALIDATION_ERROR', `no such ${what} in the catalogue`, {
    details: { issues: [{ path, message: `not in the catalogue of ${what}s` }] },
  });
}

/**
 * What the catalogue operations use: the cached catalogue, the markups, the look-ups' providers, and
 * the price level of a user (auth's), whose markups their prices carry.
 */
export type CatalogueOpsDeps = LookupDeps & {
  db: Kysely<DB>;
  catalogue: Catalogue;
  priceLevelOf: (userId: string) => Promise<string | null>;
  /** The pause in force of a service through a provider (pauses' api): a service's lists say it. */
  pauseOf: AvailabilityDeps['pauseOf'];
};

/**
 * The markup a user pays for a service through a provider (by default the one it is routed to): their
 * price level's, else the default, by the rule a purchase charges with (pricing.ts markupAmong). The
 * level and the markups are read side by side.
 */
async function markupPaidBy(
  deps: CatalogueOpsDeps,
  userId: string,
  service: VtuServiceName,
  provider: VtuProviderName = deps.catalogue.providerFor(service),
): Promise<Markup> {
  const [level, rows] = await Promise.all([deps.priceLevelOf(userId), readMarkups(deps.db)]);
  return markupAmong(rows, service, provider, level);
}

async function retailDataPlans(deps: CatalogueOpsDeps, userId: string, plans: DataPlanItem[]) {
  const markup = await markupPaidBy(deps, userId, 'data');
  return plans.map((plan) => ({
    plan_id: plan.planId,
    network: plan.network,
    planType: plan.planType,
    name: plan.name,
    validity: plan.validity,
    amount: koboToNaira(applyMarkup(markup, plan.wholesaleKobo).retailKobo),
  }));
}

async function dataPlansOf(deps: CatalogueOpsDeps, network: Network) {
  const plans = await deps.catalogue.dataPlans(network);
  if (plans === null) throw unknownItem(['query', 'network'], 'data network');
  return plans;
}

/**
 * The catalogue operations, closed over the module's deps, in the contract's order: the data lists,
 * the bills' lists, then the price quote and the customer look-ups.
 */
export const catalogueOperations = (deps: CatalogueOpsDeps) => [
  ...dataListOperations(deps),
  ...billListOperations(deps),
  ...quoteAndLookupOperations(deps),
];

/** The networks, and the data plans of one at the caller's retail prices. */
const dataListOperations = (deps: CatalogueOpsDeps) => [
  defineOperation({
    name: 'listAirtimeNetworks',
    method: 'GET',
    auth: 'user',
    summary: 'Networks airtime can be bought for',
    tags,
    input: s.listNetworksInput,
    output: s.listNetworksOutput,
    errors: catalogueErrors,
    handler: async () => ({
      items: await deps.catalogue.airtimeNetworks(),
      ...(await availabilityOf(deps, 'airtime')),
    }),
  }),
  defineOperation({
    name: 'listDataNetworks',
    method: 'GET',
    auth: 'user',
    summary: 'Networks data bundles can be bought for',
    tags,
    input: s.listNetworksInput,
    output: s.listNetworksOutput,
    errors: catalogueErrors,
    handler: async () => ({
      items: await deps.catalogue.dataNetworks(),
      ...(await availabilityOf(deps, 'data')),
    }),
  }),
  defineOperation({
    name: 'listDataPlanTypes',
    method: 'GET',
    auth: 'user',
    summary: 'The plan categories of a network (SME, CG, GIFTING, ...) and how many plans each has',
    tags,
    input: s.listDataPlanTypesInput,
    output: s.listDataPlanTypesOutput,
    errors: catalogueErrors,
    handler: async ({ input }) => {
      const counts = new Map<string, number>();
      for (const plan of await dataPlansOf(deps, input.network)) {
        counts.set(plan.planType, (counts.get(plan.planType) ?? 0) + 1);
      }
      return {
        items: [...counts].map(([planType, plans]) => ({ planType, plans })),
        ...(await availabilityOf(deps, 'data')),
      };
    },
  }),
  defineOperation({
    name: 'listDataPlans',
    method: 'GET',
    auth: 'user',
    summary: 'Every data plan of a network, at its retail price in naira',
    tags,
    input: s.listDataPlansInput,
    output: s.listDataPlansOutput,
    errors: catalogueErrors,
    handler: async ({ caller, input }) => ({
      items: await retailDataPlans(deps, caller.userId, await dataPlansOf(deps, input.network)),
      ...(await availabilityOf(deps, 'data')),
    }),
  }),
  defineOperation({
    name: 'listDataPlansForCategory',
    method: 'GET',
    auth: 'user',
    summary: 'The data plans of one category of a network, at their retail price in naira',
    tags,
    input: s.listDataPlansForCategoryInput,
    output: s.listDataPlansOutput,
    errors: catalogueErrors,
    handler: async ({ caller, input }) => {
      const wanted = input.planType.toUpperCase();
      const plans = (await dataPlansOf(deps, input.network)).filter(
        (p) => p.planType.toUpperCase() === wanted,
      );
      if (plans.length === 0) throw unknownItem(['query', 'planType'], 'plan type');
      return {
        items: await retailDataPlans(deps, caller.userId, plans),
        ...(await availabilityOf(deps, 'data')),
      };
    },
  }),
];

/** Cable, electricity, betting, banks and exam pins. */
const billListOperations = (deps: CatalogueOpsDeps) => [
  defineOperation({
    name: 'listCableProviders',
    method: 'GET',
    auth: 'user',
    summary: 'Cable TV providers (dstv, gotv, startimes, showmax)',
    tags,
    input: s.listCableProvidersInput,
    output: s.listNamedOutput,
    errors: catalogueErrors,
    handler: async () => ({
      items: await deps.catalogue.cableProviders(),
      ...(await availabilityOf(deps, 'cable')),
    }),
  }),
  defineOperation({
    name: 'listCablePlans',
    method: 'GET',
    auth: 'user',
    summary: 'The plans of one cable provider, at their retail price in naira',
    tags,
    input: s.listCablePlansInput,
    output: s.listCablePlansOutput,
    errors: catalogueErrors,
    handler: async ({ caller, input }) => {
      const plans = await deps.catalogue.cablePlans(input.identifier);
      if (plans === null) throw unknownItem(['query', 'identifier'], 'cable provider');
      const markup = await markupPaidBy(deps, caller.userId, 'cable');
      return {
        items: plans.map((plan) => ({
          plan_id: plan.planId,
          identifier: plan.provider,
          name: plan.name,
          amount: koboToNaira(applyMarkup(markup, plan.wholesaleKobo).retailKobo),
        })),
        ...(await availabilityOf(deps, 'cable')),
      };
    },
  }),
  defineOperation({
    name: 'listElectricityPlans',
    method: 'GET',
    auth: 'user',
    summary: 'Electricity distribution companies (discos); the id is the `plan` of buyElectricity',
    tags,
    input: s.listNamedInput,
    output: s.listNamedOutput,
    errors: catalogueErrors,
    handler: async () => ({
      items: await deps.catalogue.discos(),
      ...(await availabilityOf(deps, 'electricity')),
    }),
  }),
  defineOperation({
    name: 'listBetCompanies',
    method: 'GET',
    auth: 'user',
    summary: 'Betting companies whose wallets can be funded',
    tags,
    input: s.listNamedInput,
    output: s.listNamedOutput,
    errors: catalogueErrors,
    handler: async () => ({
      items: await deps.catalogue.bettingCompanies(),
      ...(await availabilityOf(deps, 'betting')),
    }),
  }),
  defineOperation({
    name: 'listBanks',
    method: 'GET',
    auth: 'user',
    summary:
      "The banks an account can be held at, from the payment provider's list (active Nigerian banks, one per code, by name); Tier 3's bankCode is one of their codes",
    tags: ['kyc'],
    input: s.listBanksInput,
    output: s.listBanksOutput,
    errors: catalogueErrors,
    handler: async () => ({ items: await deps.catalogue.banks() }),
  }),
  defineOperation({
    name: 'listEducationPins',
    method: 'GET',
    auth: 'user',
    summary:
      'The exam pins of one exam (waec, waec-registration, neco, nabteb, jamb) at their retail price in naira, as buyEducationPin charges them',
    tags,
    input: s.listEducationPinsInput,
    output: s.listEducationPinsOutput,
    errors: catalogueErrors,
    handler: async ({ caller, input }) => {
      const pins = (await deps.catalogue.educationItems()).filter((item) => item.exam === input.exam);
      // The rule buyEducationPin prices with: the education markup of the routed provider, at the
      // caller's price level, over the wholesale price (catalogue/pricing.ts).
      const markup = await markupPaidBy(deps, caller.userId, 'education');
      return {
        items: pins.map((pin) => ({
          variation: pin.variation,
          name: pin.name,
          amount: koboToNaira(applyMarkup(markup, pin.wholesaleKobo).retailKobo),
        })),
        ...(await availabilityOf(deps, 'education')),
      };
    },
  }),
];

/** A wholesale amount's retail price, and the name on a smartcard, a meter or a betting account. */
const quoteAndLookupOperations = (deps: CatalogueOpsDeps) => [
  defineOperation({
    name: 'quotePrice',
    method: 'POST',
    auth: 'user',
    summary:
      "The retail price (wholesale + markup) of a wholesale amount, in naira, at the caller's price level",
    tags,
    input: s.quotePriceInput,
    output: s.quotePriceOutput,
    errors: [],
    handler: async ({ caller, input }) => {
      const provider = input.provider ?? deps.catalogue.providerFor(input.service);
      const markup = await markupPaidBy(deps, caller.userId, input.service, provider);
      const price = applyMarkup(markup, nairaToKobo(input.wholesale));
      return {
        service: input.service,
        provider,
        wholesale: input.wholesale,
        markup: koboToNaira(price.markupKobo),
        retail: koboToNaira(price.retailKobo),
      };
    },
  }),
  defineOperation({
    name: 'verifyCableIUC',
    method: 'POST',
    auth: 'user',
    summary: 'The name (and current bouquet) on a cable smartcard / IUC number',
    tags,
    input: s.verifyCableInput,
    output: s.verifyOutput,
    errors: lookupErrors,
    handler: async ({ input }) => {
      const known = await deps.catalogue.cableProviders();
      if (!known.some((c) => c.id === input.identifier))
        throw unknownItem(['data', 'identifier'], 'cable provider');
      return lookUpCustomer(deps, {
        service: 'cable',
        provider: input.identifier,
        iuc: input.iuc,
      });
    },
  }),
  defineOperation({
    name: 'verifyMeter',
    method: 'POST',
    auth: 'user',
    summary: 'The name and address on an electricity meter',
    tags,
    input: s.verifyMeterInput,
    output: s.verifyOutput,
    errors: lookupErrors,
    handler: async ({ input }) => {
      if (!(await deps.catalogue.discos()).some((d) => d.id === input.plan))
        throw unknownItem(['data', 'plan'], 'disco');
      return lookUpCustomer(deps, {
        service: 'electricity',
        disco: input.plan,
        meter: input.meter,
        meterType: input.type,
      });
    },
  }),
  defineOperation({
    name: 'verifyBetAccount',
    method: 'POST',
    auth: 'user',
    summary: 'The name on a betting account',
    tags,
    input: s.verifyBetInput,
    output: s.verifyOutput,
    errors: lookupErrors,
    handler: async ({ input }) => {
      if (!(await deps.catalogue.bettingCompanies()).some((b) => b.id === input.betting_company))
        throw unknownItem(['data', 'betting_company'], 'betting company');
      return lookUpCustomer(deps, {
        service: 'betting',
        company: input.betting_company,
        customerId: input.customer_id,
      });
    },
  }),
];
