import { randomBytes } from 'node:crypto';

// A purchase's reference is ours: it is the ledger's reference for the purchase and what every
// requery looks the order up by, whichever provider the purchase is routed to. So it is made here,
// in one form every provider takes. VTpass's is the narrowest (shared/reference/providers.md section
// 2): its request_id starts with the date and time to the minute in Lagos, YYYYMMDDHHmm, then
// letters and digits, and a stale one is refused (085). The data vendor takes any non-empty `ident`
// and the SMM panel takes no reference of ours, so a reference of VTpass's form suits all three.
// The adapters keep checking what they are given (isVtpassRequestId); test/vtu/references.test.ts
// holds this form to that rule.

/** The suffix's length at most, as the VTpass client checks it: 50 characters in all with the minute. */
const suffixLengthMax = 38;
const suffixPattern = new RegExp(`^[A-Za-z0-9]{1,${suffixLengthMax}}$`);
/** Random bytes per reference, written as hex: 80 bits, unique without asking anyone. */
const randomSuffixBytes = 10;

const lagosTime = new Intl.DateTimeFormat('en-GB', {
  timeZone: 'Africa/Lagos',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** YYYYMMDDHHmm of the instant in Africa/Lagos. */
export function lagosMinute(now: Date): string {
  // Every zone's offset is whole minutes, so the Lagos minute changes only when the UTC one does:
  // formatted once a minute, not once a request.
  const utcMinute = Math.floor(now.getTime() / 60_000);
  if (utcMinute !== lastMinute.utcMinute) {
    const parts = Object.fromEntries(lagosTime.formatToParts(now).map((part) => [part.type, part.value]));
    lastMinute = { utcMinute, lagos: `${parts.year}${parts.month}${parts.day}${parts.hour}${parts.minute}` };
  }
  return lastMinute.lagos;
}

// The minute last formatted: a cache of a pure function, so whoever shares it gets the same answers.
let lastMinute = { utcMinute: Number.NaN, lagos: '' };

/** A reference: now in Lagos to the minute, then the suffix (letters and digits) that makes it unique. */
export function purchaseReference(now: Date, suffix: string): string {
  if (!suffixPattern.test(suffix)) {
    throw new RangeError(`a reference suffix is 1-${suffixLengthMax} letters and digits: ${suffix}`);
  }
  return `${lagosMinute(now)}${suffix}`;
}

/** A new purchase's reference: dated now, with a random suffix. */
export const newPurchaseReference = (now: Date): string =>
  purchaseReference(now, randomBytes(randomSuffixBytes).toString('hex'));
