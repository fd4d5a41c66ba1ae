import { toE164 } from '../../src/shared/phone-number.ts';
import { localPhone } from '../../src/shared/prefixes.ts';

// Naira, dates and phones as a Nigerian reader expects them: ₦1,500.00, 24 Nov 2026, 14:05, 0803….

const nairaFormat = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' });
const dateTime = new Intl.DateTimeFormat('en-NG', {
  dateStyle: 'medium',
  timeStyle: 'short',
  timeZone: 'Africa/Lagos',
});

/**
 * Naira as the API gives them, a number with at most 2 decimals, written ₦1,500.00. Named apart from
 * the service's formatNaira (src/money.ts), which takes kobo as a bigint: one name, one meaning.
 */
export const formatNairaNumber = (naira: number): string => nairaFormat.format(naira);
export const formatDateTime = (iso: string): string => dateTime.format(new Date(iso));

/** A phone as people write it, 0803… (the service keeps +234…); anything else as given. */
export const shownPhone = (phone: string): string => (toE164(phone) === null ? phone : localPhone(phone));

/** Whole naira and kobo typed by a person ("1,500", "1500.5"), or null when it is not an amount. */
export function parseNaira(text: string): number | null {
  const cleaned = text.replace(/[,\s₦]/g, '');
  if (!/^\d{1,12}(\.\d{1,2})?$/.test(cleaned)) return null;
  return Number(cleaned);
}
