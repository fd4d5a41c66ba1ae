import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { AuthApi, BuyerState } from '../auth/module.ts';
import type { CatalogueApi, Markup } from '../catalogue/module.ts';
import type { Clock } from '../clock.ts';
import type { Config, VtuProviderName, VtuServiceName } from '../config.ts';
import { dateRangeOf } from '../date-filter.ts';
import type { Batching } from '../db/batching.ts';
import type { DB } from '../db/schema.ts';
import type { WithCommit } from '../db/unit-of-work.ts';
import { AppError } from '../errors.ts';
import type { KycModule } from '../kyc/module.ts';
import { requireWithin } from '../limits.ts';
import { formatNaira, koboToNaira, nairaToKobo } from '../money.ts';
import { defineOperation, type OperationArgs } from '../operation.ts';
import type { Resolve } from '../outbound-addresses.ts';
import type { PausesApi } from '../pauses/module.ts';
import {
  type AmountRule,
  amountBreach,
  customerOf,
  type Network,
  type VtuProvider,
  VtuProviderError,
  type VtuService,
} from '../providers/vtu/vtu-provider.ts';
import { cableProviderNames, discoName, withoutPrice } from '../shared/display-names.ts';
import { networkNames } from '../shared/networks.ts';
import { localPhone, networkOfPhone } from '../shared/prefixes.ts';
import { type AcceptStageDeps, acceptPurchase, acceptPurchasesTogether } from './accept.ts';
import { findPurchase, listPurchases, type PurchaseOrder } from './purchases.ts';
import * as s from './schemas.ts';
import { purchaseErrors } from './schemas.ts';

// The six purchases and their reads (SPEC.md "Endpoints", API.md section 5). Every purchase runs the
// same checks in the same order: schema (the router) → auth → Tier 1 → PIN (with lockout) →
// recipient → price → one transaction that debits and records it (acceptPurchase, accept.ts).
// Nothing is charged before the last step, so every refusal on the way leaves the wallet as it was.

const tags = ['vtu'];

/**
 * What the purchase operations (and routed-service-ops.ts) close over, built by the vtu module from
 * its deps (VtuModuleDeps, module.ts: the other domains' api among them).
 */
export type PurchaseOpsDeps = {
  db: Kysely<DB>;
  clock: Clock;
  config: Pick<Config, 'vtu' | 'airtimeToCash'>;
  /** The upstream VTU providers by configuration name (data, bills, social); routing is config.vtu.routes. */
  providers: Record<VtuProviderName, VtuProvider>;
  /** The routed providers' catalogues (cached), the customers the look-ups just named, the markups. */
  catalogue: CatalogueApi;
  /** The PIN's check, decided on the buyer's row under its lock (auth's). */
  verifyTransactionPin: AuthApi['verifyTransactionPin'];
  /** The tier gate on a tier already read (kyc's). */
  requireTier: KycModule['api']['requireTier'];
  /** The outbound-address check of social links. */
  resolveHost: Resolve;
  /** What every purchase reads before its debit (createPurchaseReads). */
  purchaseReads: PurchaseReads;
  /** The accept stage every checked purchase goes to. */
  accepting: AcceptStageDeps;
  /** 503 SERVICE_PAUSED while an operator has paused the service or its provider (pauses' api). */
  requireOpen: PausesApi['requireOpen'];
};

// What every purchase reads before its debit, its buyer's tier, PIN state and price level and the
// markups, in one batched step: under load the purchases arriving together share one query for their
// buyers and one for the markups (a table of a few dozen rows per price level: one per service, and
// per provider), whatever their buyers' levels. The buyers are auth's rows, read through auth's api
// (readBuyerStates), and the markups the catalogue's (its api's readMarkups); the two queries run side
// by side, and each buyer's markups are picked from the rows by their level (markupAmong). The buyer's PIN
// state read here is taken without a lock, so it decides nothing: it only chooses how
// verifyTransactionPin checks the PIN, on the user row read again under its lock (decision 0018).

export type PurchaseFacts = {
  /** The buyer's tier and PIN columns as they were read (no lock); undefined for no such user. */
  buyer: BuyerState | undefined;
  /**
   * The markup the buyer pays for a service sold through a provider: their level's, else the
   * default; the provider's own row wins over the service's (catalogue/pricing.ts markupAmong).
   */
  markupOf(service: VtuServiceName, provider: VtuProviderName): Markup;
};

/** What every purchase reads before its debit: its buyer's state and the markups. */
export type PurchaseReads = (userId: string) => Promise<PurchaseFacts>;

/** What the purchases' batched read reads through: auth's api and the catalogue's. */
export type PurchaseReadsDeps = {
  readBuyerStates: AuthApi['readBuyerStates'];
  catalogue: Pick<CatalogueApi, 'readMarkups' | 'markupAmong'>;
};

/** One per module: the reads of the purchases that arrive together share one batch. */
export function createPurchaseReads(deps: PurchaseReadsDeps, batching: Batching): PurchaseReads {
  const { readBuyerStates, catalogue } = deps;
  const load = batching.loader(
    async (ids: string[]) => {
      const [byId, markups] = await Promise.all([readBuyerStates(ids), catalogue.readMarkups()]);
      return new Map(
        ids.map((id) => {
          const buyer = byId.get(id);
          const level = buyer?.price_level ?? null;
          const markupOf = (service: VtuServiceName, provider: VtuProviderName): Markup =>
            catalogue.markupAmong(markups, service, provider, level);
          return [id, { buyer, markupOf }];
        }),
      );
    },
    { batchMax: 200, concurrency: 4 },
  );
  return async (userId) => (await load(userId))!;
}

export const routed = (
  deps: Pick<PurchaseOpsDeps, 'config' | 'providers'>,
  service: VtuService,
): { name: VtuProviderName; provider: VtuProvider } => {
  const name = deps.config.vtu.routes[service];
  return { name, provider: deps.providers[name] };
};

/**
 * 503 SERVICE_PAUSED while the service, or the provider it is routed to, is paused (API.md section
 * 17.4): asked first, before the PIN, so that a person is not asked for anything a pause refuses.
 * buy() and buyTogether() ask again of the order itself, the last step before any debit.
 */
export const requireRouteOpen = (
  deps: Pick<PurchaseOpsDeps, 'config' | 'requireOpen'>,
  service: VtuService,
): Promise<void> => deps.requireOpen(service, deps.config.vtu.routes[service]);

/**
 * The buyer's markups (read in the same step) for pricing the purchase, once Tier 1 and the PIN, in
 * that order, have passed: before anything about the purchase itself is looked at. The PIN is
 * decided on the buyer's row read under its lock, not on the batched read (verifyTransactionPin,
 * decision 0018).
 */
export async function authorisedMarkupOf(
  deps: PurchaseOpsDeps,
  userId: string,
  pin: string,
): Promise<PurchaseFacts['markupOf']> {
  const { buyer, markupOf } = await deps.purchaseReads(userId);
  deps.requireTier(buyer?.kyc_tier ?? 0, 1);
  await deps.verifyTransactionPin(userId, pin, buyer);
  return markupOf;
}

/** SPEC.md item 5: the number's prefix must belong to the chosen network, before any debit. */
export function requireNetwork(phone: string, network: Network): void {
  const actual = networkOfPhone(phone);
  if (actual !== network) {
    throw new AppError('NETWORK_MISMATCH', `${localPhone(phone)} is not a ${network} number`, {
      details: { network, detected: actual ?? 'unknown' },
    });
  }
}

/** The caller's price must be the server's price now (API.md section 5). */
export function requireAmount(givenNaira: number, retailKobo: bigint): void {
  if (nairaToKobo(givenNaira) !== retailKobo) {
    throw new AppError('PRICE_CHANGED', `the price is now ₦${koboToNaira(retailKobo)}`, {
      details: { amount: koboToNaira(retailKobo) },
    });
  }
}

/**
 * The amounts the routed provider sells in (its adapter's rule), before the debit: what it would
 * refuse after the debit would otherwise cost the buyer a failed purchase. Its bounds answer as
 * every purchase's do (requireWithin); an amount between them that is not a whole step is a 400 on
 * `data.amount`.
 */
function requireSold(rule: AmountRule | null, amountKobo: bigint, what: string): void {
  if (rule === null) return;
  requireWithin(koboToNaira(amountKobo), what, {
    min: koboToNaira(rule.amountKoboMin),
    max: koboToNaira(rule.amountKoboMax),
  });
  if (amountBreach(rule, amountKobo) === 'not_a_step') {
    const message = `${what} is sold in multiples of ₦${koboToNaira(rule.amountKoboStep)}`;
    throw new AppError('VALIDATION_ERROR', message, {
      details: { issues: [{ path: ['data', 'amount'], message }] },
    });
  }
}

/** The plan the caller chose, from the routed provider's (cached) catalogue. */
function chosenPlan<P extends { planId: string }>(
  plans: P[] | null | undefined,
  planId: string,
  what: string,
): P {
  const plan = plans?.find((p) => p.planId === planId);
  if (plan === undefined) {
    throw new AppError('VALIDATION_ERROR', `no ${what} plan ${planId}`, { details: { field: 'plan_id' } });
  }
  return plan;
}

export const upstream = (error: unknown): never => {
  if (error instanceof VtuProviderError) {
    throw new AppError('UPSTREAM_UNAVAILABLE', 'the provider could not be reached; nothing was charged', {
      details: { provider: error.provider },
    });
  }
  throw error;
};

export function priced(
  deps: Pick<PurchaseOpsDeps, 'catalogue'>,
  markupOf: PurchaseFacts['markupOf'],
  service: VtuService,
  provider: VtuProviderName,
  wholesaleKobo: bigint,
): { wholesaleKobo: bigint; markupKobo: bigint; retailKobo: bigint } {
  const { retailKobo, markupKobo } = deps.catalogue.applyMarkup(markupOf(service, provider), wholesaleKobo);
  return { wholesaleKobo, markupKobo, retailKobo };
}

/**
 * What a purchase's record says it bought, in the words and money a person reads (issue 26): display
 * names, ₦1,000.00, and never a price the provider wrote into a plan's name.
 */
const descriptions = {
  data(network: Network, planName: string, phone: string): string {
    const plan = withoutPrice(planName);
    const networkName = networkNames[network];
    // Plans often begin with their network ("MTN 1.5GB - 30 days") or say "Data" already.
    const named = plan.toLowerCase().startsWith(networkName.toLowerCase()) ? plan : `${networkName} ${plan}`;
    return `${named}${/\bdata\b/i.test(named) ? '' : ' data'} to ${phone}`;
  },
  cable(provider: string, planName: string, smartcard: string): string {
    const plan = withoutPrice(planName);
    const providerName = cableProviderNames[provider] ?? provider.toUpperCase();
    const named = plan.toLowerCase().startsWith(providerName.toLowerCase())
      ? plan
      : `${providerName} ${plan}`;
    return `${named} for smartcard ${smartcard}`;
  },
};

/**
 * The catalogue's name for an id (a disco, a betting company), or the id itself when the cached
 * catalogue cannot be read now: a description is no reason to refuse a purchase.
 */
async function catalogueName(
  items: Promise<Array<{ id: string; name: string }>>,
  id: string,
): Promise<string> {
  const found = await items.then(
    (list) => list.find((item) => item.id === id),
    () => undefined,
  );
  return found?.name ?? id;
}

/**
 * Accepts the purchase; its Idempotency-Key answer commits with it. A bill is named after its
 * customer when a look-up of the same number just found them (never a name the client sent).
 */
export async function buy(
  deps: Pick<PurchaseOpsDeps, 'accepting' | 'catalogue' | 'requireOpen'>,
  userId: string,
  withCommit: WithCommit | undefined,
  order: PurchaseOrder,
) {
  // A pause set while the order was checked: its own service and provider (routed()'s), before the debit.
  await deps.requireOpen(order.service, order.provider as VtuProviderName);
  const customer = customerOf(order.request);
  const customerName = customer === null ? undefined : deps.catalogue.verifiedCustomers.nameOf(customer);
  return acceptPurchase(
    deps.accepting,
    userId,
    customerName === undefined ? order : { ...order, customerName },
    withCommit,
  );
}

/**
 * Accepts one buyer's orders all or nothing (a bulk order's lines: acceptPurchasesTogether), each
 * named as buy() names it; the group's Idempotency-Key answer, or whatever `withCommit` writes for
 * the purchases, commits with their debits.
 */
export async function buyTogether(
  deps: Pick<PurchaseOpsDeps, 'accepting' | 'catalogue' | 'requireOpen'>,
  userId: string,
  orders: PurchaseOrder[],
  withCommit: WithCommit | undefined,
  references?: readonly string[],
) {
  // Every order's service and provider open (a bulk order's lines, a scheduled run), before the debits.
  for (const order of orders) await deps.requireOpen(order.service, order.provider as VtuProviderName);
  const named = orders.map((order) => {
    const customer = customerOf(order.request);
    const customerName = customer === null ? undefined : deps.catalogue.verifiedCustomers.nameOf(customer);
    return customerName === undefined ? order : { ...order, customerName };
  });
  return acceptPurchasesTogether(deps.accepting, userId, named, withCommit, references);
}

/** The fields of each purchase but its PIN: what a purchase is checked and priced from. */
export type PurchaseFields = {
  airtime: Omit<z.output<typeof s.buyAirtimeInput>, 'pin'>;
  data: Omit<z.output<typeof s.buyDataInput>, 'pin'>;
  cable: Omit<z.output<typeof s.subscribeCableInput>, 'pin'>;
  electricity: Omit<z.output<typeof s.buyElectricityInput>, 'pin'>;
  betting: Omit<z.output<typeof s.fundBetInput>, 'pin'>;
  education: Omit<z.output<typeof s.buyEducationPinInput>, 'pin'>;
};

/** The purchases checks and prices can be asked of without the request: scheduled runs, bulk lines. */
export type OrderedService = keyof PurchaseFields;

/**
 * Each purchase's checks after Tier 1 and the PIN, and its order: the recipient, the amount's bounds,
 * the route and the price. The operations below and the vtu api (a schedule's run, a bulk order's
 * lines) build their orders with these, so every purchase is checked and priced the one way.
 */
export const purchaseOrders: {
  [K in OrderedService]: (
    deps: PurchaseOpsDeps,
    markupOf: PurchaseFacts['markupOf'],
    input: PurchaseFields[K],
  ) => Promise<PurchaseOrder>;
} = {
  airtime: airtimeOrder,
  data: dataOrder,
  cable: cableOrder,
  electricity: electricityOrder,
  betting: bettingOrder,
  education: educationOrder,
};

/** The airtime's order: the number's network, the face value's bounds (ours, then the routed provider's), its price. */
export async function airtimeOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['airtime'],
): Promise<PurchaseOrder> {
  requireNetwork(input.phone, input.network);
  requireWithin(input.amount, 'airtime', { min: s.airtimeNairaMin, max: s.airtimeNairaMax });
  const face = nairaToKobo(input.amount);
  const { name, provider } = routed(deps, 'airtime');
  requireSold(provider.airtimeAmounts, face, 'airtime');
  const price = priced(deps, markupOf, 'airtime', name, face);
  const phone = localPhone(input.phone);
  return {
    service: 'airtime',
    provider: name,
    network: input.network,
    recipient: phone,
    request: { service: 'airtime', network: input.network, phone, amountKobo: face },
    ...price,
    description: `${formatNaira(face)} ${networkNames[input.network]} airtime to ${phone}`,
  };
}

/** The data bundle's order: the number's network, the plan from the routed provider's cached catalogue (the price checked is the price the user was shown, at most 30 minutes old). */
export async function dataOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['data'],
): Promise<PurchaseOrder> {
  requireNetwork(input.phone, input.network);
  // The cached catalogue: the price checked is the price the user was shown (at most 30 minutes old).
  const { name } = routed(deps, 'data');
  const plans = await deps.catalogue.dataPlans(input.network).catch(upstream);
  const plan = chosenPlan(plans, input.plan_id, `${input.network} data`);
  const price = priced(deps, markupOf, 'data', name, plan.wholesaleKobo);
  requireAmount(input.amount, price.retailKobo);
  const phone = localPhone(input.phone);
  return {
    service: 'data',
    provider: name,
    network: input.network,
    recipient: phone,
    request: { service: 'data', network: input.network, planId: plan.planId, phone },
    ...price,
    description: descriptions.data(input.network, plan.name, phone),
  };
}

/** The cable subscription's order: the plan from the routed provider's cached catalogue, at its price now. */
export async function cableOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['cable'],
): Promise<PurchaseOrder> {
  const { name } = routed(deps, 'cable');
  const plans = await deps.catalogue.cablePlans(input.identifier).catch(upstream);
  const plan = chosenPlan(plans, input.plan_id, input.identifier);
  const price = priced(deps, markupOf, 'cable', name, plan.wholesaleKobo);
  requireAmount(input.amount, price.retailKobo);
  return {
    service: 'cable',
    provider: name,
    network: null,
    recipient: input.iuc,
    request: {
      service: 'cable',
      provider: input.identifier,
      iuc: input.iuc,
      planId: plan.planId,
      amountKobo: plan.wholesaleKobo,
      phone: localPhone(input.phone),
      subscriptionType: input.subscription_type,
    },
    ...price,
    description: descriptions.cable(input.identifier, plan.name, input.iuc),
  };
}

/** The electricity purchase's order: the amount's bound, the disco's name (for the description), its price. */
export async function electricityOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['electricity'],
): Promise<PurchaseOrder> {
  requireWithin(input.amount, 'electricity purchase', { min: s.electricityNairaMin });
  const { name } = routed(deps, 'electricity');
  const disco = await catalogueName(deps.catalogue.discos(), input.plan);
  const face = nairaToKobo(input.amount);
  const price = priced(deps, markupOf, 'electricity', name, face);
  return {
    service: 'electricity',
    provider: name,
    network: null,
    recipient: input.meter,
    request: {
      service: 'electricity',
      disco: input.plan,
      meter: input.meter,
      meterType: input.type,
      amountKobo: face,
      phone: localPhone(input.phone),
    },
    ...price,
    description: `${formatNaira(face)} ${discoName(disco)} ${input.type} electricity for meter ${input.meter}`,
  };
}

/** The betting wallet's funding order: the company's name (for the description), its price. */
export async function bettingOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['betting'],
): Promise<PurchaseOrder> {
  const { name } = routed(deps, 'betting');
  const company = await catalogueName(deps.catalogue.bettingCompanies(), input.betting_company);
  const face = nairaToKobo(input.amount);
  const price = priced(deps, markupOf, 'betting', name, face);
  return {
    service: 'betting',
    provider: name,
    network: null,
    recipient: input.customer_id,
    request: {
      service: 'betting',
      company: input.betting_company,
      customerId: input.customer_id,
      amountKobo: face,
    },
    ...price,
    description: `${formatNaira(face)} to ${company} account ${input.customer_id}`,
  };
}

/** The exam pins' order: the pin from the cached list listEducationPins prices from, n pins at n × its price. */
export async function educationOrder(
  deps: PurchaseOpsDeps,
  markupOf: PurchaseFacts['markupOf'],
  input: PurchaseFields['education'],
): Promise<PurchaseOrder> {
  if (input.exam === 'jamb' && input.profile_id === undefined) {
    throw new AppError('VALIDATION_ERROR', 'profile_id is required for jamb', {
      details: { field: 'profile_id' },
    });
  }
  // The cached list listEducationPins prices from, so the price listed is the price charged.
  const { name } = routed(deps, 'education');
  const items = await deps.catalogue.educationItems();
  const item = items.find(
    (i) => i.exam === input.exam && (input.variation === undefined || i.variation === input.variation),
  );
  if (item === undefined) {
    throw new AppError('VALIDATION_ERROR', `no ${input.exam} pin ${input.variation ?? ''}`.trim(), {
      details: { field: 'variation' },
    });
  }
  // Each pin is priced as listEducationPins lists one (its markup, flat part included, per pin), so
  // n pins cost exactly n × the price a person was shown.
  const one = priced(deps, markupOf, 'education', name, item.wholesaleKobo);
  const pins = BigInt(input.quantity);
  const price = {
    wholesaleKobo: one.wholesaleKobo * pins,
    markupKobo: one.markupKobo * pins,
    retailKobo: one.retailKobo * pins,
  };
  requireAmount(input.amount, price.retailKobo);
  const phone = localPhone(input.phone);
  return {
    service: 'education',
    provider: name,
    network: null,
    recipient: input.profile_id ?? phone,
    request: {
      service: 'education',
      exam: input.exam,
      variation: item.variation,
      quantity: input.quantity,
      phone,
      ...(input.profile_id === undefined ? {} : { profileId: input.profile_id }),
    },
    ...price,
    description: `${input.quantity} × ${withoutPrice(item.name)}`,
  };
}

/** What a buy operation's handler is given: the caller, the checked input, the Idempotency-Key's answer. */
type BuyArgs<I extends z.ZodType> = OperationArgs<z.output<I>, 'user'>;

/**
 * Every buy operation's steps: Tier 1 and the PIN (authorisedMarkupOf), the order its own function
 * makes from the input (airtimeOrder, dataOrder, ...), then the order's acceptance (buy).
 */
async function authoriseAndBuy<Input extends { pin: string }>(
  deps: PurchaseOpsDeps,
  { caller, input, withCommit }: OperationArgs<Input, 'user'>,
  service: OrderedService,
  order: (deps: PurchaseOpsDeps, markupOf: PurchaseFacts['markupOf'], input: Input) => Promise<PurchaseOrder>,
) {
  await requireRouteOpen(deps, service);
  const markupOf = await authorisedMarkupOf(deps, caller.userId, input.pin);
  return buy(deps, caller.userId, withCommit, await order(deps, markupOf, input));
}

/** buyAirtime: Tier 1 and the PIN, the airtime's order (airtimeOrder), then its acceptance (buy). */
export const buyAirtime = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.buyAirtimeInput>) =>
  authoriseAndBuy(deps, args, 'airtime', airtimeOrder);

/** buyData: Tier 1 and the PIN, the bundle's order (dataOrder), then its acceptance (buy). */
export const buyData = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.buyDataInput>) =>
  authoriseAndBuy(deps, args, 'data', dataOrder);

/** subscribeCable: Tier 1 and the PIN, the subscription's order (cableOrder), then its acceptance (buy). */
export const subscribeCable = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.subscribeCableInput>) =>
  authoriseAndBuy(deps, args, 'cable', cableOrder);

/** buyElectricity: Tier 1 and the PIN, the purchase's order (electricityOrder), then its acceptance (buy). */
export const buyElectricity = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.buyElectricityInput>) =>
  authoriseAndBuy(deps, args, 'electricity', electricityOrder);

/** fundBet: Tier 1 and the PIN, the funding's order (bettingOrder), then its acceptance (buy). */
export const fundBet = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.fundBetInput>) =>
  authoriseAndBuy(deps, args, 'betting', bettingOrder);

/** buyEducationPin: Tier 1 and the PIN, the pins' order (educationOrder), then its acceptance (buy). */
export const buyEducationPin = (deps: PurchaseOpsDeps, args: BuyArgs<typeof s.buyEducationPinInput>) =>
  authoriseAndBuy(deps, args, 'education', educationOrder);

/** The purchase operations, closed over the module's deps: the six buys, then the buyer's reads. */
export const purchaseOperations = (deps: PurchaseOpsDeps) => [
  ...buyOperations(deps),
  ...purchaseReadOperations(deps),
];

/** The six buys, each handled by its named function above. */
const buyOperations = (deps: PurchaseOpsDeps) => [
  defineOperation({
    name: 'buyAirtime',
    method: 'POST',
    auth: 'user',
    summary: 'Buy airtime: the wallet is charged the quoted retail price of the face value',
    tags,
    input: s.buyAirtimeInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'NETWORK_MISMATCH', 'BELOW_MINIMUM', 'ABOVE_MAXIMUM'],
    handler: (args) => buyAirtime(deps, args),
  }),
  defineOperation({
    name: 'buyData',
    method: 'POST',
    auth: 'user',
    summary:
      "Buy a data bundle; `amount` must be the plan's current retail price (409 PRICE_CHANGED otherwise)",
    tags,
    input: s.buyDataInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'NETWORK_MISMATCH', 'PRICE_CHANGED', 'UPSTREAM_UNAVAILABLE'],
    handler: (args) => buyData(deps, args),
  }),
  defineOperation({
    name: 'subscribeCable',
    method: 'POST',
    auth: 'user',
    summary: "Pay a cable TV subscription; `amount` must be the plan's current retail price",
    tags,
    input: s.subscribeCableInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'PRICE_CHANGED', 'UPSTREAM_UNAVAILABLE'],
    handler: (args) => subscribeCable(deps, args),
  }),
  defineOperation({
    name: 'buyElectricity',
    method: 'POST',
    auth: 'user',
    summary: 'Buy electricity (minimum ₦1,000); success carries the token (prepaid) and units',
    tags,
    input: s.buyElectricityInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'BELOW_MINIMUM'],
    handler: (args) => buyElectricity(deps, args),
  }),
  defineOperation({
    name: 'fundBet',
    method: 'POST',
    auth: 'user',
    summary: 'Fund a betting wallet',
    tags,
    input: s.fundBetInput,
    output: s.vtuTransaction,
    errors: purchaseErrors,
    handler: (args) => fundBet(deps, args),
  }),
  defineOperation({
    name: 'buyEducationPin',
    method: 'POST',
    auth: 'user',
    summary:
      'Buy exam pins (1-10); `amount` must be quantity × the price of one pin (listEducationPins); success carries the pins',
    tags,
    input: s.buyEducationPinInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'PRICE_CHANGED', 'UPSTREAM_UNAVAILABLE'],
    handler: (args) => buyEducationPin(deps, args),
  }),
];

/** The buyer's own purchases: listed, and one by id. */
const purchaseReadOperations = (deps: PurchaseOpsDeps) => [
  defineOperation({
    name: 'listMyVtuTransactions',
    method: 'GET',
    auth: 'user',
    summary: 'Your purchases, newest first, filtered by status, service and date',
    tags,
    input: s.listMyVtuTransactionsInput,
    output: s.listMyVtuTransactionsOutput,
    errors: [],
    handler: ({ caller, input }) =>
      listPurchases(
        deps,
        caller.userId,
        {
          ...(input.status === undefined ? {} : { status: input.status }),
          ...(input.service === undefined ? {} : { service: input.service }),
          range: dateRangeOf(input),
        },
        { limit: input.limit, offset: input.offset },
      ),
  }),
  defineOperation({
    name: 'getMyVtuTransaction',
    method: 'POST',
    auth: 'user',
    summary: "One of your purchases by id (another user's is 404)",
    tags,
    input: s.getMyVtuTransactionInput,
    output: s.vtuTransaction,
    errors: ['NOT_FOUND'],
    handler: ({ caller, input }) => findPurchase(deps, caller.userId, input.id),
  }),
];
