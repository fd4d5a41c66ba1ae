import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

// PINs and OTPs have 10^4 and 10^6 possible values, so a slow hash would not stop an offline
// search; they are stored as HMAC-SHA-256 under a pepper kept outside the database, and guessing
// is stopped by attempt limits. Session tokens are 256-bit random values stored as SHA-256.

export const hmacSecret = (pepper: string, purpose: string, subject: string, secret: string): string =>
  createHmac('sha256', pepper).update(`${purpose}\0${subject}\0${secret}`).digest('hex');

export const sha256Hex = (value: string): string => createHash('sha256').update(value).digest('hex');

export const newToken = (): string => randomBytes(32).toString('base64url');

/** A 6-digit code, uniformly drawn. */
export const newOtpCode = (): string => randomInt(0, 1_000_000).toString().padStart(6, '0');

const REFERRAL_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const newReferralCode = (): string =>
  Array.from({ length: 8 }, () => REFERRAL_ALPHABET[randomInt(0, REFERRAL_ALPHABET.length)]).join('');

/** Constant-time equality of two hex digests; lengths are compared first. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
