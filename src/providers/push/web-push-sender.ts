import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Agent } from 'node:https';
import path from 'node:path';
import { type Dispatcher, request } from 'undici';
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

/**
 * Endpoints sent through `dispatcher` rather than the TLS agent: in the sandbox, its push service at
 * the service's own address (loopback, and plain HTTP where the service listens so), which the agent
 * refuses by design and web-push's https-only request cannot reach.
 */
export type LocalPushRoute = { endpoints: (endpoint: string) => boolean; dispatcher: Dispatcher };

type VapidDetails = VapidKeys & { subject: string };

export function createWebPushSender(options: {
  keys: VapidKeys;
  subject: string;
  timeoutMs: number;
  /** The TLS agent (tests give one that trusts their local push service's certificate). */
  agent?: Agent | undefined;
  /** Undefined outside the sandbox: every push goes through the agent. */
  localRoute?: LocalPushRoute | undefined;
}): PushSender {
  const vapidDetails = { subject: options.subject, ...options.keys };
  const { localRoute } = options;
  return {
    publicKey: options.keys.publicKey,
    async send(subscription, payload, ttlSeconds) {
      if (localRoute?.endpoints(subscription.endpoint) === true) {
        return sendThrough(
          localRoute.dispatcher,
          vapidDetails,
          options.timeoutMs,
          subscription,
          payload,
          ttlSeconds,
        );
      }
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
 * One push over `dispatcher`: web-push builds the request (the VAPID JWT, the aes128gcm body, the
 * headers) exactly as it does for its own sends, and undici carries it. The outcomes are read as in
 * send(): 404 or 410 is gone, any other status outside 2xx or no answer is a failure.
 */
async function sendThrough(
  dispatcher: Dispatcher,
  vapidDetails: VapidDetails,
  timeoutMs: number,
  subscription: PushSubscriptionKeys,
  payload: string,
  ttlSeconds: number,
): Promise<PushOutcome> {
  const details = webpush.generateRequestDetails(
    { endpoint: subscription.endpoint, keys: { p256dh: subscription.p256dh, auth: subscription.auth } },
    payload,
    { vapidDetails, TTL: ttlSeconds, contentEncoding: 'aes128gcm' },
  );
  // undici sets the length from the body itself.
  const headers = Object.fromEntries(
    Object.entries(details.headers)
      .filter(([name]) => name.toLowerCase() !== 'content-length')
      .map(([name, value]) => [name, String(value)]),
  );
  const host = new URL(subscription.endpoint).host;
  let status: number;
  try {
    const response = await request(details.endpoint, {
      dispatcher,
      method: 'POST',
      headers,
      body: details.body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.statusCode;
    await response.body.dump();
  } catch (error) {
    throw new PushDeliveryError(`push to ${host} failed: ${(error as Error).message}`, { cause: error });
  }
  if (status === 404 || status === 410) return 'gone';
  if (status < 200 || status >= 300) throw new PushDeliveryError(`push to ${host} failed: ${status}`);
  return 'delivered';
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
