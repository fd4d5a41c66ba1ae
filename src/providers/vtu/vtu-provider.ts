import type { Network } from '../../shared/networks.ts';

// The upstream VTU providers (DESIGN.md "Outside parties"): a data vendor, a bills aggregator
// (VTpass) and an SMM panel. Each adapter speaks its party's real wire format and answers in the
// shapes below, so the purchase flow (src/vtu/) never sees a wire detail. Amounts are integer kobo
// as bigint; phones are the local 11-digit form (0803...), which is what every Nigerian vendor takes.
//
// The one rule that matters: only a definite refusal is `failed`. A timeout, a network error, a 5xx,
// an unknown response code or an answer we cannot read is `unknown`: the provider may have
// delivered, so the caller requeries by the same reference and never refunds on it.

export type VtuService =
  | 'airtime'
  | 'data'
  | 'cable'
  | 'electricity'
  | 'betting'
  | 'education'
  | 'airtime_to_cash'
  | 'social';

/** The networks sold are declared once, in src/shared (the web client reads them too). */
export type { Network } from '../../shared/networks.ts';

/** One purchase, sent once per reference. `reference` is ours and is what a requery looks up. */
export type PurchaseRequest =
  | { service: 'airtime'; reference: string; network: Network; phone: string; amountKobo: bigint }
  | { service: 'data'; reference: string; network: Network; planId: string; phone: string }
  | {
      service: 'cable';
      reference: string;
      /** dstv, gotv, startimes, showmax */
      provider: string;
      iuc: string;
      planId: string;
      amountKobo: bigint;
      phone: string;
      subscriptionType: 'change' | 'renew';
    }
  | {
      service: 'electricity';
      reference: string;
      /** The disco id of the catalogue (ikeja-electric, ...). */
      disco: string;
      meter: string;
      meterType: 'prepaid' | 'postpaid';
      amountKobo: bigint;
      phone: string;
    }
  | { service: 'betting'; reference: string; company: string; customerId: string; amountKobo: bigint }
  | {
      service: 'education';
      reference: string;
      /** waec, waec-registration, neco, nabteb, jamb */
      exam: string;
      /** The variation code (jamb: utme, de). */
      variation: string;
      quantity: number;
      phone: string;
      profileId?: string;
    }
  | {
      service: 'airtime_to_cash';
      reference: string;
      network: Network;
      /** The line the airtime is shared from. */
      phone: string;
      /** The airtime's face value. */
      amountKobo: bigint;
      /** The provider's receiving line it was shared to (airtimeToCashLine). */
      sendTo: string;
      /**
       * The payout rate the sale was accepted at (basis points of the airtime that arrives). The
       * service's own term, kept with the request for its settlement; never sent to the provider.
       */
      payoutRateBp?: number;
    }
  | { service: 'social'; reference: string; serviceId: string; link: string; quantity: number };

/** What the provider delivered, carried onto the transaction for the user. */
export type Delivery = {
  /** The provider's own id for the order, when it gave one. */
  providerReference: string | null;
  /** Electricity (prepaid): the token to type into the meter. */
  token?: string;
  /** Electricity: the units bought, as the provider wrote them (e.g. "67.8 kWh"). */
  units?: string;
  /** Exam pins. */
  pins?: string[];
  /**
   * Electricity, cable, betting: the name of the meter's, smartcard's or account's holder, when the
   * provider's answer gave it (a receipt says whose it is).
   */
  customerName?: string;
  /** What the provider charged us, when it said (kobo). */
  chargedKobo?: bigint;
  /**
   * Social (a `Partial` order): the units the panel did not deliver, out of the quantity ordered.
   * The settlement refunds their share of the charge; absent means everything was delivered.
   */
  remains?: number;
  /**
   * Airtime-to-cash: the airtime (face value) the provider confirms arrived. Absent when it confirmed
   * without an amount we can read: the settlement then pays nothing and asks again (settlement.ts).
   */
  receivedKobo?: bigint;
};

export type PurchaseOutcome =
  | ({ status: 'success' } & Delivery)
  /** A definite refusal: nothing was delivered and nothing is owed. The only outcome that refunds. */
  | { status: 'failed'; reason: string }
  /** Accepted, not finished: requery later. */
  | { status: 'pending'; providerReference: string | null }
  /** We do not know (timeout, network, 5xx, unknown code, unreadable answer): requery later. */
  | { status: 'unknown'; reason: string };

/** A requery's answer; `not_found` means the provider never received the reference. */
export type RequeryOutcome = PurchaseOutcome | { status: 'not_found' };

/**
 * What a requery asks about. `providerReference` is the provider's id from an earlier answer, or null
 * when none came (a timeout): the adapter then finds the order by our reference where its API allows,
 * and answers `unknown` where it cannot.
 */
export type RequeryRequest = {
  reference: string;
  service: VtuService;
  providerReference: string | null;
  /**
   * When we sent it (our clock), if it was sent: an adapter that looks for the reference in a list
   * ordered newest first may stop, and answer not_found, once the list has gone back past this time.
   */
  sentAt?: Date;
};

// Catalogue items, normalised. Prices are the provider's (wholesale) in kobo; retail is ours.

export type NetworkItem = { id: Network; name: string };
export type DataPlanItem = {
  planId: string;
  network: Network;
  /** The category (SME, CG, GIFTING, ...), upper case. */
  planType: string;
  name: string;
  /** As the provider wrote it ("30 days"); null when it did not say. */
  validity: string | null;
  wholesaleKobo: bigint;
};
export type CableProviderItem = { id: string; name: string };
export type CablePlanItem = { planId: string; provider: string; name: string; wholesaleKobo: bigint };
export type DiscoItem = { id: string; name: string };
export type BettingCompanyItem = { id: string; name: string };
export type EducationItem = { exam: string; variation: string; name: string; wholesaleKobo: bigint };
export type SocialServiceItem = {
  serviceId: string;
  name: string;
  category: string;
  /** Price per 1,000 units. */
  ratePer1000Kobo: bigint;
  min: number;
  max: number;
};

export type CustomerLookup =
  | { found: true; name: string; details: Record<string, string> }
  | { found: false; reason: string };

/**
 * The amounts a provider sells a service in (kobo): between the bounds, in whole steps. The purchase
 * checks it before the debit, so that what the provider's adapter would refuse after it never costs
 * the buyer a failed purchase; the adapter checks it again before sending.
 */
export type AmountRule = { amountKoboMin: bigint; amountKoboMax: bigint; amountKoboStep: bigint };

/** Which part of the rule an amount breaks, if any. */
export type AmountBreach = 'below_minimum' | 'above_maximum' | 'not_a_step';

export function amountBreach(rule: AmountRule, amountKobo: bigint): AmountBreach | null {
  if (amountKobo < rule.amountKoboMin) return 'below_minimum';
  if (amountKobo > rule.amountKoboMax) return 'above_maximum';
  if (amountKobo % rule.amountKoboStep !== 0n) return 'not_a_step';
  return null;
}

export type CustomerLookupRequest =
  | { service: 'cable'; provider: string; iuc: string }
  | { service: 'electricity'; disco: string; meter: string; meterType: 'prepaid' | 'postpaid' }
  | { service: 'betting'; company: string; customerId: string };

/** Each kind of purchase request without its reference (made when the purchase is accepted). */
type Unreferenced<T> = T extends unknown ? Omit<T, 'reference'> : never;

/** The look-up that names the customer of a purchase (its meter, smartcard, account); null for none. */
export function customerOf(request: Unreferenced<PurchaseRequest>): CustomerLookupRequest | null {
  switch (request.service) {
    case 'cable':
      return { service: 'cable', provider: request.provider, iuc: request.iuc };
    case 'electricity':
      return {
        service: 'electricity',
        disco: request.disco,
        meter: request.meter,
        meterType: request.meterType,
      };
    case 'betting':
      return { service: 'betting', company: request.company, customerId: request.customerId };
    default:
      return null;
  }
}

/**
 * One upstream provider. `services` says what it can serve; calling it for anything else throws
 * VtuProviderError (a routing mistake, caught at start-up). Catalogue and look-up calls throw
 * VtuProviderError when the provider cannot answer; purchase and requery never throw for the
 * provider's behaviour: every answer, and every non-answer, is an outcome.
 */
export type VtuProvider = {
  /** The configuration name: data, bills or social. */
  readonly name: string;
  readonly services: ReadonlySet<VtuService>;
  /** The airtime face values it sells, or null where it sells none or takes any the service allows. */
  readonly airtimeAmounts: AmountRule | null;
  networks(service: 'airtime' | 'data'): Promise<NetworkItem[]>;
  dataPlans(network: Network): Promise<DataPlanItem[]>;
  cableProviders(): Promise<CableProviderItem[]>;
  cablePlans(provider: string): Promise<CablePlanItem[]>;
  discos(): Promise<DiscoItem[]>;
  bettingCompanies(): Promise<BettingCompanyItem[]>;
  educationItems(): Promise<EducationItem[]>;
  socialServices(): Promise<SocialServiceItem[]>;
  verifyCustomer(request: CustomerLookupRequest): Promise<CustomerLookup>;
  /**
   * Airtime-to-cash: the provider's line that receives the network's airtime (the reseller flow's
   * first step), as a local 11-digit number. Throws VtuProviderError when it cannot answer.
   */
  airtimeToCashLine(network: Network): Promise<string>;
  purchase(request: PurchaseRequest): Promise<PurchaseOutcome>;
  /** Asks what became of a purchase (RequeryRequest says how it is found). */
  requery(request: RequeryRequest): Promise<RequeryOutcome>;
  /** Our float at the provider, in kobo. */
  balance(): Promise<bigint>;
  /**
   * Every order the provider created in [from, to] (both ends included, by its own clock), for the
   * daily reconciliation (API.md 17.5). Only a provider whose API lists its orders has it: the data
   * vendor does; VTpass and the SMM panel have no order list, leave it undefined, and are reconciled
   * by requerying each purchase we know instead. Throws VtuProviderError when any part of the list
   * cannot be read: a short list reported as complete would hide the very orders a reconciliation
   * is for.
   */
  listOrders?(request: ProviderOrderListRequest): Promise<ProviderOrder[]>;
};

export type ProviderOrderListRequest = { from: Date; to: Date };

/** One order in a provider's own list, as a requery of it would read it. */
export type ProviderOrder = {
  /** Our reference, as the order carries it; null for an order placed without one. */
  reference: string | null;
  /** The provider's id for the order. */
  providerReference: string;
  service: VtuService;
  outcome: RequeryOutcome;
  /**
   * What the order says it cost us (kobo), or null when it does not say exactly. 0 for a failed
   * order: a provider refunds what it failed to deliver.
   */
  chargedKobo: bigint | null;
  /**
   * The number it was for, as the provider wrote it: with no record here (a restore), whose order it
   * was is found from it.
   */
  recipient: string | null;
  /** When the provider created it, by its clock. */
  createdAt: Date;
};

export class VtuProviderError extends Error {
  override name = 'VtuProviderError';
  readonly provider: string;
  constructor(provider: string, message: string, options?: { cause?: unknown }) {
    super(`${provider}: ${message}`, options);
    this.provider = provider;
  }
}

/**
 * Refused by the adapter before anything was sent (a request it cannot put on the wire, a service
 * the provider does not offer): as definite as the provider's own refusal. Any other error from a
 * purchase leaves its outcome unknown.
 */
export class VtuRefusedLocally extends VtuProviderError {
  override name = 'VtuRefusedLocally';
}

/** The answer for a service the provider does not offer. */
export function notOffered(provider: string, what: string): never {
  throw new VtuRefusedLocally(provider, `does not offer ${what}`);
}

/** The catalogue and look-up calls of the VtuProvider interface. */
type CatalogueCalls = Pick<
  VtuProvider,
  | 'networks'
  | 'dataPlans'
  | 'cableProviders'
  | 'cablePlans'
  | 'discos'
  | 'bettingCompanies'
  | 'educationItems'
  | 'socialServices'
  | 'verifyCustomer'
  | 'airtimeToCashLine'
>;

/**
 * Every catalogue and look-up call, each rejecting as not offered (a routing mistake, like every
 * other failure of a call a rejection): a client spreads them first, then names the calls it serves.
 */
export function catalogueCallsNotOffered(provider: string): CatalogueCalls {
  const none = async (what: string): Promise<never> => notOffered(provider, what);
  return {
    networks: () => none('airtime or data networks'),
    dataPlans: () => none('data plans'),
    cableProviders: () => none('cable'),
    cablePlans: () => none('cable'),
    discos: () => none('electricity'),
    bettingCompanies: () => none('betting'),
    educationItems: () => none('exam pins'),
    socialServices: () => none('social services'),
    verifyCustomer: (request) => none(`customer look-ups (${request.service})`),
    airtimeToCashLine: () => none('airtime-to-cash'),
  };
}
