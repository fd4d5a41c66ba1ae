// "Buy again" and beneficiaries open a payment screen with its details filled in. The search
// parameters every buy screen reads are these; each screen takes what it knows and ignores the rest.

export type Prefill = {
  /** The phone number, meter, smartcard or betting account. */
  recipient?: string;
  /** Naira, as the screen's amount field takes it. */
  amount?: number;
  network?: string;
  /** A data plan, cable bouquet or exam variation. */
  plan?: string;
  /** Disco, cable provider, betting company or exam. */
  provider?: string;
  /** Electricity meter type (prepaid, postpaid) or cable subscription type. */
  type?: string;
};

/** A value as text. The router reads `plan=352` typed in the address bar as a number: kept as "352". */
const text = (value: unknown): string | undefined => {
  const written = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  return typeof written === 'string' && written.trim() !== '' ? written.trim().slice(0, 100) : undefined;
};

/** A route's `validateSearch`: keeps only well-formed prefill values from the address bar. */
export function validatePrefill(search: Record<string, unknown>): Prefill {
  const amount = typeof search.amount === 'number' ? search.amount : Number(text(search.amount));
  const prefill: Prefill = {};
  for (const key of ['recipient', 'network', 'plan', 'provider', 'type'] as const) {
    const value = text(search[key]);
    if (value !== undefined) prefill[key] = value;
  }
  if (Number.isFinite(amount) && amount > 0) prefill.amount = amount;
  return prefill;
}

/** The buy screen of each VTU service, by the service name the transaction record carries. */
export const buyPaths = {
  airtime: '/buy/airtime',
  data: '/buy/data',
  electricity: '/buy/electricity',
  cable: '/buy/cable',
  betting: '/buy/betting',
  education: '/buy/education',
  social: '/buy/social',
  airtime_to_cash: '/buy/airtime-to-cash',
} as const;

/** What a purchase record says about itself, as far as buying it again needs. */
type Bought = {
  recipient: string;
  network?: string | undefined;
  order?:
    | {
        provider?: string | undefined;
        plan?: string | undefined;
        type?: string | undefined;
        faceValue?: number | undefined;
      }
    | undefined;
};

/**
 * "Buy again": the search parameters that open a purchase's buy screen filled in as it was bought.
 * The amount is the face value asked for; a plan's price is the screen's to read again.
 */
export function buyAgainSearch(purchase: Bought): Prefill {
  const prefill: Prefill = { recipient: purchase.recipient };
  const { order } = purchase;
  if (purchase.network !== undefined) prefill.network = purchase.network;
  if (order?.faceValue !== undefined) prefill.amount = order.faceValue;
  if (order?.plan !== undefined) prefill.plan = order.plan;
  if (order?.provider !== undefined) prefill.provider = order.provider;
  if (order?.type !== undefined) prefill.type = order.type;
  return prefill;
}
