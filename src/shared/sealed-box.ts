import {
  createCipheriv,
  createDecipheriv,
  createSecretKey,
  hkdfSync,
  type KeyObject,
  randomBytes,
} from 'node:crypto';

// Secrets kept at rest encrypted (AES-256-GCM): the stored idempotent answers (http/) and the
// administrators' TOTP secrets (auth/). One way of sealing, each use under a key of its own derived
// from its secret with a label, so that one key never opens another use's boxes.

/** A 256-bit key for one use (`label`), derived from a secret setting with HKDF-SHA-256. */
export function sealingKey(secret: string, label: string): KeyObject {
  return createSecretKey(Buffer.from(hkdfSync('sha256', secret, 'billrail', label, 32)));
}

/** The text sealed (a fresh IV each time): IV, tag and data, base64. */
export function seal(key: KeyObject, plain: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64');
}

/** A sealed text read back; throws when it was not sealed with this key (or was altered). */
export function open(key: KeyObject, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
