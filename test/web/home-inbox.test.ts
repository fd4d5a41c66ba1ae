import assert from 'node:assert/strict';
import { createECDH, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { walletKobo } from '../funding/support.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { ok, post, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { bought, fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// Home, the tabs, the inbox, savings and the push switch of the web client (issue 26 items 3 and 4),
// in headless Chromium as a new person would use them: the balance hidden and still hidden after a
// reload, every bill tile, a purchase's notification raising the Inbox tab's count and opening the
// purchase, a poll pinned above the notifications, a lock and a break each confirmed with its
// numbers, a lock too short refused in days, and push on this phone as one switch with its state.
// axe-core checks every screen in light and in dark (screen()); each is saved as a screenshot named by
// screen.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000002';

/** A phone page signed in as `user` (the refresh token the sign-in screen would have kept). */
async function signedInPage(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  return page;
}

type VisibilityGlobals = { document: { dispatchEvent(event: Event): boolean } };

type PushStubGlobals = { PushManager: { prototype: object } };

/**
 * Headless Chromium has no push service: the page's PushManager hands out a subscription with real
 * keys at an allowed push host (the service's DNS check is answered by the world's resolveHost).
 */
function stubPushManager(keys: { endpoint: string; p256dh: string; auth: string }): void {
  const bytes = (base64url: string) => {
    const binary = atob(base64url.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0)).buffer;
  };
  let active = false;
  const subscription = {
    endpoint: keys.endpoint,
    expirationTime: null,
    options: { userVisibleOnly: true, applicationServerKey: null },
    getKey: (name: string) => (name === 'p256dh' ? bytes(keys.p256dh) : bytes(keys.auth)),
    unsubscribe: async () => {
      active = false;
      return true;
    },
  };
  Object.assign((globalThis as unknown as PushStubGlobals).PushManager.prototype, {
    getSubscription: async () => (active ? subscription : null),
    subscribe: async () => {
      active = true;
      return subscription;
    },
  });
}

describe('the web client: home, tabs, inbox, savings and push', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: SignedIn;
  /** A second session of the same person, for the API (the page rotates its own tokens). */
  let api: SignedIn;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({
      env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}`, PUSH_ALLOWED_HOSTS: 'fcm.googleapis.com' },
      // fcm.googleapis.com as a public address, without asking the network.
      resolveHost: async () => ['142.250.180.10'],
    }));
    user = await userAtTier(world, 1);
    api = await signInAgain(world, user.phone);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: api.accessToken }));
    await fund(world, user.userId, 10_000);
    // Tier 1's approval is in the inbox already: read, so that the count starts at nothing.
    await runDomainEvents(world);
    ok(await post(world, 'markAllNotificationsRead', {}, { token: api.accessToken }));
    page = await signedInPage(browser, world, user);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('hides the balance on request and keeps it hidden after a reload', async () => {
    await page.goto(`${world.baseUrl}/`);
    const balance = page.getByTestId('balance');
    await balance.filter({ hasText: '₦10,000.00' }).waitFor(TIMEOUT);
    await screen(page, 'home');

    await page.getByRole('button', { name: 'Hide balance' }).click();
    await balance.filter({ hasText: '₦•••••' }).waitFor(TIMEOUT);
    for (const locked of ['Locked savings', 'Locked bonus'])
      assert.match(
        (await page.getByText(locked, { exact: true }).locator('..').textContent()) ?? '',
        /₦•••••hidden$/,
        locked,
      );
    await page.reload();
    await page.getByRole('button', { name: 'Show balance', pressed: true }).waitFor(TIMEOUT);
    assert.match((await balance.textContent()) ?? '', /^₦•••••/);
    await screen(page, 'home-hidden');

    await page.getByRole('button', { name: 'Show balance' }).click();
    await balance.filter({ hasText: '₦10,000.00' }).waitFor(TIMEOUT);
    await page.reload();
    await balance.filter({ hasText: '₦10,000.00' }).waitFor(TIMEOUT);

    // What a locked bonus is, a tap away.
    await page.getByText('What is a locked bonus?').click();
    await page.getByText(/cannot be spent, sent or withdrawn/).waitFor(TIMEOUT);
  });

  it('opens every bill from its tile on home', async () => {
    const tiles: Array<[string, string]> = [
      ['Airtime', '/buy/airtime'],
      ['Data', '/buy/data'],
      ['Electricity', '/buy/electricity'],
      ['TV', '/buy/cable'],
      ['Betting', '/buy/betting'],
      ['Exam pins', '/buy/education'],
      ['Social boosts', '/buy/social'],
      ['Airtime to cash', '/buy/airtime-to-cash'],
    ];
    await page.goto(`${world.baseUrl}/`);
    const bills = page.getByRole('navigation', { name: 'Pay bills' });
    await bills.waitFor(TIMEOUT);
    assert.equal(await bills.getByRole('link').count(), tiles.length, 'one tile per bill');
    for (const [name, path] of tiles) {
      await bills.getByRole('link', { name, exact: true }).click();
      await page.waitForURL(`${world.baseUrl}${path}`, TIMEOUT);
      await page.getByRole('heading', { level: 1 }).waitFor(TIMEOUT);
      await page.getByRole('link', { name: 'Home' }).click();
      await bills.waitFor(TIMEOUT);
    }
  });

  it('counts a new notification on the Inbox tab, opens what it is about, and the count drops', async () => {
    const tabs = page.getByRole('navigation', { name: 'Main' });
    await page.goto(`${world.baseUrl}/`);
    await tabs.getByRole('link', { name: 'Inbox', exact: true }).waitFor(TIMEOUT);

    const purchase = await bought(world, api, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
    assert.equal(purchase.status, 'success');
    await runDomainEvents(world);
    // The tab asks again when the app comes back to the front (and every minute).
    await page.evaluate(() =>
      (globalThis as unknown as VisibilityGlobals).document.dispatchEvent(
        new Event('visibilitychange', { bubbles: true }),
      ),
    );
    const inboxTab = tabs.getByRole('link', { name: /^Inbox, 1 unread$/ });
    await inboxTab.waitFor(TIMEOUT);
    assert.equal(await tabs.getByTestId('unread-badge').textContent(), '1');
    await screen(page, 'home-unread');

    await inboxTab.click();
    await page.waitForURL(`${world.baseUrl}/inbox`, TIMEOUT);
    const notification = page.getByRole('link', { name: /^Unread: Airtime delivered/ });
    await notification.waitFor(TIMEOUT);
    await screen(page, 'inbox-unread');

    await notification.click();
    await page.waitForURL(`${world.baseUrl}/transactions/${purchase.id}`, TIMEOUT);
    await tabs.getByRole('link', { name: 'Inbox', exact: true }).waitFor(TIMEOUT);
    assert.equal(await tabs.getByTestId('unread-badge').count(), 0, 'read: the badge is gone');
    await page.getByRole('link', { name: 'Inbox', exact: true }).click();
    await page.getByRole('link', { name: /^Airtime delivered/ }).waitFor(TIMEOUT);
  });

  it('pins a poll an admin broadcast above the notifications, with the tallies and the vote', async () => {
    const admin = await signIn(world, ADMIN_PHONE);
    for (const broadcast of [
      { title: 'New: exam pins', body: 'WAEC and NECO pins are here.' },
      {
        title: 'Which service next?',
        body: 'Tell us what to add.',
        poll: { question: 'What should we add?', options: ['Insurance', 'Flights'] },
      },
    ])
      ok(await post(world, 'adminCreateBroadcast', broadcast, { token: admin.accessToken }));

    await page.goto(`${world.baseUrl}/inbox`);
    await page.getByRole('button', { name: 'Flights' }).waitFor(TIMEOUT);
    await page.getByRole('heading', { name: 'News' }).waitFor(TIMEOUT);
    assert.deepEqual(
      await page.getByRole('main').getByRole('heading', { level: 2 }).allTextContents(),
      ['Polls', 'Notifications', 'News'],
      'the poll is pinned on top, the news below',
    );
    await screen(page, 'inbox-poll');

    await page.getByRole('button', { name: 'Flights' }).click();
    const results = page.getByRole('list', { name: 'Results' });
    await results.getByText('Flights (your vote)').waitFor(TIMEOUT);
    assert.match((await results.getByRole('listitem').nth(1).textContent()) ?? '', /1 vote · 100%/);
    assert.match((await results.getByRole('listitem').nth(0).textContent()) ?? '', /0 votes · 0%/);
    await screen(page, 'inbox-voted');
  });

  it('refuses a lock too short in days, then locks and breaks, each confirmed with its numbers', async () => {
    await page.goto(`${world.baseUrl}/savings`);
    await page.getByLabel('Amount (₦)').fill('2000');
    await page.getByLabel('Days').fill('3');
    await screen(page, 'savings');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Lock ₦2,000.00' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: 'That is too short: it must be at least 7 days.' })
      .waitFor(TIMEOUT);
    await screen(page, 'savings-too-short');
    assert.equal(await walletKobo(world, user.userId), 990_000n, 'nothing was locked');

    await page.getByRole('button', { name: 'Change' }).click();
    await page.getByLabel('Days').fill('30');
    await page.getByRole('button', { name: 'Continue' }).click();
    const preview = page.getByTestId('lock-preview');
    await preview.waitFor(TIMEOUT);
    assert.match(
      (await preview.textContent()) ?? '',
      /^Lock ₦2,000\.00 for 30 days\? It comes back to your wallet on .+\. Breaking it before then keeps ₦100\.00\.$/,
    );
    await screen(page, 'savings-confirm');
    await page.getByRole('button', { name: 'Lock ₦2,000.00' }).click();
    await page.getByRole('status').filter({ hasText: '₦2,000.00 is locked for 30 days.' }).waitFor(TIMEOUT);
    const lock = page.getByRole('list', { name: 'Your locks' }).getByRole('listitem').first();
    await lock.getByText('Locked', { exact: true }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, user.userId), 790_000n);

    await lock.getByRole('button', { name: 'Break early' }).click();
    await lock
      .getByText('Breaking now keeps a 5% penalty of ₦100.00; you get ₦1,900.00 back.')
      .waitFor(TIMEOUT);
    await screen(page, 'savings-break-confirm');
    assert.equal(await walletKobo(world, user.userId), 790_000n, 'nothing moves before the confirmation');
    await lock.getByRole('button', { name: 'Break and pay the penalty' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: 'Lock broken: ₦1,900.00 is back in your wallet; ₦100.00 was kept as the penalty.' })
      .waitFor(TIMEOUT);
    await lock.getByText('Broken early', { exact: true }).waitFor(TIMEOUT);
    await lock
      .getByText(
        /^Broken early on .+: ₦1,900\.00 came back to your wallet and ₦100\.00 was kept as the penalty\.$/,
      )
      .waitFor(TIMEOUT);
    assert.equal(await lock.getByRole('button', { name: 'Break early' }).count(), 0);
    assert.equal(await walletKobo(world, user.userId), 980_000n);
    await screen(page, 'savings-broken');
  });

  it('shows push on this phone as one switch with its state: blocked, then on and off', async () => {
    // Blocked: the person said no in the browser; the page cannot change it, and says where to.
    const blocked = await signedInPage(browser, world, await signInAgain(world, user.phone));
    await blocked.addInitScript(() => {
      const { Notification } = globalThis as unknown as { Notification: object };
      Object.defineProperty(Notification, 'permission', { get: () => 'denied' });
    });
    await blocked.goto(`${world.baseUrl}/settings`);
    const blockedSwitch = blocked.getByRole('switch', { name: 'Push on this phone' });
    await blocked
      .getByTestId('push-state')
      .filter({ hasText: /^Blocked in the browser/ })
      .waitFor(TIMEOUT);
    assert.ok(await blockedSwitch.isDisabled());
    assert.equal(await blockedSwitch.getAttribute('aria-checked'), 'false');
    await screen(blocked, 'settings-push-blocked');
    await blocked.context().close();

    // Allowed: off until turned on, then on (saved at the service), then off again.
    const p256dh = createECDH('prime256v1').generateKeys().toString('base64url');
    const keys = {
      endpoint: `https://fcm.googleapis.com/fcm/send/${randomBytes(8).toString('hex')}`,
      p256dh,
      auth: randomBytes(16).toString('base64url'),
    };
    await page.context().grantPermissions(['notifications'], { origin: world.baseUrl });
    await page.addInitScript(stubPushManager, keys);
    await page.goto(`${world.baseUrl}/settings`);
    const push = page.getByRole('switch', { name: 'Push on this phone' });
    await page.getByTestId('push-state').filter({ hasText: /^Off:/ }).waitFor(TIMEOUT);
    assert.equal(await push.getAttribute('aria-checked'), 'false');
    await push.click();
    await page.getByTestId('push-state').filter({ hasText: /^On:/ }).waitFor(TIMEOUT);
    assert.equal(await push.getAttribute('aria-checked'), 'true');
    const saved = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(
      saved.map((row) => row.endpoint),
      [keys.endpoint],
    );
    await screen(page, 'settings-push-on');
    await push.click();
    await page.getByTestId('push-state').filter({ hasText: /^Off:/ }).waitFor(TIMEOUT);
    assert.equal(await push.getAttribute('aria-checked'), 'false');

    // The per-kind switches, grouped under headings.
    for (const group of ['Money', 'Purchases', 'Savings & rewards', 'Verification', 'News'])
      await page.getByRole('heading', { name: group, level: 3 }).waitFor(TIMEOUT);
    assert.equal(await page.getByRole('heading', { name: 'Administration', level: 3 }).count(), 0);
  });
});
