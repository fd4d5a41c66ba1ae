import { koboToNaira } from '../../../money.ts';
import { digitsFrom } from './wire.ts';

// What a delivered bill carries, as each product's answer writes it (providers.md section 9): a
// prepaid meter's token and units, the meter's holder, exam pins; and the names and addresses the
// sandbox makes up, stably, from a number's digits.

/** Band A's tariff, in kobo per kWh. */
const tariffKoboPerKwh = 20_950n;

/** A prepaid token in the fields the DisCo uses (providers.md section 9). */
export function electricityToken(
  serviceID: string,
  requestId: string,
  amountKobo: bigint,
): Record<string, unknown> {
  const token = digitsFrom(`token:${requestId}`, 20);
  const spaced = token.replace(/(\d{4})(?=\d)/g, '$1 ');
  const tenthsKwh = (amountKobo * 10n) / tariffKoboPerKwh;
  const units = `${tenthsKwh / 10n}.${tenthsKwh % 10n}`;
  const common = { purchased_code: `Token : ${spaced}` };
  switch (serviceID) {
    case 'eko-electric':
      return {
        ...common,
        mainToken: token,
        mainTokenDescription: 'Normal Sale',
        mainTokenUnits: units,
        mainsTokenAmount: koboToNaira(amountKobo),
        bonusToken: null,
        tariffIndex: 'A',
      };
    case 'kano-electric':
      return {
        ...common,
        Token: token,
        Units: `${units} kWh`,
        Tariff: 'A',
        Receipt: digitsFrom(requestId, 10),
      };
    default:
      return {
        ...common,
        token,
        tokenAmount: koboToNaira(amountKobo),
        units: `${units} kWh`,
        tariff: 'Band A',
        exchangeReference: digitsFrom(`exchange:${requestId}`, 12),
      };
  }
}

/** The meter's holder in the fields the DisCo's answer uses, if it names them (providers.md section 9). */
export function meterHolder(serviceID: string, meter: string): Record<string, unknown> {
  switch (serviceID) {
    case 'eko-electric':
    case 'portharcourt-electric':
      return {};
    case 'kano-electric':
      return { CustomerName: customerName(meter), CustomerAddress: customerAddress(meter) };
    default:
      return { customerName: customerName(meter), customerAddress: customerAddress(meter) };
  }
}

export function examPins(serviceID: string, requestId: string, quantity: number): Record<string, unknown> {
  const pins = Array.from({ length: quantity }, (_, index) => ({
    Serial: `${serviceID === 'nabteb' ? 'NBT' : 'WRN'}${digitsFrom(`serial:${requestId}:${index}`, 9)}`,
    Pin: digitsFrom(`pin:${requestId}:${index}`, 12),
  }));
  switch (serviceID) {
    case 'jamb': {
      const pin = digitsFrom(`jamb:${requestId}`, 15);
      return { purchased_code: `Pin : ${pin}` };
    }
    case 'neco': {
      const tokens = pins.map((pin) => `NECO${pin.Pin}`);
      return { purchased_code: tokens.map((token) => `Token : ${token}`).join('||'), tokens };
    }
    default:
      return {
        purchased_code: pins.map((pin) => `Serial No:${pin.Serial}, pin: ${pin.Pin}`).join('||'),
        cards: pins,
      };
  }
}

/** The fields that carry a token or pins, in every DisCo's and exam's spelling (above). */
const tokenFields = ['token', 'Token', 'mainToken'] as const;
const pinFields = ['cards', 'tokens'] as const;

/**
 * A delivered order's product fields as VTpass answers while the DisCo or the exam board has not
 * released the token or pins yet: the same fields, the token null, the pins empty and no
 * purchased_code. Null when the fields carry no token or pins (a postpaid meter, an airtime top-up).
 */
export function withoutDelivery(extras: Record<string, unknown>): Record<string, unknown> | null {
  const purchased = extras.purchased_code;
  if (typeof purchased !== 'string' || purchased === '') return null;
  const emptied: Record<string, unknown> = { ...extras, purchased_code: '' };
  for (const field of tokenFields) if (field in emptied) emptied[field] = null;
  for (const field of pinFields) if (field in emptied) emptied[field] = [];
  return emptied;
}

const firstNames = [
  'Adaeze',
  'Chinedu',
  'Olumide',
  'Aisha',
  'Emeka',
  'Funmilayo',
  'Ibrahim',
  'Ngozi',
  'Tunde',
];
const lastNames = ['Okafor', 'Adeyemi', 'Bello', 'Eze', 'Ogunleye', 'Musa', 'Nwosu', 'Balogun', 'Okonkwo'];
const streets = [
  'Allen Avenue, Ikeja',
  'Adeola Odeku Street, Victoria Island',
  'Ogui Road, Enugu',
  'Ring Road, Ibadan',
];

export function customerName(number: string): string {
  const seed = Number.parseInt(digitsFrom(`name:${number}`, 4), 10);
  return `${lastNames[seed % lastNames.length]} ${firstNames[Math.floor(seed / 10) % firstNames.length]}`.toUpperCase();
}

export function customerAddress(number: string): string {
  const seed = Number.parseInt(digitsFrom(`customer:${number}`, 4), 10);
  return `${(seed % 98) + 1} ${streets[seed % streets.length]}`;
}
