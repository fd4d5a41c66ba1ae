import type { ProviderBank } from '../providers/payments/payment-provider.ts';

// The banks a person can name for Tier 3 (listBanks, API.md section 16): the payment provider's list
// of Nigerian banks, as much of it as names a bank account someone can hold today. Paystack's list
// keeps retired banks (inactive or deleted) and, now and then, one bank under two names with one
// code; a code must name one bank here, or a person could pick a name that is not the bank their
// account is at.

export type Bank = { code: string; name: string };

/** Active Nigerian NUBAN banks, one per code (the first the provider lists), sorted by name. */
export function usableBanks(listed: readonly ProviderBank[]): Bank[] {
  const byCode = new Map<string, Bank>();
  for (const bank of listed) {
    const usable =
      bank.active &&
      bank.type === 'nuban' &&
      bank.country.toLowerCase() === 'nigeria' &&
      bank.currency === 'NGN';
    if (usable && !byCode.has(bank.code)) byCode.set(bank.code, { code: bank.code, name: bank.name });
  }
  return [...byCode.values()].sort(
    (a, b) => a.name.localeCompare(b.name, 'en', { sensitivity: 'base' }) || a.code.localeCompare(b.code),
  );
}
