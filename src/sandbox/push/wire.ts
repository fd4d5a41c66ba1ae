import { createECDH, type ECDH, randomBytes } from 'node:crypto';
import { decrypt } from 'http_ece';
import { importJWK, jwtVerify } from 'jose';

// What a push service and the browser behind it check of a Web Push request, read from the wire on
// their own (never through the service's sender): the VAPID credentials (RFC 8292), a JWT verified
// with jose, and the aes128gcm payload (RFC 8291) decrypted with http_ece under the subscription's
// own keys. The sandbox push service and the tests' push service (test/helpers/push-service.ts)
// both judge pushes with these.

/** A subscription's own keys, as a browser keeps them: the P-256 private key and the auth secret. */
export type PushKeys = { ecdh: ECDH; authSecret: Buffer };

/** New subscription keys, with the public halves in the shape savePushSubscription takes. */
export function newPushKeys(): PushKeys & { p256dh: string; auth: string } {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  const authSecret = randomBytes(16);
  return {
    ecdh,
    authSecret,
    p256dh: ecdh.getPublicKey().toString('base64url'),
    auth: authSecret.toString('base64url'),
  };
}

/**
 * The `t` (the JWT) and `k` (the sender's public key) of an `Authorization: vapid t=..., k=...`
 * header (RFC 8292 section 3), in either order; null when absent or not of that scheme.
 */
export function vapidCredentials(authorization: string | undefined): { token: string; key: string } | null {
  const scheme = /^vapid\s+(.+)$/i.exec(authorization?.trim() ?? '');
  if (scheme === null) return null;
  const parameters = new Map<string, string>();
  for (const part of scheme[1]!.split(',')) {
    const pair = /^\s*([a-z]+)\s*=\s*"?([^"\s]+)"?\s*$/i.exec(part);
    if (pair === null) return null;
    parameters.set(pair[1]!.toLowerCase(), pair[2]!);
  }
  const token = parameters.get('t');
  const key = parameters.get('k');
  return token === undefined || key === undefined ? null : { token, key };
}

/** The longest a VAPID JWT may be valid for, from the moment it is received (RFC 8292 section 2). */
const vapidLifetimeMaxSeconds = 24 * 3600;
/** How far apart the sender's clock and the push service's may be. */
const clockToleranceSeconds = 60;

export type VapidVerdict = { ok: true; audience: string; subject: string } | { ok: false; reason: string };

/**
 * Whether `token` is a VAPID JWT signed (ES256) by the P-256 key `key` (URL-safe base64 of its
 * 65-byte uncompressed point) for `audience` (the push service's origin), not expired nor valid for
 * more than 24 hours, with a `mailto:` or `https:` contact. Judged on this machine's clock, which the
 * sender stamped it with: the sandbox clock moves the service's time, not a push service's.
 */
export async function verifyVapid(token: string, key: string, audience: string): Promise<VapidVerdict> {
  const point = Buffer.from(key, 'base64url');
  if (point.length !== 65 || point[0] !== 4) return { ok: false, reason: 'k is not a P-256 public key' };
  try {
    const publicKey = await importJWK(
      {
        kty: 'EC',
        crv: 'P-256',
        x: point.subarray(1, 33).toString('base64url'),
        y: point.subarray(33, 65).toString('base64url'),
      },
      'ES256',
    );
    const { payload } = await jwtVerify(token, publicKey, {
      algorithms: ['ES256'],
      audience,
      requiredClaims: ['exp', 'aud'],
      clockTolerance: clockToleranceSeconds,
    });
    const nowSeconds = Date.now() / 1000;
    if (payload.exp! > nowSeconds + vapidLifetimeMaxSeconds + clockToleranceSeconds)
      return { ok: false, reason: 'exp is more than 24 hours away' };
    const subject = typeof payload.sub === 'string' ? payload.sub : '';
    if (!/^(mailto:|https:)/.test(subject))
      return { ok: false, reason: 'sub is not a mailto: or https: contact' };
    return { ok: true, audience, subject };
  } catch (error) {
    return { ok: false, reason: (error as Error).message };
  }
}

/** The plaintext of an aes128gcm body under the subscription's keys; throws when it does not decrypt. */
export function decryptPush(body: Buffer, keys: PushKeys): Buffer {
  return decrypt(body, { version: 'aes128gcm', privateKey: keys.ecdh, authSecret: keys.authSecret });
}
