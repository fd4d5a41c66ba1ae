import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import path from 'node:path';
import webpush from 'web-push';

// Web Push (RFC 8030) with VAPID (RFC 8292) and aes128gcm payloads (RFC 8291), through the web-push
// package: the one adapter that reaches users' push services. It knows nothing of users or
// notifications; it sends a payload to a subscription and says whether the subscription is gone.

export type PushSubscriptionKeys = { endpoint: string; p256dh: string; auth: string };

/** `gone`: the push service answered 404 or 410, the subscription no longer exists. */
export type PushOutcome = 'delivered' | 'gone';

export type PushSender = {
  /** The VAPID public key, URL-safe base64 of the 65-byte uncompressed P-256 point. */
  publicKey: string;
  send(subscription: PushSubscriptionKeys, payload: string, ttlSeconds: number): Promise<PushOutcome>;
};

export class PushDeliveryError extends Error {
  override name = 'PushDeliveryError';
}

export type VapidKeys = { publicKey: string; privateKey: string };

export function createWebPushSender(options: {
  keys: VapidKeys;
  subject: string;
  timeoutMs: number;
  /** The TLS agent (tests give one that trusts their local push service's certificate). */
  agent?: Agent | undefined;
}): PushSender {
  const vapidDetails = { subject: options.subject, ...options.keys };
  return {
    publicKey: options.keys.publicKey,
    async send(subscription, payload, ttlSeconds) {
      try {
        await webpush.sendNotification(
          { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
          payload,
          {
            vapidDetails,
            TTL: ttlSeconds,
            timeout: options.timeoutMs,
            contentEncoding: 'aes128gcm',
            ...(options.agent !== undefined ? { agent: options.agent } : {}),
          },
        );
        return 'delivered';
      } catch (error) {
        const status = (error as { statusCode?: number }).statusCode;
        if (status === 404 || status === 410) return 'gone';
        throw new PushDeliveryError(
          `push to ${new URL(subscription.endpoint).host} failed: ${status ?? (error as Error).message}`,
          { cause: error },
        );
      }
    },
  };
}

/**
 * The sandbox's VAPID keys: generated once into DATA_DIR/vapid.json and read from there after, so
 * that subscriptions made against one run still work after a restart. Written to a temporary file
 * and renamed, so a reader never sees half a file.
 */
export function sandboxVapidKeys(dataDir: string): VapidKeys {
  const file = path.join(dataDir, 'vapid.json');
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VapidKeys;
  } catch {
    const keys = webpush.generateVAPIDKeys();
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(keys), { mode: 0o600 });
    renameSync(temporary, file);
    return keys;
  }
}
