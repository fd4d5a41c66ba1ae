import { execFileSync } from 'node:child_process';
import { createECDH, createPublicKey, randomBytes, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { decrypt } from 'http_ece';

// A push service for the tests, over HTTPS on 127.0.0.1 with a certificate made here by openssl:
// it checks each push's VAPID JWT (ES256) against the key in its Authorization header and
// decrypts its aes128gcm payload with the subscription's private key (RFC 8291), as a browser's
// push service and the browser would (only the first `checkFirst` pushes, when that is given).
// Paths choose its answer: /gone/... 410, /missing/... 404, /slow/... waits until released;
// anything else 201.

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

function jwtValid(token: string, vapidKey: string, origin: string): { ok: boolean; audience: string } {
  const [header, claims, signature] = token.split('.');
  if (header === undefined || claims === undefined || signature === undefined)
    return { ok: false, audience: '' };
  const point = Buffer.from(vapidKey, 'base64url');
  const key = createPublicKey({
    key: {
      kty: 'EC',
      crv: 'P-256',
      x: point.subarray(1, 33).toString('base64url'),
      y: point.subarray(33, 65).toString('base64url'),
    },
    format: 'jwk',
  });
  const signed = verify(
    'sha256',
    Buffer.from(`${header}.${claims}`),
    { key, dsaEncoding: 'ieee-p1363' },
    Buffer.from(signature, 'base64url'),
  );
  const body = JSON.parse(Buffer.from(claims, 'base64url').toString()) as {
    aud: string;
    exp: number;
    sub: string;
  };
  const fresh = body.exp > Date.now() / 1000 && body.exp < Date.now() / 1000 + 24 * 3600 + 60;
  return {
    ok: signed && fresh && body.aud === origin && /^(mailto:|https:)/.test(body.sub),
    audience: body.aud,
  };
}

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

  const keys = new Map<string, { ecdh: ReturnType<typeof createECDH>; auth: Buffer }>();
  const received: ReceivedPush[] = [];
  const rejected: string[] = [];
  let held: Array<() => void> = [];
  let origin = '';

  const server: Server = createServer({ key, cert: ca }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = request.url ?? '/';
      const answer = (status: number) => response.writeHead(status).end();
      const auth = /^vapid t=([^,]+), k=(.+)$/.exec(request.headers.authorization ?? '');
      const subscriber = keys.get(url);
      if (auth === null || subscriber === undefined || request.headers['content-encoding'] !== 'aes128gcm') {
        rejected.push(`${url}: headers`);
        return answer(400);
      }
      let audience = '';
      let payload = '';
      if (checked < checkFirst) {
        checked += 1;
        const jwt = jwtValid(auth[1]!, auth[2]!, origin);
        if (!jwt.ok) {
          rejected.push(`${url}: jwt`);
          return answer(403);
        }
        audience = jwt.audience;
        try {
          payload = decrypt(Buffer.concat(chunks), {
            version: 'aes128gcm',
            privateKey: subscriber.ecdh,
            authSecret: subscriber.auth,
          }).toString('utf8');
        } catch {
          rejected.push(`${url}: payload`);
          return answer(400);
        }
      }
      const push = { path: url, payload, vapidKey: auth[2]!, audience, ttl: String(request.headers.ttl) };
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
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const authSecret = randomBytes(16);
      const subscriptionPath = `${pathPrefix}/${count}-${randomBytes(4).toString('hex')}`;
      keys.set(subscriptionPath, { ecdh, auth: authSecret });
      return {
        endpoint: `${origin}${subscriptionPath}`,
        p256dh: ecdh.getPublicKey().toString('base64url'),
        auth: authSecret.toString('base64url'),
      };
    },
    async close() {
      for (const go of held) go();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
