import type { z } from 'zod';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { requireWithin } from '../limits.ts';
import { formatNaira, koboToNaira, nairaToKobo } from '../money.ts';
import { defineOperation, type OperationArgs } from '../operation.ts';
import type { Network, SocialServiceItem } from '../providers/vtu/vtu-provider.ts';
import { networkNames } from '../shared/networks.ts';
import { localPhone } from '../shared/prefixes.ts';
import {
  authorisedMarkupOf,
  buy,
  type PurchaseOpsDeps,
  requireAmount,
  requireNetwork,
  requireRouteOpen,
  routed,
  upstream,
} from './purchase-ops.ts';
import * as s from './schemas.ts';
import { purchaseErrors } from './schemas.ts';
import { checkOrderLink } from './social-links.ts';

// The services the specification routes but names no operation for (API.md section 14): social
// services through the SMM panel and airtime-to-cash through the bills party. Both run the
// purchase path's checks in its order (schema → auth → Tier 1 → PIN → recipient → price) and are
// accepted, sent, settled and requeried by the same stages as the six purchases (module.ts).

const tags = ['vtu'];

/** kobo × quantity / 1000, rounded up to the kobo: an order's price at a rate per 1,000 units. */
const perThousand = (rateKobo: bigint, quantity: number): bigint =>
  (rateKobo * BigInt(quantity) + 999n) / 1000n;

/** An airtime-to-cash payout: the amount at the network's rate, rounded down to the kobo. */
export const payoutOf = (amountKobo: bigint, rateBp: number): bigint =>
  (amountKobo * BigInt(rateBp)) / 10_000n;

async function socialServices(deps: PurchaseOpsDeps): Promise<SocialServiceItem[]> {
  return deps.catalogue.socialServices().catch(upstream);
}

function airtimeToCashTerms(config: Pick<Config, 'airtimeToCash'>, network: Network, amountNaira: number) {
  requireWithin(amountNaira, 'airtime-to-cash sale', {
    min: s.airtimeToCashNairaMin,
    max: s.airtimeToCashNairaMax,
  });
  const amountKobo = nairaToKobo(amountNaira);
  const rateBp = config.airtimeToCash.rateBp[network];
  return { amountKobo, rateBp, payoutKobo: payoutOf(amountKobo, rateBp) };
}

type Args<I extends z.ZodType> = OperationArgs<z.output<I>, 'user'>;

/** listSocialServices: the panel's services at the rates the caller pays, at their price level. */
export async function listSocialServices(
  deps: PurchaseOpsDeps,
  { caller, input }: Args<typeof s.listSocialServicesInput>,
) {
  // The markups buySocialService charges them.
  const [items, { markupOf }, availability] = await Promise.all([
    socialServices(deps),
    deps.purchaseReads(caller.userId),
    deps.catalogue.availabilityOf('social'),
  ]);
  const markup = markupOf('social', deps.catalogue.providerFor('social'));
  const wanted = input.category?.toLowerCase();
  return {
    items: items
      .filter((item) => wanted === undefined || item.category.toLowerCase() === wanted)
      .map((item) => ({
        id: item.serviceId,
        name: item.name,
        category: item.category,
        rate: koboToNaira(deps.catalogue.applyMarkup(markup, item.ratePer1000Kobo).retailKobo),
        min: item.min,
        max: item.max,
      })),
    ...availability,
  };
}

/**
 * buySocialService: Tier 1 and the PIN, the service from the panel's catalogue, the link (a public
 * https address), the quantity's bounds and the price, then the order accepted (buy).
 */
export async function buySocialService(
  deps: PurchaseOpsDeps,
  { caller, input, withCommit }: Args<typeof s.buySocialServiceInput>,
) {
  await requireRouteOpen(deps, 'social');
  const markupOf = await authorisedMarkupOf(deps, caller.userId, input.pin);
  const item = (await socialServices(deps)).find((service) => service.serviceId === input.serviceId);
  if (item === undefined) {
    const message = 'not in the catalogue of social services';
    throw new AppError('VALIDATION_ERROR', `no social service ${input.serviceId}`, {
      details: { issues: [{ path: ['data', 'serviceId'], message }] },
    });
  }
  await checkOrderLink(input.link, {
    allowUnresolved: deps.config.vtu.social.allowUnresolvedLinks,
    resolve: deps.resolveHost,
  });
  requireWithin(input.quantity, `quantity of ${item.name}`, { min: item.min, max: item.max }, 'count');
  const { name } = routed(deps, 'social');
  const retailRate = deps.catalogue.applyMarkup(markupOf('social', name), item.ratePer1000Kobo).retailKobo;
  const amountKobo = perThousand(retailRate, input.quantity);
  // What the panel charges for the order (its rate, rounded up as it rounds): never more than ours.
  const wholesaleKobo = perThousand(item.ratePer1000Kobo, input.quantity);
  requireAmount(input.amount, amountKobo);
  return buy(deps, caller.userId, withCommit, {
    service: 'social',
    provider: name,
    network: null,
    recipient: input.link,
    request: { service: 'social', serviceId: item.serviceId, link: input.link, quantity: input.quantity },
    wholesaleKobo,
    markupKobo: amountKobo - wholesaleKobo,
    description: `${input.quantity} × ${item.name}`,
  });
}

/** quoteAirtimeToCash: what selling the airtime pays, at the network's rate, and where to share it to. */
export async function quoteAirtimeToCash(
  deps: PurchaseOpsDeps,
  { input }: Args<typeof s.quoteAirtimeToCashInput>,
) {
  const { rateBp, payoutKobo } = airtimeToCashTerms(deps.config, input.network, input.amount);
  const sendTo = await deps.catalogue.airtimeToCashLine(input.network).catch(upstream);
  return {
    amount: input.amount,
    payout: koboToNaira(payoutKobo),
    ratePercent: rateBp / 100,
    sendTo,
    ...(await deps.catalogue.availabilityOf('airtime_to_cash')),
  };
}

/**
 * sellAirtime: Tier 1 and the PIN, the number's network, the amount's bounds and the line to share
 * to, then the sale accepted as a credit (buy): nothing debited, the payout credited on confirmation.
 */
export async function sellAirtime(
  deps: PurchaseOpsDeps,
  { caller, input, withCommit }: Args<typeof s.sellAirtimeInput>,
) {
  await requireRouteOpen(deps, 'airtime_to_cash');
  await authorisedMarkupOf(deps, caller.userId, input.pin);
  requireNetwork(input.phone, input.network);
  const { amountKobo, rateBp, payoutKobo } = airtimeToCashTerms(deps.config, input.network, input.amount);
  const sendTo = await deps.catalogue.airtimeToCashLine(input.network).catch(upstream);
  const { name } = routed(deps, 'airtime_to_cash');
  const phone = localPhone(input.phone);
  return buy(deps, caller.userId, withCommit, {
    service: 'airtime_to_cash',
    provider: name,
    network: input.network,
    recipient: phone,
    request: {
      service: 'airtime_to_cash',
      network: input.network,
      phone,
      amountKobo,
      sendTo,
      payoutRateBp: rateBp,
    },
    direction: 'credit',
    creditKobo: payoutKobo,
    wholesaleKobo: amountKobo,
    markupKobo: 0n,
    // The payout is the record's amount (it follows the airtime confirmed): not written here again.
    description: `${formatNaira(amountKobo)} ${networkNames[input.network]} airtime from ${phone} to cash at ${rateBp / 100}%`,
  });
}

/** The routed services' operations, closed over the vtu module's deps, each handled by its named function above. */
export const routedServiceOperations = (deps: PurchaseOpsDeps) => [
  defineOperation({
    name: 'listSocialServices',
    method: 'GET',
    auth: 'user',
    summary: 'Social media services (followers, likes, views, ...) with their retail rate per 1,000 units',
    tags,
    input: s.listSocialServicesInput,
    output: s.listSocialServicesOutput,
    errors: ['UPSTREAM_UNAVAILABLE'],
    handler: (args) => listSocialServices(deps, args),
  }),
  defineOperation({
    name: 'buySocialService',
    method: 'POST',
    auth: 'user',
    summary:
      'Order a social media service for a public https link; `amount` must be rate × quantity / 1000 rounded up to the kobo. A part the panel cannot fill is refunded',
    tags,
    input: s.buySocialServiceInput,
    output: s.vtuTransaction,
    errors: [...purchaseErrors, 'BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'PRICE_CHANGED', 'UPSTREAM_UNAVAILABLE'],
    handler: (args) => buySocialService(deps, args),
  }),
  defineOperation({
    name: 'quoteAirtimeToCash',
    method: 'GET',
    auth: 'user',
    summary:
      'What selling airtime pays into the wallet, and the number to share the airtime to (₦100 – ₦50,000)',
    tags,
    input: s.quoteAirtimeToCashInput,
    output: s.quoteAirtimeToCashOutput,
    errors: ['BELOW_MINIMUM', 'ABOVE_MAXIMUM', 'UPSTREAM_UNAVAILABLE'],
    handler: (args) => quoteAirtimeToCash(deps, args),
  }),
  defineOperation({
    name: 'sellAirtime',
    method: 'POST',
    auth: 'user',
    summary:
      'Sell airtime shared from your line: nothing is debited; the wallet is credited the payout once the provider confirms the airtime arrived (failed after 30 minutes without it)',
    tags,
    input: s.sellAirtimeInput,
    output: s.vtuTransaction,
    errors: [
      'KYC_TIER_REQUIRED',
      'PIN_NOT_SET',
      'INVALID_PIN',
      'PIN_LOCKED',
      'NETWORK_MISMATCH',
      'BELOW_MINIMUM',
      'ABOVE_MAXIMUM',
      'UPSTREAM_UNAVAILABLE',
      'SERVICE_PAUSED',
    ],
    handler: (args) => sellAirtime(deps, args),
  }),
];
