import assert from 'node:assert/strict';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

// Signed, short-lived URLs of the service's own: the URL carries a record's id, an expiry and an
// HMAC of both under a key derived from the server-side pepper for one purpose (a KYC document, a
// data export), so that whoever holds the URL may read that one record until the expiry, and nobody
// can make or stretch a URL without the pepper, nor use a signature made for one purpose for another.

/** The longest a signed URL may live: 10 minutes (API.md 17.3). */
export const SIGNED_URL_TTL_SECONDS_MAX = 600;

/**
 * Slack in the lifetime bound below for clocks of different processes that disagree a little: a URL
 * signed by one API process for the full TTL must still be accepted by another whose clock is a few
 * seconds behind.
 */
const CLOCK_SKEW_SECONDS_MAX = 30;

const URL_KEY_BYTES = 32;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The HMAC key of one purpose's URLs, derived from the pepper (HKDF-SHA-256, info `purpose`, e.g.
 * "kyc-document-url"), so that a signature made for one purpose can never stand for another.
 */
export function signedUrlKey(pepper: string, purpose: string): Buffer {
  assert.ok(pepper.length > 0, 'the pepper must not be empty');
  return Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), purpose, URL_KEY_BYTES));
}

function signatureOf(id: string, expires: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`${id}.${expires}`).digest();
}

/** `${baseUrl}${path}/${id}?expires=<unix seconds>&signature=<hex HMAC-SHA-256>`. */
export function signUrl(args: {
  baseUrl: string;
  path: string;
  id: string;
  expiresAt: Date;
  key: Buffer;
}): string {
  assert.match(args.id, UUID_PATTERN, 'a signed id is a UUID');
  assert.ok(args.key.length >= URL_KEY_BYTES, 'the URL key is too short');
  const expiresMs = args.expiresAt.getTime();
  assert.ok(Number.isFinite(expiresMs), 'expiresAt is a valid date');
  // Rounded down, so the URL never lives longer than the caller asked.
  const expires = String(Math.floor(expiresMs / 1000));
  const signature = signatureOf(args.id, expires, args.key).toString('hex');
  const baseUrl = args.baseUrl.replace(/\/+$/, '');
  return `${baseUrl}${args.path}/${args.id}?expires=${expires}&signature=${signature}`;
}

/**
 * Checks the expires and signature query parameters of a signed URL. 'expired' only for a URL we
 * did sign whose time has passed; anything else that is not a valid URL of ours is 'invalid'.
 */
export function verifyUrlSignature(args: {
  id: string;
  expires: string;
  signature: string;
  key: Buffer;
  now: Date;
  /** The longest this purpose signs for: a URL said to live longer is not one of ours. */
  ttlSeconds: number;
}): 'ok' | 'expired' | 'invalid' {
  if (!/^[0-9]{1,12}$/.test(args.expires)) return 'invalid';
  if (!/^[0-9a-f]{64}$/.test(args.signature)) return 'invalid';
  const expected = signatureOf(args.id, args.expires, args.key);
  const given = Buffer.from(args.signature, 'hex');
  // timingSafeEqual throws on different lengths; the pattern above fixes the length, and this check
  // keeps that true if the pattern ever changes.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const expiresMs = Number(args.expires) * 1000;
  const nowMs = args.now.getTime();
  // We never sign for longer than the TTL, so a longer-lived URL is not one of ours, whatever its
  // signature says.
  if (expiresMs - nowMs > (args.ttlSeconds + CLOCK_SKEW_SECONDS_MAX) * 1000) return 'invalid';
  if (nowMs >= expiresMs) return 'expired';
  return 'ok';
}
