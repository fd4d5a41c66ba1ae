import { createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

// The keyed hashes of short secrets (PINs, one-time codes, a NIN, a liveness token). PINs and codes
// have 10^4 and 10^6 possible values, so a slow hash would not stop an offline search: they are kept
// as HMAC-SHA-256 under a pepper kept outside the database (SECRET_PEPPER), and guessing is stopped
// by attempt limits. Session tokens are 256-bit random values, kept as plain SHA-256.
//
// A stored PIN or code hash names the key it was made with (decision 0035), so that the pepper can be
// rotated: `<key version>.<digest>`, the version being the first 8 hex digits of HMAC(key, "billrail
// key version"), which identifies a key without revealing it and needs no setting of its own. A hash
// with no version was made before versions existed, with the pepper of that time: it is tried with
// each key configured. A hash naming a key that is not configured matches nothing.

/** A pepper and the version that hashes made with it carry. */
export type HashKey = { version: string; secret: string };

/** The current pepper, and during a rotation the previous one, still accepted. */
export type HashKeys = { current: HashKey; previous: HashKey | undefined };

const versionLength = 8;
const digestPattern = /^[0-9a-f]{64}$/;

function hashKey(secret: string): HashKey {
  const version = createHmac('sha256', secret).update('billrail key version').digest('hex');
  return { version: version.slice(0, versionLength), secret };
}

/** SECRET_PEPPER and, while a rotation lasts, SECRET_PEPPER_PREVIOUS. */
export function hashKeys(current: string, previous?: string): HashKeys {
  if (current.length === 0) throw new RangeError('the pepper must not be empty');
  return {
    current: hashKey(current),
    previous: previous === undefined || previous === current ? undefined : hashKey(previous),
  };
}

/**
 * The HMAC of a secret, hex, with no version: for a value looked up by its hash (a NIN's uniqueness, a
 * liveness token), which must be the same every time it is computed with one key.
 */
export const keyedHash = (pepper: string, purpose: string, subject: string, secret: string): string =>
  createHmac('sha256', pepper).update(`${purpose}\0${subject}\0${secret}`).digest('hex');

/** The hash to store for a secret that is only ever verified (a PIN, a code): made with the current key. */
export function versionedHash(keys: HashKeys, purpose: string, subject: string, secret: string): string {
  return `${keys.current.version}.${keyedHash(keys.current.secret, purpose, subject, secret)}`;
}

/**
 * Whether `secret` is the one a stored hash was made from: `current` when it is and the hash is made
 * with the current key, `stale` when it is but the hash should be made again with the current key
 * (versionedHash) now that the secret is known (a previous key's, or one with no version), `mismatch`
 * otherwise, a hash naming an unknown key or of no known shape included.
 */
export function verifyHash(
  keys: HashKeys,
  stored: string,
  purpose: string,
  subject: string,
  secret: string,
): 'current' | 'stale' | 'mismatch' {
  const dot = stored.indexOf('.');
  if (dot === -1) {
    // Made before versions: with the pepper of that time, which is either key now.
    if (!digestPattern.test(stored)) return 'mismatch';
    for (const key of [keys.current, keys.previous]) {
      if (key !== undefined && sameDigest(stored, keyedHash(key.secret, purpose, subject, secret)))
        return 'stale';
    }
    return 'mismatch';
  }
  const version = stored.slice(0, dot);
  const digest = stored.slice(dot + 1);
  const key = [keys.current, keys.previous].find((candidate) => candidate?.version === version);
  if (key === undefined || !sameDigest(digest, keyedHash(key.secret, purpose, subject, secret)))
    return 'mismatch';
  return key === keys.current ? 'current' : 'stale';
}

/** One-shot (no Hash stream object to collect): it hashes the session token of every request. */
export const sha256Hex = (value: string): string => hash('sha256', value, 'hex');

/** 256 random bits, base64url: a session token, a liveness check's state. */
export const newToken = (): string => randomBytes(32).toString('base64url');

/** Constant-time equality of two digests; lengths are compared first. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  return left.length === right.length && timingSafeEqual(left, right);
}
