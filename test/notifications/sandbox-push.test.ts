import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import webpush from 'web-push';
import { broadcastPushJob, notificationPushJob } from '../../src/notifications/jobs.ts';
import { sandboxVapidKeys } from '../../src/providers/push/web-push-sender.ts';
import { checkPushEndpoint, outsideSandbox } from '../../src/push/endpoint-policy.ts';
import { createPushModule } from '../../src/push/module.ts';
import { newPushKeys } from '../../src/sandbox/push/wire.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectValidationAt } from '../kyc/kyc-support.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The sandbox's Web Push service (API.md section 8, "Push"): a subscription made there, saved with
// savePushSubscription, receives what the service pushes, checked (VAPID) and decrypted as a push
// service and a browser would; what it refuses, it refuses as one would. And in the sandbox only, a
// known push service whose name does not resolve (offline) is accepted.

type Subscription = { endpoint: string; keys: { p256dh: string; auth: string } };
type Push = { receivedAt: string; ttl: number; urgency?: string; payload: Record<string, unknown> | null };

/** The addresses the service's resolver gives (no network in the tests): FCM and WNS do not resolve. */
const resolveHost = async (host: string) => {
  if (host === 'updates.push.services.mozilla.com') return ['10.20.30.40'];
  if (host === 'web.push.apple.com') return ['17.253.1.1'];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
};

describe(`the sandbox push service (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let publicKey: string;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone }, resolveHost });
    publicKey = ok(await get<{ publicKey: string }>(world, 'getPushPublicKey', {})).publicKey;
  });
  after(async () => world.close());

  /** POST /__sandbox/push/subscriptions, as the web client's pushManager.subscribe would. */
  const newSubscription = async (body: Record<string, unknown> = {}): Promise<Subscription> => {
    const response = await fetch(`${world.baseUrl}/__sandbox/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(response.status, 200);
    return ((await response.json()) as { data: Subscription }).data;
  };
  const save = (user: SignedIn, s: Subscription) =>
    post(
      world,
      'savePushSubscription',
      { endpoint: s.endpoint, p256dh: s.keys.p256dh, auth: s.keys.auth },
      { token: user.accessToken },
    );
  const pushesAt = async (endpoint: string): Promise<{ status: number; items: Push[] }> => {
    const response = await fetch(`${world.baseUrl}/__sandbox/push?endpoint=${encodeURIComponent(endpoint)}`);
    const body = (await response.json()) as { data?: { items: Push[] } };
    return { status: response.status, items: body.data?.items ?? [] };
  };
  const savedEndpoints = async (user: SignedIn) =>
    (
      await world.ctx.db
        .selectFrom('push_subscriptions')
        .select('endpoint')
        .where('user_id', '=', user.userId)
        .execute()
    ).map((r) => r.endpoint);

  /** A push built by web-push (VAPID JWT and aes128gcm body), sent with fetch: what the test varies. */
  const pushAs = async (
    s: Subscription,
    options: {
      vapid?: { publicKey: string; privateKey: string };
      keys?: { p256dh: string; auth: string };
      payload?: string;
      headers?: (headers: Record<string, string>) => Record<string, string>;
    } = {},
  ) => {
    const vapid = options.vapid ?? sandboxVapidKeys(world.ctx.config.dataDir);
    const details = webpush.generateRequestDetails(
      { endpoint: s.endpoint, keys: options.keys ?? s.keys },
      options.payload ?? JSON.stringify({ title: 'hello' }),
      {
        vapidDetails: { subject: 'mailto:ops@billrail.invalid', ...vapid },
        TTL: 60,
        contentEncoding: 'aes128gcm',
      },
    );
    const headers = Object.fromEntries(
      Object.entries(details.headers)
        .filter(([name]) => name !== 'Content-Length')
        .map(([name, value]) => [name.toLowerCase(), String(value)]),
    );
    const response = await fetch(s.endpoint, {
      method: 'POST',
      headers: options.headers?.(headers) ?? headers,
      body: details.body,
    });
    return response.status;
  };

  it('delivers a purchase’s success to a subscription saved with savePushSubscription, decrypted', async () => {
    const user = await buyer(world, 1_000);
    // Its KYC decision is notified before the browser subscribes: only the purchase is pushed here.
    await runDomainEvents(world);
    await runQueuedJobs(world, notificationPushJob);
    const subscription = await newSubscription();
    assert.match(subscription.endpoint, new RegExp(`^${world.baseUrl}/__sandbox/push/send/[\\w-]{22}$`));
    assert.equal(Buffer.from(subscription.keys.p256dh, 'base64url').length, 65);
    assert.equal(Buffer.from(subscription.keys.auth, 'base64url').length, 16);
    ok(await save(user, subscription));
    assert.deepEqual((await pushesAt(subscription.endpoint)).items, []);

    const sentAfter = world.ctx.clock.now();
    const purchase = await bought(world, user, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 500,
    });
    assert.equal(purchase.status, 'success');
    await runDomainEvents(world);
    const { failed } = await runQueuedJobs(world, notificationPushJob);
    assert.deepEqual(failed, []);

    const { status, items } = await pushesAt(subscription.endpoint);
    assert.equal(status, 200);
    assert.equal(items.length, 1);
    const [push] = items;
    assert.deepEqual(
      [push!.payload!.kind, push!.payload!.title, push!.ttl, push!.urgency],
      ['purchase_succeeded', 'Airtime delivered', 86_400, 'normal'],
    );
    assert.match(String(push!.payload!.body), /₦500\.00 succeeded/);
    // Stamped on the sandbox clock, like the sandbox's SMS and emails.
    const receivedAt = Date.parse(push!.receivedAt);
    assert.ok(receivedAt >= sentAfter.getTime() && receivedAt <= world.ctx.clock.now().getTime());
  });

  it('fans a broadcast out to sandbox subscriptions, newest first, each to its own browser', async () => {
    const admin = await signIn(world, adminPhone);
    const [first, second] = [await signIn(world), await signIn(world)];
    const a = await newSubscription();
    const b = await newSubscription();
    ok(await save(first!, a));
    ok(await save(second!, b));
    for (const title of ['Maintenance', 'Back up']) {
      ok(
        await post(
          world,
          'adminCreateBroadcast',
          { title, body: 'Tonight 1–2 am.' },
          { token: admin.accessToken },
        ),
      );
      const { failed } = await runQueuedJobs(world, broadcastPushJob);
      assert.deepEqual(failed, []);
    }
    for (const s of [a, b]) {
      const { items } = await pushesAt(s.endpoint);
      assert.deepEqual(
        items.map((p) => p.payload!.title),
        ['Back up', 'Maintenance'],
      );
    }
  });

  it('refuses pushes as a push service would: another VAPID key, a forged or stale JWT, no JWT, bad bodies', async () => {
    const s = await newSubscription();
    const own = sandboxVapidKeys(world.ctx.config.dataDir);
    assert.equal(own.publicKey, publicKey, 'the test signs with the service’s own key');
    // The service's own key and the subscription's keys: accepted, and readable.
    assert.equal(await pushAs(s, { payload: JSON.stringify({ title: 'control' }) }), 201);

    // Signed with another VAPID key (and naming it): not the key the subscription was made with.
    const other = webpush.generateVAPIDKeys();
    assert.equal(await pushAs(s, { vapid: other }), 403);
    // Signed with another key while naming the service's: the signature does not verify.
    assert.equal(
      await pushAs(s, {
        vapid: other,
        headers: (h) => ({ ...h, authorization: h.authorization!.replace(/k=.*$/, `k=${publicKey}`) }),
      }),
      403,
    );
    // The service's key, but for another push service's origin, or expired.
    const jwtFor = (audience: string, expiration?: number) =>
      webpush.getVapidHeaders(
        audience,
        'mailto:ops@billrail.invalid',
        own.publicKey,
        own.privateKey,
        'aes128gcm',
        expiration,
      ).Authorization;
    assert.equal(
      await pushAs(s, { headers: (h) => ({ ...h, authorization: jwtFor('https://fcm.googleapis.com') }) }),
      403,
    );
    const expired = Math.floor(Date.now() / 1000) - 3_600;
    assert.equal(
      await pushAs(s, {
        headers: (h) => ({ ...h, authorization: jwtFor(new URL(s.endpoint).origin, expired) }),
      }),
      403,
    );
    // No VAPID credentials at all.
    assert.equal(await pushAs(s, { headers: ({ authorization: _, ...h }) => h }), 401);
    // Encrypted to another browser's keys: the body does not decrypt here.
    const stranger = newPushKeys();
    assert.equal(await pushAs(s, { keys: { p256dh: stranger.p256dh, auth: stranger.auth } }), 400);
    // No TTL; an urgency that is not one; a body over 4096 bytes.
    assert.equal(await pushAs(s, { headers: ({ ttl: _, ...h }) => h }), 400);
    assert.equal(await pushAs(s, { headers: (h) => ({ ...h, urgency: 'urgent' }) }), 400);
    // A body of 4096 bytes at most (RFC 8030 section 7.2): a 3,900-byte text fits once encrypted.
    assert.equal(await pushAs(s, { payload: 'x'.repeat(3_900) }), 201);
    const tooLong = await fetch(s.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', ttl: '60' },
      body: Buffer.alloc(4_097),
    });
    assert.equal(tooLong.status, 413);

    // Only what was accepted arrived, newest first.
    const { items } = await pushesAt(s.endpoint);
    assert.deepEqual(
      items.map((p) => (typeof p.payload === 'string' ? 'text' : p.payload!.title)),
      ['text', 'control'],
    );
  });

  it('answers 404 for an unknown subscription and 410 for one its browser unsubscribed; the service forgets both', async () => {
    const user = await signIn(world);
    const unknown = {
      endpoint: `${world.baseUrl}/__sandbox/push/send/${'A'.repeat(22)}`,
      keys: (await newSubscription()).keys,
    };
    assert.equal(await pushAs(unknown), 404);
    assert.equal((await pushesAt(unknown.endpoint)).status, 404);
    assert.equal((await pushesAt('not a url')).status, 404);
    assert.equal((await fetch(`${world.baseUrl}/__sandbox/push`)).status, 400);

    const unsubscribed = await newSubscription();
    const kept = await newSubscription();
    for (const s of [unknown, unsubscribed, kept]) ok(await save(user, s));
    const gone = await fetch(
      `${world.baseUrl}/__sandbox/push/subscriptions?endpoint=${encodeURIComponent(unsubscribed.endpoint)}`,
      { method: 'DELETE' },
    );
    assert.equal(gone.status, 200);
    assert.equal(await pushAs(unsubscribed), 410);

    // A notification for the user: pushed to each device; the two the push service refused are forgotten.
    ok(await post(world, 'claimCheckin', {}, { token: user.accessToken }));
    await runDomainEvents(world);
    const { failed } = await runQueuedJobs(world, notificationPushJob);
    assert.deepEqual(failed, []);
    assert.deepEqual(await savedEndpoints(user), [kept.endpoint]);
    assert.equal((await pushesAt(kept.endpoint)).items[0]?.payload?.kind, 'checkin_claimed');
  });

  it('accepts only the sandbox push service’s own endpoints at the service’s address', async () => {
    const user = await signIn(world);
    const s = await newSubscription();
    const id = s.endpoint.slice(s.endpoint.lastIndexOf('/') + 1);
    const port = new URL(world.baseUrl).port;
    for (const endpoint of [
      `${world.baseUrl}/__sandbox/push/subscriptions`,
      `${world.baseUrl}/__sandbox/push/send/${id}?x=1`,
      `${world.baseUrl}/__sandbox/push/send/${id}/../../../_serverFn/getMe`,
      `${world.baseUrl}/__sandbox/push/send/short`,
      `${world.baseUrl}/_serverFn/getMe`,
      `http://localhost:${port}/__sandbox/push/send/${id}`,
      `https://127.0.0.1:${port}/__sandbox/push/send/${id}`,
    ]) {
      expectValidationAt(await save(user, { ...s, endpoint }), 'data.endpoint');
    }
    assert.deepEqual(await savedEndpoints(user), []);
    // A subscription made with another application server key refuses the service's pushes.
    const foreign = await newSubscription({ applicationServerKey: webpush.generateVAPIDKeys().publicKey });
    assert.equal(await pushAs(foreign), 403);
    const bad = await fetch(`${world.baseUrl}/__sandbox/push/subscriptions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ applicationServerKey: 'AAAA' }),
    });
    assert.equal(bad.status, 400);
  });

  it('accepts a known push service whose name does not resolve in the sandbox, and refuses it outside', async () => {
    const user = await signIn(world);
    const keys = newPushKeys();
    const subscription = (endpoint: string) => ({ endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } });
    const fcm = 'https://fcm.googleapis.com/fcm/send/sandbox-offline-1';
    const wns = 'https://db5p.notify.windows.com/w/?token=abc';
    ok(await save(user, subscription(fcm)));
    ok(await save(user, subscription(wns)));
    // Still refused in the sandbox: a name not on the list, a known name resolving inside, plain http.
    for (const endpoint of [
      'https://push.example.com/x',
      'https://updates.push.services.mozilla.com/wpush/v2/x',
      'http://fcm.googleapis.com/fcm/send/x',
    ]) {
      expectValidationAt(await save(user, subscription(endpoint)), 'data.endpoint');
    }
    assert.deepEqual((await savedEndpoints(user)).sort(), [fcm, wns].sort());
    // Forgotten again, so that no later push in this world is sent to a host that does not resolve.
    for (const endpoint of [fcm, wns])
      ok(await post(world, 'deletePushSubscription', { endpoint }, { token: user.accessToken }));

    // Outside the sandbox: the same push module without the sandbox's allowances refuses both, and
    // the sandbox push service's own endpoints.
    const outside = createPushModule({
      db: world.ctx.db,
      clock: world.ctx.clock,
      push: world.ctx.push,
      resolveHost,
      config: { allowedHosts: world.ctx.config.push.allowedHosts },
      sandboxEndpoints: undefined,
    });
    const saveOutside = outside.operations.find((op) => op.name === 'savePushSubscription')!;
    const sandboxOwn = await newSubscription();
    for (const endpoint of [fcm, wns, sandboxOwn.endpoint]) {
      await assert.rejects(
        saveOutside.handler({
          input: { endpoint, p256dh: keys.p256dh, auth: keys.auth },
          caller: { userId: user.userId, sessionId: 'outside', phone: user.phone, roles: ['user'] },
          ip: '127.0.0.1',
          userAgent: undefined,
        }),
        (error: { code?: string }) => error.code === 'VALIDATION_ERROR',
        endpoint,
      );
    }
    await assert.rejects(
      checkPushEndpoint(fcm, ['fcm.googleapis.com'], resolveHost, outsideSandbox),
      /does not resolve/,
    );
    assert.deepEqual(await savedEndpoints(user), []);
  });
});
