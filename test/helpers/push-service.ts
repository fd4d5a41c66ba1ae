import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  decryptPush,
  newPushKeys,
  type PushKeys,
  vapidCredentials,
  verifyVapid,
} from '../../src/sandbox/push/wire.ts';

// A push service for the tests, over HTTPS on 127.0.0.1 with a certificate made here by openssl:
// it checks each push's VAPID JWT (ES256) against the key in its Authorization header and
// decrypts its aes128gcm payload with the subscription's private key (RFC 8291), as a browser's
// push service and the browser would (only the first `checkFirst` pushes, when that is given), with
// the sandbox push service's checks (src/sandbox/push/wire.ts). Unlike the sandbox's, it is an
// HTTPS origin apart from the service's own, as FCM or Mozilla's are, and so exercises the sender's
// TLS agent. Paths choose its answer: /gone/... 410, /missing/... 404, /slow/... waits until
// released; anything else 201.

export type ReceivedPush = { path: string; payload: string; vapidKey: string; audience: string; ttl: string };

export type TestSubscription = { endpoint: string; p256dh: string; auth: string };

export type PushService = {
  origin: string;
  /** The certificate the service's TLS agent must trust. */
  ca: Buffer;
  received: ReceivedPush[];
  /** Pushes refused because their JWT or payload did not check out. */
  rejected: string[];
  /** Requests to /slow/ waiting for release(). */
  waiting(): number;
  release(): void;
  /** A subscription at this service under the path, with its own keys (decryptable here). */
  subscribe(pathPrefix?: string): TestSubscription;
  close(): Promise<void>;
};

export type PushServiceOptions = {
  /**
   * How many pushes get the JWT and payload checks; later ones are answered by their path alone and
   * recorded with an empty payload and audience. All of them by default. The bench's broadcast sends
   * thousands, and checking each costs this process CPU that the sender shares (bench/notifications.ts).
   */
  checkFirst?: number;
};

export async function startPushService(options: PushServiceOptions = {}): Promise<PushService> {
  const checkFirst = options.checkFirst ?? Number.POSITIVE_INFINITY;
  let checked = 0;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'billrail-push-'));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      path.join(dir, 'key.pem'),
      '-out',
      path.join(dir, 'cert.pem'),
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const key = readFileSync(path.join(dir, 'key.pem'));
  const ca = readFileSync(path.join(dir, 'cert.pem'));
  rmSync(dir, { recursive: true, force: true });

  const keys = new Map<string, PushKeys>();
  const received: ReceivedPush[] = [];
  const rejected: string[] = [];
  let held: Array<() => void> = [];
  let origin = '';

  const server: Server = createServer({ key, cert: ca }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const url = request.url ?? '/';
      const answer = (status: number) => response.writeHead(status).end();
      const vapid = vapidCredentials(request.headers.authorization);
      const subscriber = keys.get(url);
      if (vapid === null || subscriber === undefined || request.headers['content-encoding'] !== 'aes128gcm') {
        rejected.push(`${url}: headers`);
        return answer(400);
      }
      let audience = '';
      let payload = '';
      if (checked < checkFirst) {
        checked += 1;
        const jwt = await verifyVapid(vapid.token, vapid.key, origin);
        if (!jwt.ok) {
          rejected.push(`${url}: jwt`);
          return answer(403);
        }
        audience = jwt.audience;
        try {
          payload = decryptPush(Buffer.concat(chunks), subscriber).toString('utf8');
        } catch {
          rejected.push(`${url}: payload`);
          return answer(400);
        }
      }
      const push = { path: url, payload, vapidKey: vapid.key, audience, ttl: String(request.headers.ttl) };
      if (url.startsWith('/gone/')) return answer(410);
      if (url.startsWith('/missing/')) return answer(404);
      if (url.startsWith('/slow/')) {
        held.push(() => {
          received.push(push);
          answer(201);
        });
        return;
      }
      received.push(push);
      answer(201);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let count = 0;
  return {
    origin,
    ca,
    received,
    rejected,
    waiting: () => held.length,
    release() {
      for (const go of held) go();
      held = [];
    },
    subscribe(pathPrefix = '/ok') {
      count += 1;
      const { ecdh, authSecret, p256dh, auth } = newPushKeys();
      const subscriptionPath = `${pathPrefix}/${count}-${randomBytes(4).toString('hex')}`;
      keys.set(subscriptionPath, { ecdh, authSecret });
      return { endpoint: `${origin}${subscriptionPath}`, p256dh, auth };
    },
    async close() {
      for (const go of held) go();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
