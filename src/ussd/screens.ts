import type { UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { type Network, networkNames } from '../shared/networks.ts';
import { localPhone } from '../shared/prefixes.ts';

// Every text the USSD menu shows, in the words a person uses, each within one screen of 160 GSM 7-bit
// characters (gsm.ts; test/ussd/screens.test.ts walks them all with the longest values). Naira is
// written N1,500 (₦ is outside the alphabet and would cut the screen to 80 characters).

export const con = (text: string): UssdScreen => ({ type: 'CON', text });
export const end = (text: string): UssdScreen => ({ type: 'END', text });

/** N1,500 or N1,500.50 from kobo, without a float. */
export function nairaText(kobo: bigint): string {
  const sign = kobo < 0n ? '-' : '';
  const abs = kobo < 0n ? -kobo : kobo;
  const whole = (abs / 100n).toLocaleString('en-NG');
  const part = abs % 100n;
  return `${sign}N${whole}${part === 0n ? '' : `.${part.toString().padStart(2, '0')}`}`;
}

/** The networks in the order the menu numbers them. */
export const menuNetworks: readonly Network[] = ['mtn', 'airtel', 'glo', '9mobile'];

const networkChoices = menuNetworks.map((network, i) => `${i + 1} ${networkNames[network]}`).join('\n');

export const screens = {
  main: () => con('billrail\n1 Balance\n2 Airtime\n3 Data\n4 Last 3 transactions'),
  invalid: (screen: UssdScreen): UssdScreen => con(`Invalid choice.\n${screen.text}`),

  // Who may use the channel: each refusal says what to do in the app.
  unknownNumber: () =>
    end('This number has no billrail account. Sign up in the billrail app with this number first.'),
  ussdOff: () => end('USSD is off for your account. Switch on USSD in the billrail app: Settings.'),
  tierRequired: () => end('Verify your identity (Tier 1) in the billrail app before paying by USSD.'),
  pinNotSet: () => end('Set a transaction PIN in the billrail app: Settings, then dial again.'),
  frozen: () =>
    end('Your account is frozen: nothing can be paid from it. Contact support in the billrail app.'),
  malformed: () => end('Sorry, we could not read that. Please dial again.'),
  tooMany: () => end('Too many requests from this phone. Please wait a minute and dial again.'),

  balance: (availableKobo: bigint) => end(`Your billrail balance is ${nairaText(availableKobo)}.`),
  lastTransactions: (lines: readonly string[]) =>
    end(lines.length === 0 ? 'No transactions yet.' : `Last ${lines.length}:\n${lines.join('\n')}`),

  airtimeFor: () => con('Airtime for:\n1 This phone\n2 Another number\n0 Back'),
  dataFor: () => con('Data for:\n1 This phone\n2 Another number\n0 Back'),
  enterNumber: () => con('Enter the phone number, 11 digits (0803...).\n0 Back'),
  notANumber: () => con('That is not a Nigerian mobile number. Enter 11 digits (0803...).\n0 Back'),
  numberNetwork: (phone: string) => con(`Network of ${localPhone(phone)}:\n${networkChoices}\n0 Back`),
  dataNetwork: () => con(`Data network:\n${networkChoices}\n0 Back`),
  networkMismatch: (phone: string, network: Network) =>
    end(
      `${localPhone(phone)} is not on ${networkNames[network]}. Nothing was paid. Dial again and choose its network.`,
    ),
  ownNetworkUnknown: () =>
    end('We cannot tell which network this phone is on. Dial again and choose 2 Another number.'),
  airtimeAmount: (minKobo: bigint, maxKobo: bigint) =>
    con(`Enter the amount in naira, ${nairaText(minKobo)} to ${nairaText(maxKobo)}:`),
  amountOutOfBounds: (minKobo: bigint, maxKobo: bigint) =>
    con(`Enter a whole amount from ${nairaText(minKobo)} to ${nairaText(maxKobo)}:`),
  plans: (network: Network, lines: readonly string[], more: boolean) =>
    con(`${networkNames[network]} data:\n${lines.join('\n')}\n${more ? '0 More' : '0 Back'}`),
  noPlans: (network: Network) =>
    end(`No ${networkNames[network]} data plans can be bought now. Try again later.`),
  plansNotReady: () => end('Data plans cannot be shown now. Please try again in a minute.'),

  confirm: (what: string) => con(`${what}.\nEnter PIN to pay, 0 to cancel`),
  pinShape: (what: string) => con(`A PIN is 4 digits. ${what}.\nEnter PIN to pay, 0 to cancel`),
  cancelled: () => end('Cancelled. Nothing was paid.'),

  // The payment's answers.
  processing: (what: string, reference: string) =>
    end(`Processing ${what}. Ref ${reference}. The result will be in your billrail app.`),
  wrongPin: (attemptsLeft: number) =>
    end(`Wrong PIN. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left. Nothing was paid.`),
  pinLocked: (minutes: number) =>
    end(
      `Too many wrong PINs. Try again in ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}. Nothing was paid.`,
    ),
  singleMax: (maxKobo: bigint) =>
    end(`USSD payments are up to ${nairaText(maxKobo)}; use the app for more. Nothing was paid.`),
  ussdDailyMax: (remainingKobo: bigint) =>
    end(
      `That passes your USSD limit for today: ${nairaText(remainingKobo)} left. Use the app for more. Nothing was paid.`,
    ),
  accountDailyLimit: (remainingKobo: bigint) =>
    end(`That passes your daily limit: ${nairaText(remainingKobo)} left today. Nothing was paid.`),
  insufficientFunds: () =>
    end('Your wallet balance is too low. Fund it in the billrail app. Nothing was paid.'),
  paused: () => end('This service is paused for now. Please try again later. Nothing was paid.'),
  prefixMismatch: () =>
    end('This number is not on the network chosen. Please buy it in the billrail app. Nothing was paid.'),
  priceChanged: () => end('The price has just changed. Please dial again to see it. Nothing was paid.'),
  refused: () =>
    end('This payment cannot be made by USSD now. Please use the billrail app. Nothing was paid.'),
  unavailable: () =>
    end('Sorry, we cannot take this payment now. Please try again shortly. Nothing was paid.'),
  stillWorking: () => end('Still working on it: the result will be in your billrail app.'),
};

/** What a payment buys, as the confirmation and the processing screens say it. */
export const airtimeWhat = (faceKobo: bigint, network: Network, phone: string): string =>
  `${nairaText(faceKobo)} ${networkNames[network]} airtime to ${localPhone(phone)}`;

export const dataWhat = (plan: string, priceKobo: bigint, phone: string): string =>
  `${plan} data for ${nairaText(priceKobo)} to ${localPhone(phone)}`;
