import { randomBytes } from 'node:crypto';
import { lagosMinute } from '../lagos-time.ts';

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
