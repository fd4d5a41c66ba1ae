import { koboToNaira } from '../money.ts';
import type { UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { mobileNetworkCodes, type Network } from '../shared/networks.ts';
import { toE164 } from '../shared/phone-number.ts';
import { networkOfPhone } from '../shared/prefixes.ts';
import { airtimeNairaMax, airtimeNairaMin } from '../vtu/schemas.ts';
import { fitsScreen } from './gsm.ts';
import { airtimeWhat, dataWhat, menuNetworks, nairaText, screens } from './screens.ts';

// The menu of API.md 17.6, replayed from a session's inputs on every step: the gateway sends all of
// them each time, so the menu keeps no state between callbacks. Each input moves from one place to the
// next; `0` goes back where there is somewhere to go back to (not on the amount prompt, where it is an
// amount out of bounds, nor on the PIN prompt, where it cancels). The last input of a payment is its
// PIN: the menu then hands the payment to payments.ts instead of a screen. Pure over the inputs and
// the loaders, so the screens test can walk every place with any values.

/** A data plan as the menu lists it: its label (no network name), its price for this person. */
export type MenuPlan = { planId: string; label: string; priceKobo: bigint };

/** What the menu reads as it goes, for the person dialling. */
export type MenuLoaders = {
  /** The wallet's available balance, kobo. */
  balanceKobo(): Promise<bigint>;
  /** The last three wallet movements, one short line each, newest first. */
  lastTransactionLines(): Promise<string[]>;
  /**
   * The network's plans at this person's prices, from the routed provider's cached catalogue;
   * 'not_ready' when it could not be had within the screen's bound.
   */
  dataPlans(network: Network): Promise<MenuPlan[] | 'not_ready'>;
};

/** The person dialling: their phone and the network the gateway says it is on. */
export type MenuCaller = { phone: string; networkCode: string | null };

/** What a payment buys, as the vtu api's orderFor takes it (without the PIN). */
export type MenuPayment =
  | { service: 'airtime'; fields: { network: Network; phone: string; amount: number }; what: string }
  | {
      service: 'data';
      fields: { network: Network; phone: string; plan_id: string; amount: number };
      what: string;
    };

export type MenuOutcome =
  | { kind: 'screen'; screen: UssdScreen }
  /** The PIN was typed: pay. `choices` are the inputs before it, which name the payment (its reference). */
  | { kind: 'pay'; payment: MenuPayment; pin: string; choices: string[] };

export const plansPerScreen = 5;
const airtimeKoboMin = BigInt(airtimeNairaMin) * 100n;

/**
 * The airtime amounts the prompt offers: the app's bounds, the top lowered to USSD_SINGLE_MAX so that
 * nobody is asked for a PIN to pay what the channel refuses (the payment still judges its charge).
 */
export const airtimeBounds = (singleMaxKobo: bigint) => {
  const appMaxKobo = BigInt(airtimeNairaMax) * 100n;
  return { minKobo: airtimeKoboMin, maxKobo: singleMaxKobo < appMaxKobo ? singleMaxKobo : appMaxKobo };
};
export type AirtimeBounds = ReturnType<typeof airtimeBounds>;

/** The network a gateway's networkCode (MCC-MNC) names. */
const networkByCode: ReadonlyMap<string, Network> = new Map(
  Object.entries(mobileNetworkCodes).map(([network, code]) => [code, network as Network]),
);

/** The caller's own network: as the gateway says it, else by the number's prefix; null when neither knows. */
export function ownNetwork(caller: MenuCaller): Network | null {
  const said = caller.networkCode === null ? undefined : networkByCode.get(caller.networkCode);
  if (said !== undefined) return said;
  const byPrefix = networkOfPhone(caller.phone);
  return byPrefix === null || byPrefix === 'other' ? null : byPrefix;
}

type Place =
  | { at: 'main' }
  | { at: 'airtimeFor' }
  | { at: 'airtimeNumber'; wrong: boolean }
  | { at: 'airtimeNetwork'; phone: string }
  | { at: 'airtimeAmount'; network: Network; phone: string; wrong: boolean }
  | { at: 'dataNetwork' }
  | { at: 'plans'; network: Network; page: number }
  | { at: 'dataFor'; network: Network; plan: MenuPlan }
  | { at: 'dataNumber'; network: Network; plan: MenuPlan; wrong: boolean }
  | { at: 'confirm'; payment: MenuPayment; wrong: boolean };

/** What one input does at a place. */
type Move =
  | { to: Place }
  | { back: true }
  | { invalid: true }
  | { end: UssdScreen }
  | { pay: MenuPayment; pin: string };

const choice = (input: string, count: number): number | null =>
  /^[1-9]$/.test(input) && Number(input) <= count ? Number(input) : null;

/** Runs the inputs from the first screen and answers the screen to show, or the payment to make. */
export async function runMenu(
  inputs: readonly string[],
  caller: MenuCaller,
  loaders: MenuLoaders,
  bounds: AirtimeBounds,
): Promise<MenuOutcome> {
  const trail: Place[] = [{ at: 'main' }];
  let invalid = false;
  for (const [i, input] of inputs.entries()) {
    const here = trail.at(-1)!;
    const move = await moveFrom(here, input, caller, loaders, bounds);
    invalid = false;
    if ('to' in move) {
      // The same place again replaces itself: the next page of plans (so that back leaves the plans,
      // not one page), or a prompt asked again after a wrong number, amount or PIN.
      if (move.to.at === here.at) trail[trail.length - 1] = move.to;
      else trail.push(move.to);
    } else if ('back' in move) {
      if (trail.length > 1) trail.pop();
    } else if ('invalid' in move) {
      invalid = true;
    } else if ('end' in move) {
      return { kind: 'screen', screen: move.end };
    } else {
      return { kind: 'pay', payment: move.pay, pin: move.pin, choices: inputs.slice(0, i) as string[] };
    }
  }
  const screen = await screenOf(trail.at(-1)!, loaders, bounds);
  if (!invalid || screen.type === 'END') return { kind: 'screen', screen };
  const flagged = screens.invalid(screen);
  // Where the note does not fit (a full page of plans), the screen is shown again as it was.
  return { kind: 'screen', screen: fitsScreen(flagged.text) ? flagged : screen };
}

async function moveFrom(
  here: Place,
  input: string,
  caller: MenuCaller,
  loaders: MenuLoaders,
  bounds: AirtimeBounds,
): Promise<Move> {
  switch (here.at) {
    case 'main': {
      switch (choice(input, 4)) {
        case 1:
          return { end: screens.balance(await loaders.balanceKobo()) };
        case 2:
          return { to: { at: 'airtimeFor' } };
        case 3:
          return { to: { at: 'dataNetwork' } };
        case 4:
          return { end: screens.lastTransactions(await loaders.lastTransactionLines()) };
        default:
          return { invalid: true };
      }
    }
    case 'airtimeFor': {
      if (input === '0') return { back: true };
      const picked = choice(input, 2);
      if (picked === 1) {
        const network = ownNetwork(caller);
        if (network === null) return { end: screens.ownNetworkUnknown() };
        return { to: { at: 'airtimeAmount', network, phone: caller.phone, wrong: false } };
      }
      if (picked === 2) return { to: { at: 'airtimeNumber', wrong: false } };
      return { invalid: true };
    }
    case 'airtimeNumber': {
      if (input === '0') return { back: true };
      const phone = toE164(input);
      if (phone === null) return { to: { at: 'airtimeNumber', wrong: true } };
      return { to: { at: 'airtimeNetwork', phone } };
    }
    case 'airtimeNetwork': {
      if (input === '0') return { back: true };
      const picked = choice(input, menuNetworks.length);
      if (picked === null) return { invalid: true };
      const network = menuNetworks[picked - 1]!;
      // The number's prefix against the network chosen, at once: before the amount and the PIN.
      if (networkOfPhone(here.phone) !== network)
        return { end: screens.networkMismatch(here.phone, network) };
      return { to: { at: 'airtimeAmount', network, phone: here.phone, wrong: false } };
    }
    case 'airtimeAmount': {
      // Whole naira only: a keypad has no decimal point, and `0` is no way back here.
      const kobo = /^\d{1,7}$/.test(input) ? BigInt(input) * 100n : null;
      if (kobo === null || kobo < bounds.minKobo || kobo > bounds.maxKobo)
        return { to: { ...here, wrong: true } };
      const payment: MenuPayment = {
        service: 'airtime',
        fields: { network: here.network, phone: here.phone, amount: koboToNaira(kobo) },
        what: airtimeWhat(kobo, here.network, here.phone),
      };
      return { to: { at: 'confirm', payment, wrong: false } };
    }
    case 'dataNetwork': {
      if (input === '0') return { back: true };
      const picked = choice(input, menuNetworks.length);
      if (picked === null) return { invalid: true };
      return { to: { at: 'plans', network: menuNetworks[picked - 1]!, page: 0 } };
    }
    case 'plans': {
      const plans = await loaders.dataPlans(here.network);
      if (plans === 'not_ready') return { end: screens.plansNotReady() };
      const more = (here.page + 1) * plansPerScreen < plans.length;
      if (input === '0') return more ? { to: { ...here, page: here.page + 1 } } : { back: true };
      const shown = plans.slice(here.page * plansPerScreen, (here.page + 1) * plansPerScreen);
      const picked = choice(input, shown.length);
      if (picked === null) return { invalid: true };
      return { to: { at: 'dataFor', network: here.network, plan: shown[picked - 1]! } };
    }
    case 'dataFor': {
      if (input === '0') return { back: true };
      const picked = choice(input, 2);
      if (picked === 1) {
        const network = ownNetwork(caller);
        if (network !== here.network) return { end: screens.networkMismatch(caller.phone, here.network) };
        return {
          to: { at: 'confirm', payment: dataPayment(here.network, here.plan, caller.phone), wrong: false },
        };
      }
      if (picked === 2)
        return { to: { at: 'dataNumber', network: here.network, plan: here.plan, wrong: false } };
      return { invalid: true };
    }
    case 'dataNumber': {
      if (input === '0') return { back: true };
      const phone = toE164(input);
      if (phone === null) return { to: { ...here, wrong: true } };
      if (networkOfPhone(phone) !== here.network)
        return { end: screens.networkMismatch(phone, here.network) };
      return { to: { at: 'confirm', payment: dataPayment(here.network, here.plan, phone), wrong: false } };
    }
    case 'confirm': {
      if (input === '0') return { end: screens.cancelled() };
      if (!/^\d{4}$/.test(input)) return { to: { ...here, wrong: true } };
      return { pay: here.payment, pin: input };
    }
  }
}

function dataPayment(network: Network, plan: MenuPlan, phone: string): MenuPayment {
  return {
    service: 'data',
    // The price shown is the price agreed: a change since is PRICE_CHANGED, never a different charge.
    fields: { network, phone, plan_id: plan.planId, amount: koboToNaira(plan.priceKobo) },
    what: dataWhat(plan.label, plan.priceKobo, phone),
  };
}

async function screenOf(here: Place, loaders: MenuLoaders, bounds: AirtimeBounds): Promise<UssdScreen> {
  switch (here.at) {
    case 'main':
      return screens.main();
    case 'airtimeFor':
      return screens.airtimeFor();
    case 'airtimeNumber':
    case 'dataNumber':
      return here.wrong ? screens.notANumber() : screens.enterNumber();
    case 'airtimeNetwork':
      return screens.numberNetwork(here.phone);
    case 'airtimeAmount':
      return here.wrong
        ? screens.amountOutOfBounds(bounds.minKobo, bounds.maxKobo)
        : screens.airtimeAmount(bounds.minKobo, bounds.maxKobo);
    case 'dataNetwork':
      return screens.dataNetwork();
    case 'plans': {
      const plans = await loaders.dataPlans(here.network);
      if (plans === 'not_ready') return screens.plansNotReady();
      if (plans.length === 0) return screens.noPlans(here.network);
      const shown = plans.slice(here.page * plansPerScreen, (here.page + 1) * plansPerScreen);
      const more = (here.page + 1) * plansPerScreen < plans.length;
      return screens.plans(
        here.network,
        shown.map((plan, i) => planLine(i + 1, plan)),
        more,
      );
    }
    case 'dataFor':
      return screens.dataFor();
    case 'confirm':
      return here.wrong ? screens.pinShape(here.payment.what) : screens.confirm(here.payment.what);
  }
}

/** One plan's line on a page: its number, its label and its price for this person. */
export const planLine = (n: number, plan: MenuPlan): string =>
  `${n} ${plan.label} ${nairaText(plan.priceKobo)}`;
