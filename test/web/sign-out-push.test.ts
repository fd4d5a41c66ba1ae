import assert from 'node:assert/strict';
import { Agent } from 'node:https';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { notificationPushJob } from '../../src/notifications/jobs.ts';
import { saveSubscription } from '../../src/push/subscriptions.ts';
import { ensureWebBuilt } from '../../src/web-build.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { type PushService, startPushService, type TestSubscription } from '../helpers/push-service.ts';
import { createWorld, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { lock, saver } from '../savings/support.ts';
import { injectSession, launchChromium, phonePage, skipWithoutChromium } from './support.ts';

// Signing out stops this device's pushes (issue 25 item 8): a shared phone must not keep showing
// the previous person's purchases and transfers. Headless Chromium has no push service, so the page's
// PushManager is stubbed to hand out a subscription at the tests' local push service (which checks
// and decrypts every push), saved for the person as turning push on would have saved it (the API
// refuses loopback push endpoints by design). A savings lock pushes to it before sign-out; after
// signing out through Settings, the service no longer has it and the next lock pushes nothing, and
// the browser's own subscription was unsubscribed.

const TIMEOUT = { timeout: 30_000 };

type StubGlobals = { __unsubscribed: number };

/** Replaces the browser's PushManager with one whose subscription is the given one. */
function stubPushManager(subscription: TestSubscription): void {
  const bytes = (base64url: string) => {
    const binary = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer;
  };
  const globals = globalThis as unknown as StubGlobals & { PushManager: { prototype: object } };
  globals.__unsubscribed = 0;
  let active = true;
  const fake = {
    endpoint: subscription.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: null },
    getKey: (name: string) =>
      name === 'p256dh' ? bytes(subscription.p256dh) : name === 'auth' ? bytes(subscription.auth) : null,
    toJSON: () => ({
      endpoint: subscription.endpoint,
      expirationTime: null,
      keys: { p256dh: subscription.p256dh, auth: subscription.auth },
    }),
    unsubscribe: async () => {
      globals.__unsubscribed += 1;
      active = false;
      return true;
    },
  };
  Object.assign(globals.PushManager.prototype, {
    getSubscription: async () => (active ? fake : null),
    subscribe: async () => {
      active = true;
      return fake;
    },
    permissionState: async () => 'granted',
  });
}

describe('the web client: signing out stops this device’s pushes', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let pushService: PushService;

  before(async () => {
    await ensureWebBuilt({});
    pushService = await startPushService();
    world = await createWorld({
      env: { PUSH_ALLOWED_HOSTS: 'localhost,fcm.googleapis.com', PUSH_TIMEOUT_MS: '5000' },
      pushAgent: new Agent({ ca: pushService.ca, keepAlive: true }),
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await world?.close();
    await pushService?.close();
  });

  const pushesTo = (s: TestSubscription) => pushService.received.filter((p) => s.endpoint.endsWith(p.path));

  /** A savings lock of the person's (a `lock_created` push), delivered as the workers would. */
  async function lockAndDeliver(api: SignedIn): Promise<void> {
    await lock(world, api, 100);
    await runDomainEvents(world);
    await runQueuedJobs(world, notificationPushJob);
  }

  /**
   * The person's Settings open on a phone whose push is on: a subscription at the local push
   * service, saved for them, which the page's stubbed PushManager hands out.
   */
  async function settingsWithPush(user: SignedIn): Promise<{ page: Page; subscription: TestSubscription }> {
    const subscription = pushService.subscribe();
    await saveSubscription(world.ctx.db, user.userId, subscription, world.ctx.clock.now());
    const page = await phonePage(browser);
    await injectSession(page, world.baseUrl, user.refreshToken);
    await page.context().grantPermissions(['notifications'], { origin: world.baseUrl });
    await page.addInitScript(stubPushManager, subscription);
    await page.goto(`${world.baseUrl}/settings`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor(TIMEOUT);
    return { page, subscription };
  }

  it('deletes the subscription at the service and in the browser before the session ends', async () => {
    const user = await saver(world, 1_000);
    // A second session of the same person, for the API calls after the page signs out.
    const api = await signInAgain(world, user.phone);
    const { page, subscription } = await settingsWithPush(user);

    // Before sign-out the person's pushes reach this phone.
    await lockAndDeliver(api);
    assert.equal(pushesTo(subscription).length, 1, 'a push arrived before sign-out');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/, TIMEOUT);

    const rows = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('endpoint', '=', subscription.endpoint)
      .execute();
    assert.deepEqual(rows, [], 'the service no longer has this phone’s subscription');
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as StubGlobals).__unsubscribed),
      1,
      'the browser’s subscription was unsubscribed',
    );
    await lockAndDeliver(api);
    assert.equal(pushesTo(subscription).length, 1, 'no push after sign-out');
    assert.deepEqual(pushService.rejected, []);
    await page.context().close();
  });

  it('signs out all the same when the service never answers the delete', async () => {
    const user = await saver(world, 1_000);
    const { page } = await settingsWithPush(user);

    // The delete goes out and no answer ever comes back (a stalled connection on a shared phone).
    let stalled = 0;
    await page.route('**/_serverFn/deletePushSubscription', () => {
      stalled += 1;
    });
    // The page's refresh token now (loading the page refreshed the one it was given).
    const current = await page.evaluate(() => localStorage.getItem('billrail.refresh'));
    assert.ok(current !== null);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    assert.equal(stalled, 1);
    assert.equal(
      await page.evaluate(() => (globalThis as unknown as StubGlobals).__unsubscribed),
      1,
      'the browser’s subscription was unsubscribed, so its push service refuses the endpoint',
    );
    assert.equal(await page.evaluate(() => localStorage.getItem('billrail.refresh')), null);
    // And the session ended at the service.
    const refreshed = await fetch(`${world.baseUrl}/_serverFn/refreshSession`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ data: { refreshToken: current } }),
    });
    assert.equal(refreshed.status, 401, 'the session was revoked');
    await page.context().close();
  });
});
