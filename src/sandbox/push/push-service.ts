import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { decryptPush, newPushKeys, type PushKeys, vapidCredentials, verifyVapid } from './wire.ts';

// The sandbox's Web Push service (API.md section 8, "Push"), standing in for a browser's push service
// (RFC 8030) and the browser behind it, which decrypts what arrives (RFC 8291). A tester (or the web
// client) makes a subscription here, hands it to savePushSubscription, and reads what the service
// pushed at GET /__sandbox/push?endpoint=... . Each push is judged as a push service would: an
// unknown subscription 404, an unsubscribed one 410, no VAPID credentials 401, a JWT that does not
// verify or a key other than the one the subscription was made with 403 (RFC 8292 section 4.2), a
// missing TTL or a body that does not decrypt 400, a body over 4096 bytes 413.
//
// Its endpoints are under the service's own base URL, `${baseUrl}/__sandbox/push/send/<id>`, so the
// service reaches it over HTTP like any push service; savePushSubscription accepts exactly those in
// the sandbox (isSandboxPushEndpoint), though they are the service's own, loopback, address.

export const sandboxPushPath = '/__sandbox/push';
const subscriptionsPath = `${sandboxPushPath}/subscriptions`;
const sendPath = `${sandboxPushPath}/send/`;

/** The largest push body a push service must take (RFC 8030 section 7.2): a longer one is 413. */
const pushBodyMaxBytes = 4096;
/** Subscriptions the sandbox keeps; past it the oldest goes (its pushes are then 404). */
export const sandboxPushSubscriptionsMax = 10_000;
/** Pushes kept per subscription; the oldest go first. */
export const sandboxPushesKeptMax = 100;
/** The longest TTL the sandbox keeps (FCM's 28 days); a longer one is shortened, and the answer says so. */
const ttlMaxSeconds = 28 * 24 * 3600;

const urgencies = ['very-low', 'low', 'normal', 'high'] as const;
type Urgency = (typeof urgencies)[number];

/** One push as the browser received it: `payload` the decrypted JSON (its text if not JSON; null if empty). */
export type SandboxPush = { receivedAt: string; ttl: number; urgency?: Urgency; payload: unknown };

type SandboxPushSubscription = {
  endpoint: string;
  keys: PushKeys;
  /** The VAPID key it was made with (pushManager.subscribe's applicationServerKey). */
  applicationServerKey: Buffer;
  /** Newest first, at most sandboxPushesKeptMax. */
  received: SandboxPush[];
  /** Unsubscribed by the browser: pushes are then 410 Gone. */
  unsubscribed: boolean;
};

export type SandboxPushState = { subscriptions: Map<string, SandboxPushSubscription> };

export function createSandboxPushState(): SandboxPushState {
  return { subscriptions: new Map() };
}

export type SandboxPushDeps = {
  clock: Clock;
  /** The sandbox's own base URL (the service's, in process): the subscriptions' endpoints are under it. */
  serviceBaseUrl: string;
  /**
   * The service's VAPID public key (getPushPublicKey): what a subscription is made with by default;
   * undefined (a standalone sandbox not told it), the subscribing browser must name its key.
   */
  applicationServerKey: string | undefined;
};

/** Subscription ids: 128 random bits, URL-safe base64. */
const idPattern = /^[A-Za-z0-9_-]{22}$/;

/**
 * Whether an endpoint is one of the sandbox push service's under this base URL: exactly
 * `${serviceBaseUrl}/__sandbox/push/send/<id>`, nothing before, after or around it.
 */
export function isSandboxPushEndpoint(endpoint: string, serviceBaseUrl: string): boolean {
  const prefix = `${serviceBaseUrl}${sendPath}`;
  return endpoint.startsWith(prefix) && idPattern.test(endpoint.slice(prefix.length));
}

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const base64urlKey = z
  .string()
  .regex(/^[A-Za-z0-9_-]+={0,2}$/)
  .refine((value) => {
    const point = Buffer.from(value, 'base64url');
    return point.length === 65 && point[0] === 4;
  });
const subscribeBody = z.object({ applicationServerKey: base64urlKey.optional() }).strict();
const endpointQuery = z.object({ endpoint: z.string().max(2048) }).strict();

export function registerSandboxPush(
  app: FastifyInstance,
  state: SandboxPushState,
  deps: SandboxPushDeps,
): void {
  app.post(subscriptionsPath, routeOptions, async (request, reply) => subscribe(state, deps, request, reply));
  app.delete(subscriptionsPath, routeOptions, async (request, reply) => unsubscribe(state, request, reply));
  app.get(sandboxPushPath, routeOptions, async (request, reply) => received(state, request, reply));
  void app.register(async (scope) => {
    // A push body is bytes (aes128gcm), whatever its content type says.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: pushBodyMaxBytes }, (_r, body, done) =>
      done(null, body),
    );
    scope.post<{ Params: { id: string } }>(
      `${sendPath}:id`,
      { ...routeOptions, bodyLimit: pushBodyMaxBytes },
      async (request, reply) => receivePush(state, deps, request, reply),
    );
  });
}

const controlError = (reply: FastifyReply, status: 400 | 404, message: string) =>
  reply
    .code(status)
    .send({ success: false, error: { code: status === 400 ? 'VALIDATION_ERROR' : 'NOT_FOUND', message } });

/** A browser's pushManager.subscribe: new keys, kept here, and an endpoint at this push service. */
function subscribe(
  state: SandboxPushState,
  deps: SandboxPushDeps,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const body = subscribeBody.safeParse(request.body ?? {});
  const applicationServerKey = body.success
    ? (body.data.applicationServerKey ?? deps.applicationServerKey)
    : undefined;
  if (applicationServerKey === undefined) {
    return controlError(reply, 400, 'applicationServerKey: URL-safe base64 of a 65-byte P-256 public key');
  }
  while (state.subscriptions.size >= sandboxPushSubscriptionsMax) {
    state.subscriptions.delete(state.subscriptions.keys().next().value!);
  }
  const id = randomBytes(16).toString('base64url');
  const endpoint = `${deps.serviceBaseUrl}${sendPath}${id}`;
  const { ecdh, authSecret, p256dh, auth } = newPushKeys();
  state.subscriptions.set(id, {
    endpoint,
    keys: { ecdh, authSecret },
    applicationServerKey: Buffer.from(applicationServerKey, 'base64url'),
    received: [],
    unsubscribed: false,
  });
  return { success: true, data: { endpoint, keys: { p256dh, auth } } };
}

/** The subscription an endpoint names, by its id (whatever host the caller reaches the sandbox by). */
function subscriptionAt(state: SandboxPushState, endpoint: string): SandboxPushSubscription | undefined {
  let path: string;
  try {
    path = new URL(endpoint).pathname;
  } catch {
    return undefined;
  }
  return path.startsWith(sendPath) ? state.subscriptions.get(path.slice(sendPath.length)) : undefined;
}

/** A browser's PushSubscription.unsubscribe: later pushes to it are 410 Gone. */
function unsubscribe(state: SandboxPushState, request: FastifyRequest, reply: FastifyReply) {
  const query = endpointQuery.safeParse(request.query);
  if (!query.success) return controlError(reply, 400, 'endpoint: the subscription endpoint');
  const subscription = subscriptionAt(state, query.data.endpoint);
  if (subscription === undefined) return controlError(reply, 404, 'no such subscription');
  subscription.unsubscribed = true;
  return { success: true, data: { endpoint: subscription.endpoint } };
}

/** What the browser behind a subscription received, newest first. */
function received(state: SandboxPushState, request: FastifyRequest, reply: FastifyReply) {
  const query = endpointQuery.safeParse(request.query);
  if (!query.success) return controlError(reply, 400, 'endpoint: the subscription endpoint');
  const subscription = subscriptionAt(state, query.data.endpoint);
  if (subscription === undefined) return controlError(reply, 404, 'no such subscription');
  return { success: true, data: { items: subscription.received } };
}

/** A refusal as a push service words it (Mozilla's autopush shape): status, reason phrase, message. */
const refuse = (reply: FastifyReply, status: 400 | 401 | 403 | 404 | 410, error: string, message: string) =>
  reply.code(status).send({ code: status, error, message });

/** RFC 8030 section 5: a push to a subscription, checked and decrypted, then kept for GET /__sandbox/push. */
async function receivePush(
  state: SandboxPushState,
  deps: SandboxPushDeps,
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
) {
  const subscription = state.subscriptions.get(request.params.id);
  if (subscription === undefined) return refuse(reply, 404, 'Not Found', 'no such subscription');
  if (subscription.unsubscribed) return refuse(reply, 410, 'Gone', 'the subscription was unsubscribed');
  const credentials = vapidCredentials(request.headers.authorization);
  if (credentials === null) {
    return refuse(reply, 401, 'Unauthorized', 'Authorization: vapid t=<JWT>, k=<public key> is required');
  }
  const ttlHeader = request.headers.ttl;
  if (typeof ttlHeader !== 'string' || !/^\d{1,10}$/.test(ttlHeader)) {
    return refuse(reply, 400, 'Bad Request', 'TTL: a number of seconds is required');
  }
  const urgency = request.headers.urgency;
  if (urgency !== undefined && !(urgencies as readonly unknown[]).includes(urgency)) {
    return refuse(reply, 400, 'Bad Request', `Urgency: one of ${urgencies.join(', ')}`);
  }
  if (!Buffer.from(credentials.key, 'base64url').equals(subscription.applicationServerKey)) {
    return refuse(reply, 403, 'Forbidden', 'k is not the key the subscription was made with');
  }
  const vapid = await verifyVapid(credentials.token, credentials.key, new URL(subscription.endpoint).origin);
  if (!vapid.ok) return refuse(reply, 403, 'Forbidden', `the VAPID JWT is invalid: ${vapid.reason}`);
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  let payload: unknown = null;
  if (body.length > 0) {
    if (request.headers['content-encoding'] !== 'aes128gcm') {
      return refuse(reply, 400, 'Bad Request', 'Content-Encoding: aes128gcm is required for a body');
    }
    let text: string;
    try {
      text = decryptPush(body, subscription.keys).toString('utf8');
    } catch {
      return refuse(reply, 400, 'Bad Request', 'the body does not decrypt with the subscription keys');
    }
    payload = jsonOrText(text);
  }
  const ttl = Math.min(Number(ttlHeader), ttlMaxSeconds);
  subscription.received.unshift({
    receivedAt: deps.clock.now().toISOString(),
    ttl,
    ...(urgency !== undefined ? { urgency: urgency as Urgency } : {}),
    payload,
  });
  subscription.received.length = Math.min(subscription.received.length, sandboxPushesKeptMax);
  // RFC 8030 section 5: 201 with the push message's resource, and the TTL the service keeps it for.
  return reply
    .code(201)
    .header('location', `${deps.serviceBaseUrl}${sandboxPushPath}/messages/${randomUUID()}`)
    .header('ttl', String(ttl))
    .send();
}

function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
