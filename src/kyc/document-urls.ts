import assert from 'node:assert/strict';
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

// Signed, short-lived URLs for identity documents kept in the local private directory. The URL
// carries the document id, an expiry and an HMAC of both under a key derived from the server-side
// pepper, so that whoever holds the URL may read that one document until the expiry, and nobody can
// make or stretch a URL without the pepper.

export const DOCUMENT_URL_TTL_SECONDS = 600;

/**
 * Slack in the lifetime bound below for clocks of different processes that disagree a little: a URL
 * signed by one API process for the full TTL must still be accepted by another whose clock is a few
 * seconds behind.
 */
const CLOCK_SKEW_SECONDS_MAX = 30;

const DOCUMENT_URL_KEY_BYTES = 32;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The HMAC key of document URLs, derived from the pepper (HKDF-SHA-256, info "kyc-document-url") so
 * that a signature made for one purpose can never stand for another made with the same pepper.
 */
export function documentUrlKey(pepper: string): Buffer {
  assert.ok(pepper.length > 0, 'the pepper must not be empty');
  return Buffer.from(hkdfSync('sha256', pepper, Buffer.alloc(0), 'kyc-document-url', DOCUMENT_URL_KEY_BYTES));
}

function signatureOf(documentId: string, expires: string, key: Buffer): Buffer {
  return createHmac('sha256', key).update(`${documentId}.${expires}`).digest();
}

/** `${baseUrl}/kyc/documents/${documentId}?expires=<unix seconds>&signature=<hex HMAC-SHA-256>`. */
export function signDocumentUrl(args: {
  baseUrl: string;
  documentId: string;
  expiresAt: Date;
  key: Buffer;
}): string {
  assert.match(args.documentId, UUID_PATTERN, 'a document id is a UUID');
  assert.ok(args.key.length >= DOCUMENT_URL_KEY_BYTES, 'the URL key is too short');
  const expiresMs = args.expiresAt.getTime();
  assert.ok(Number.isFinite(expiresMs), 'expiresAt is a valid date');
  // Rounded down, so the URL never lives longer than the caller asked.
  const expires = String(Math.floor(expiresMs / 1000));
  const signature = signatureOf(args.documentId, expires, args.key).toString('hex');
  const baseUrl = args.baseUrl.replace(/\/+$/, '');
  return `${baseUrl}/kyc/documents/${args.documentId}?expires=${expires}&signature=${signature}`;
}

/**
 * Checks the expires and signature query parameters of a document URL. 'expired' only for a URL we
 * did sign whose time has passed; anything else that is not a valid URL of ours is 'invalid'.
 */
export function verifyDocumentSignature(args: {
  documentId: string;
  expires: string;
  signature: string;
  key: Buffer;
  now: Date;
}): 'ok' | 'expired' | 'invalid' {
  if (!/^[0-9]{1,12}$/.test(args.expires)) return 'invalid';
  if (!/^[0-9a-f]{64}$/.test(args.signature)) return 'invalid';
  const expected = signatureOf(args.documentId, args.expires, args.key);
  const given = Buffer.from(args.signature, 'hex');
  // timingSafeEqual throws on different lengths; the pattern above fixes the length, and this check
  // keeps that true if the pattern ever changes.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
  const expiresMs = Number(args.expires) * 1000;
  const nowMs = args.now.getTime();
  // We never sign for longer than the TTL, so a longer-lived URL is not one of ours, whatever its
  // signature says.
  if (expiresMs - nowMs > (DOCUMENT_URL_TTL_SECONDS + CLOCK_SKEW_SECONDS_MAX) * 1000) return 'invalid';
  if (nowMs >= expiresMs) return 'expired';
  return 'ok';
}
