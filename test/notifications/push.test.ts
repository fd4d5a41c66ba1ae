import assert from 'node:assert/strict';
import type { lookup as dnsLookup } from 'node:dns';
import { Agent } from 'node:https';
import type { LookupFunction } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { broadcastPushJob, notificationPushJob } from '../../src/notifications/jobs.ts';
import { checkPushEndpoint, isRefusedAddress } from '../../src/push/endpoint-policy.ts';
import { pushAgent } from '../../src/push/push-agent.ts';
import { saveSubscription } from '../../src/push/subscriptions.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { type PushService, startPushService, type TestSubscription } from '../helpers/push-service.ts';
import { until } from '../helpers/until.ts';
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
import { expectError, expectValidationAt } from '../kyc/kyc-support.ts';
import { lock, saver } from '../savings/support.ts';

// Web Push against a local push service that checks each VAPID JWT against the service's public key
// and decrypts each payload (RFC 8291) with the subscription's own keys.

describe(`Web Push (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let pushService: PushService;
  let publicKey: string;
  const adminPhone = uniquePhone();
  /** What the service's resolver answers for fcm.googleapis.com (tests set it). */
  let fcmAddresses = ['142.250.1.95'];

  before(async () => {
    pushService = await startPushService();
    world = await createWorld({
      env: {
        ADMIN_PHONES: adminPhone,
        PUSH_ALLOWED_HOSTS: 'localhost,fcm.googleapis.com',
        // Generous: a page of 500 TLS pushes on a CI machine busy with browsers took over 5 s for a
        // few; the slow-service test releases its push itself and never waits for this.
        PUSH_TIMEOUT_MS: '30000',
      },
      pushAgent: new Agent({ ca: pushService.ca, keepAlive: true }),
      resolveHost: async (host) => {
        if (host === 'localhost') return ['127.0.0.1', '::1'];
        if (host === 'fcm.googleapis.com') return fcmAddresses;
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      },
    });
    publicKey = ok(await get<{ publicKey: string }>(world, 'getPushPublicKey', {})).publicKey;
  });
  after(async () => {
    await world.close();
    await pushService.close();
  });

  /** Registers a subscription at the local push service directly: the API refuses loopback hosts by design. */
  const subscribe = async (user: SignedIn, prefix?: string): Promise<TestSubscription> => {
    const subscription = pushService.subscribe(prefix);
    await saveSubscription(world.ctx.db, user.userId, subscription, world.ctx.clock.now());
    return subscription;
  };
  const pushesTo = (s: TestSubscription) =>
    pushService.received
      .filter((p) => s.endpoint.endsWith(p.path))
      .map((p) => JSON.parse(p.payload) as Record<string, string>);

  it('gives the VAPID public key without a token: URL-safe base64 of a 65-byte P-256 point', () => {
    assert.match(publicKey, /^[A-Za-z0-9_-]+$/);
    const point = Buffer.from(publicKey, 'base64url');
    assert.deepEqual([point.length, point[0]], [65, 4]);
  });

  it('refuses endpoints the service must not send to, with 400 on data.endpoint', async () => {
    const user = await signIn(world);
    const keys = pushService.subscribe();
    const save = (endpoint: string, extra: Record<string, unknown> = {}) =>
      post(
        world,
        'savePushSubscription',
        { endpoint, p256dh: keys.p256dh, auth: keys.auth, ...extra },
        { token: user.accessToken },
      );
    for (const endpoint of [
      'http://fcm.googleapis.com/fcm/send/abc', // not https
      'https://push.example.com/abc', // not a known push service
      'https://127.0.0.1/abc', // an address, not a push service's name
      'https://[::1]/abc',
      'https://localhost/abc', // on the list here, but resolves to loopback
      'https://user:pw@fcm.googleapis.com/fcm/send/abc',
      'not a url',
    ]) {
      expectValidationAt(await save(endpoint), 'data.endpoint');
    }
    expectValidationAt(await save('https://fcm.googleapis.com/x', { p256dh: 'AAAA' }), 'data.p256dh');
    expectValidationAt(await save('https://fcm.googleapis.com/x', { auth: 'short' }), 'data.auth');
    expectError(
      await post(world, 'savePushSubscription', {
        endpoint: 'https://fcm.googleapis.com/x',
        p256dh: keys.p256dh,
        auth: keys.auth,
      }),
      401,
      'UNAUTHENTICATED',
    );
    const rows = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(rows.length, 0);
  });

  it('refuses an endpoint whose push service resolves to an IPv6 form carrying an internal IPv4', async () => {
    const user = await signIn(world);
    const keys = pushService.subscribe();
    const save = (endpoint: string) =>
      post(
        world,
        'savePushSubscription',
        { endpoint, p256dh: keys.p256dh, auth: keys.auth },
        { token: user.accessToken },
      );
    for (const addresses of [
      ['64:ff9b::a9fe:a9fe'], // NAT64 of 169.254.169.254
      ['64:ff9b:1::808:808'], // NAT64 local-use
      ['142.250.1.95', '2002:a9fe:a9fe::1'], // 6to4
      ['::a9fe:a9fe'], // IPv4-compatible
      ['::ffff:a9fe:a9fe'], // IPv4-mapped
      ['2001:0:808:808:0:0:5601:5601'], // Teredo, client 169.254.169.254
    ]) {
      fcmAddresses = addresses;
      expectValidationAt(await save('https://fcm.googleapis.com/fcm/send/abc'), 'data.endpoint');
    }
    // The same forms carrying 8.8.8.8 are public addresses: saved.
    fcmAddresses = ['64:ff9b::808:808', '2002:808:808::1', '2001:0:808:808:0:0:f7f7:f7f7'];
    ok(await save('https://fcm.googleapis.com/fcm/send/abc'));
    fcmAddresses = ['142.250.1.95'];
    const rows = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(
      rows.map((r) => r.endpoint),
      ['https://fcm.googleapis.com/fcm/send/abc'],
    );
  });

  it('refuses, at send time, a push service resolving to an IPv6 form carrying an internal IPv4', async () => {
    const answering = (address: string): typeof dnsLookup =>
      ((_host: string, _options: unknown, callback: (e: null, a: unknown) => void) =>
        callback(null, [{ address, family: 6 }])) as unknown as typeof dnsLookup;
    const lookupWith = (address: string) =>
      new Promise<string>((resolve, reject) => {
        const agent = pushAgent(answering(address));
        const lookup = (agent.options as { lookup: LookupFunction }).lookup;
        lookup('fcm.googleapis.com', { family: 0 }, (error, resolved) =>
          error ? reject(error) : resolve(resolved as string),
        );
        agent.destroy();
      });
    for (const address of ['64:ff9b::a9fe:a9fe', '2002:7f00:1::', '2001:0:808:808:0:0:5601:5601']) {
      await assert.rejects(lookupWith(address), (error: { code?: string }) => error.code === 'EREFUSED');
    }
    assert.equal(await lookupWith('64:ff9b::808:808'), '64:ff9b::808:808');
  });

  it('judges endpoints by what their names resolve to, at save time and at send time', async () => {
    const allowed = ['fcm.googleapis.com', '*.push.apple.com'];
    const resolvingTo =
      (...addresses: string[]) =>
      async () =>
        addresses;
    await checkPushEndpoint('https://fcm.googleapis.com/fcm/send/x', allowed, resolvingTo('142.250.1.95'));
    await checkPushEndpoint('https://web.push.apple.com/x', allowed, resolvingTo('17.1.2.3', '2620:149::1'));
    for (const [endpoint, addresses] of [
      ['https://fcm.googleapis.com/x', ['169.254.169.254']],
      ['https://fcm.googleapis.com/x', ['142.250.1.95', '10.0.0.7']],
      ['https://fcm.googleapis.com/x', ['::ffff:127.0.0.1']],
      ['https://fcm.googleapis.com/x', ['fd00:ec2::254']],
      ['https://push.apple.com.evil.example/x', ['17.1.2.3']],
    ] as const) {
      await assert.rejects(
        checkPushEndpoint(endpoint, allowed, resolvingTo(...addresses)),
        /VALIDATION_ERROR|not|resolves/,
      );
    }
    assert.deepEqual(
      ['192.168.1.1', '172.20.0.1', '100.64.0.1', '0.0.0.0', 'fe80::1', '8.8.8.8'].map(isRefusedAddress),
      [true, true, true, true, true, false],
    );
  });

  it('pushes each event to the user’s devices; 410 forgets a subscription; a slow service holds up no other', async () => {
    const user = await saver(world, 5_000);
    const other = await saver(world, 0);
    const phone = await subscribe(user);
    const laptop = await subscribe(user, '/slow');
    const gone = await subscribe(user, '/gone');
    const othersDevice = await subscribe(other);
    await lock(world, user, 1_000);
    await runDomainEvents(world);
    const run = runQueuedJobs(world, notificationPushJob);
    // The phone's push arrives while the laptop's push service still has not answered.
    await until(
      () => pushesTo(phone).length === 1 && pushService.waiting() === 1,
      'the phone push while the laptop waits',
    );
    pushService.release();
    const { failed } = await run;
    assert.equal(failed.length, 0);
    assert.deepEqual(pushService.rejected, [], 'every JWT and payload checked out');
    const [payload] = pushesTo(phone);
    assert.deepEqual([payload!.kind, payload!.title], ['lock_created', 'Savings locked']);
    assert.match(payload!.body!, /₦1,000\.00 is locked/);
    assert.equal(pushesTo(laptop).length, 1);
    const arrived = pushService.received.find((p) => phone.endpoint.endsWith(p.path))!;
    assert.deepEqual(
      [arrived.vapidKey, arrived.audience, arrived.ttl],
      [publicKey, pushService.origin, '86400'],
    );
    assert.equal(pushesTo(othersDevice).length, 0);
    const left = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(
      left.map((r) => r.endpoint).sort(),
      [laptop.endpoint, phone.endpoint].sort(),
      '410 forgot the gone one',
    );
    assert.equal(
      left.some((r) => r.endpoint === gone.endpoint),
      false,
    );

    // Switched off for this kind: nothing more is pushed, the inbox still has it.
    ok(
      await post(
        world,
        'updateNotificationSettings',
        { push: { lock_created: false } },
        { token: user.accessToken },
      ),
    );
    await lock(world, user, 500);
    await runDomainEvents(world);
    pushService.release();
    await runQueuedJobs(world, notificationPushJob);
    assert.equal(pushesTo(phone).length, 1);
    // And deletePushSubscription removes only the caller's own.
    expectError(
      await post(world, 'deletePushSubscription', { endpoint: phone.endpoint }, { token: other.accessToken }),
      404,
      'NOT_FOUND',
    );
    ok(
      await post(world, 'deletePushSubscription', { endpoint: phone.endpoint }, { token: user.accessToken }),
    );
    expectError(
      await post(world, 'deletePushSubscription', { endpoint: phone.endpoint }, { token: user.accessToken }),
      404,
      'NOT_FOUND',
    );
  });

  it('fans a broadcast out to every subscription in pages, once each, skipping those who switched broadcasts off', async () => {
    const admin = await signIn(world, adminPhone);
    await world.ctx.db.deleteFrom('push_subscriptions').execute();
    const users = await Promise.all(Array.from({ length: 7 }, () => signIn(world)));
    const subscriptions: TestSubscription[] = [];
    for (let i = 0; i < 1_050; i++) subscriptions.push(await subscribe(users[i % 6]!));
    const quiet = await subscribe(users[6]!);
    ok(
      await post(
        world,
        'updateNotificationSettings',
        { push: { broadcast: false } },
        { token: users[6]!.accessToken },
      ),
    );
    const before = pushService.received.length;
    ok(
      await post(
        world,
        'adminCreateBroadcast',
        { title: 'Maintenance', body: 'Tonight 1–2 am.' },
        { token: admin.accessToken },
      ),
    );
    const { done, failed } = await runQueuedJobs(world, broadcastPushJob);
    assert.deepEqual(
      [done.length, failed.length],
      [3, 0],
      `pages of 500 (${failed.map((f) => String(f.error)).join('; ')})`,
    );
    const delivered = pushService.received.slice(before);
    assert.equal(delivered.length, 1_050);
    assert.equal(new Set(delivered.map((p) => p.path)).size, 1_050, 'each subscription once');
    assert.deepEqual(JSON.parse(delivered[0]!.payload).title, 'Maintenance');
    assert.equal(pushesTo(quiet).length, 0);
  });
});
