import type { Network } from './networks.ts';
import { toE164 } from './phone-number.ts';

// The Nigerian mobile prefix map (shared/reference/providers.md section 5, from the NCC-based table at
// phoneng and the older lists it cites). A purchase checks the recipient's network against it before
// the wallet is debited (SPEC.md "What the service does", item 5).
//
// Three things the reference warns about:
// - Some operators hold a 5-digit block inside another's 4-digit one (07025/07026 are ex-Visafone,
//   now MTN, inside Smile's 0702; 07027 Multi-Links; 07028/07029 Starcomms), so the 5-digit prefix
//   is looked up first.
// - 0707 is MTN in the newer lists and ZoomMobile/Reltel in older ones; we follow the newer lists.
// - Numbers have been portable since 2013, so a prefix names the operator that issued the number,
//   not necessarily the one that serves it today.

/** Operators that own Nigerian mobile prefixes; only the four of `Network` are sold. */
export type Operator = Network | 'ntel' | 'smile' | 'mafab' | 'multilinks' | 'starcomms';

/** Local prefixes (with the leading 0), by operator, as providers.md section 5 lists them. */
const prefixesByOperator: Readonly<Record<Operator, readonly string[]>> = {
  // ex-Visafone 07025, 07026 and 0704 are MTN's now; 0707 per the newer lists (see above).
  mtn: [
    '0703',
    '0704',
    '0706',
    '0707',
    '0803',
    '0806',
    '0810',
    '0813',
    '0814',
    '0816',
    '0903',
    '0906',
    '0913',
    '0916',
    '07025',
    '07026',
  ],
  airtel: ['0701', '0708', '0802', '0808', '0812', '0901', '0902', '0904', '0907', '0911', '0912'],
  glo: ['0705', '0805', '0807', '0811', '0815', '0905', '0915'],
  '9mobile': ['0809', '0817', '0818', '0908', '0909'],
  ntel: ['0804'],
  smile: ['0702'],
  // MAFAB 0801 comes from a single secondary source (providers.md tags it [2nd]).
  mafab: ['0801'],
  multilinks: ['07027', '0709'],
  starcomms: ['07028', '07029', '0819'],
};

const operatorByPrefix: ReadonlyMap<string, Operator> = new Map(
  Object.entries(prefixesByOperator).flatMap(([operator, prefixes]) =>
    prefixes.map((prefix) => [prefix, operator as Operator] as const),
  ),
);

const sold: ReadonlySet<string> = new Set<Network>(['mtn', 'glo', 'airtel', '9mobile']);

/**
 * The operator that issued a Nigerian mobile number: null when the text is not one (anything
 * toE164 refuses), 'unknown' when it is well formed but its prefix is in no list.
 */
export function operatorOfPhone(phone: string): Operator | 'unknown' | null {
  const e164 = toE164(phone);
  if (e164 === null) return null;
  const local = localPhone(e164);
  return operatorByPrefix.get(local.slice(0, 5)) ?? operatorByPrefix.get(local.slice(0, 4)) ?? 'unknown';
}

/**
 * The network a number belongs to, by its prefix: one of the four networks sold, 'other' for a
 * Nigerian mobile number of another operator or of a prefix in no list, null for anything that is
 * not a Nigerian mobile number. Accepts every form toE164 accepts (0803..., 234803..., +234803...).
 */
export function networkOfPhone(phone: string): Network | 'other' | null {
  const operator = operatorOfPhone(phone);
  if (operator === null) return null;
  return sold.has(operator) ? (operator as Network) : 'other';
}

/** The local 11-digit form vendors take (+2348031234567 → 08031234567), from any form toE164 accepts. */
export function localPhone(e164: string): string {
  const normalised = toE164(e164);
  if (normalised === null) throw new RangeError(`not a Nigerian mobile number: ${e164}`);
  return `0${normalised.slice(4)}`;
}
