// The KYC provider: face liveness (verified from a token the provider's browser widget issued),
// NIN look-up and bank-account name look-up. The real client speaks a Nigerian KYC provider's REST
// API (Dojah's shapes, shared/reference/providers.md section 6); the sandbox simulates it.
//
// The look-ups send the names the user claims, as the providers' "verify" endpoints take them; the
// service never trusts the provider's own match verdict and compares names itself (kyc/names.ts).

export type LivenessResult =
  | { status: 'passed'; reference: string }
  | { status: 'failed'; reference: string; reason: string }
  /** The provider does not know the token (never issued, already used, or expired). */
  | { status: 'unknown_token' };

export type NinRecord = {
  firstName: string;
  middleName: string | null;
  lastName: string;
  phone: string | null;
};

export type NinLookup = { found: true; record: NinRecord } | { found: false };

export type BankAccountLookup = { found: true; accountName: string } | { found: false };

export type KycProvider = {
  verifyLiveness(token: string): Promise<LivenessResult>;
  lookupNin(request: { nin: string; firstName: string; lastName: string }): Promise<NinLookup>;
  lookupBankAccount(request: {
    bankCode: string;
    accountNumber: string;
    firstName: string;
    lastName: string;
  }): Promise<BankAccountLookup>;
};

/** The provider could not be reached or gave no usable answer (timeout, 5xx, bad body). */
export class KycProviderUnavailableError extends Error {
  override name = 'KycProviderUnavailableError';
}
