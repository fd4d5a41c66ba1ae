import { randomInt } from 'node:crypto';

// The random values auth makes. The hashes of the secrets it keeps (PINs, codes, session tokens) are
// src/shared/keyed-hash.ts's, which kyc uses too.

/** A 6-digit code, uniformly drawn. */
export const newOtpCode = (): string => randomInt(0, 1_000_000).toString().padStart(6, '0');

const REFERRAL_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const newReferralCode = (): string =>
  Array.from({ length: 8 }, () => REFERRAL_ALPHABET[randomInt(0, REFERRAL_ALPHABET.length)]).join('');
