import type { networkNames } from '../../../src/shared/networks.ts';
import { toE164 } from '../../../src/shared/phone-number.ts';
import { networkOfPhone } from '../../../src/shared/prefixes.ts';

// The lines of a bulk order as a person pastes them, one per row, from a spreadsheet or a message:
// a phone number and, for airtime, an amount in naira. A plain module, so that its reading is tested
// without a browser (test/web/pasted-lines.test.ts).

export type Network = keyof typeof networkNames;
export type DraftLine = { phone: string; amount: number; network: Network | null };

/** The network a number belongs to, by its prefix; null when it is none of the four. */
export function networkOf(phone: string): Network | null {
  const e164 = toE164(phone);
  const found = e164 === null ? null : networkOfPhone(e164);
  return found === null || found === 'other' ? null : found;
}

/** The phone, up to the first space, comma or semicolon, and the rest of the row. */
const rowPattern = /^\s*([^\s,;]+)[\s,;]*(.*?)\s*$/;
/**
 * An amount in naira as people write it: "1500", "1,500", "1 500", "₦1,500.50", "NGN 1,500". The
 * groups of a thousands separator have three digits, so that "1,50" is refused, not read as 150.
 */
const amountPattern = /^(?:₦|NGN)?\s*(\d{1,3}(?:[, ]\d{3})+|\d+)(\.\d{1,2})?$/i;

/** The amount of a row's text after its phone, in naira; null when it is not one. */
export function readAmount(text: string): number | null {
  const found = amountPattern.exec(text);
  if (found === null) return null;
  const amount = Number(`${found[1]!.replace(/[, ]/g, '')}${found[2] ?? ''}`);
  return amount > 0 ? amount : null;
}

/**
 * Lines pasted one per row: a phone number and, for airtime, an amount ("08031234567, 1,500" or
 * "08031234567 ₦500"). The phone is split off first and the rest of the row is the amount, so a
 * comma inside the amount is a thousands separator, not the end of it. Rows that cannot be read are
 * reported by number, not dropped in silence.
 */
export function readLines(text: string, needAmount: boolean): { lines: DraftLine[]; unreadable: number[] } {
  const lines: DraftLine[] = [];
  const unreadable: number[] = [];
  text.split(/\r?\n/).forEach((row, i) => {
    const found = rowPattern.exec(row);
    if (found === null) return;
    const phone = found[1]!;
    const amount = needAmount ? readAmount(found[2]!) : 0;
    if (toE164(phone) === null || amount === null) {
      unreadable.push(i + 1);
      return;
    }
    lines.push({ phone, amount, network: networkOf(phone) });
  });
  return { lines, unreadable };
}
