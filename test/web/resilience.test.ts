import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { walletKobo } from '../funding/support.ts';
import { type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The web client when the network fails (API.md section 15, issue 20 item 4), in headless Chromium:
// a purchase whose answer is lost on the way back is retried with the same Idempotency-Key and
// charged once; the service worker installs, keeps the app shell, and the last balance and history
// stay readable offline, marked as such; push is asked of the browser through the service worker.

const TIMEOUT = { timeout: 30_000 };

/** What the tests read of the page's globals (the service compiles without the DOM's types). */
type BrowserGlobals = {
  navigator: {
    serviceWorker: { ready: Promise<{ active: { scriptURL: string } | null }>; controller: unknown };
  };
};

describe('the web client when the network fails', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let user: SignedIn;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    context = await browser.newContext({
      viewport: { width: 360, height: 800 },
      deviceScaleFactor: 2,
      isMobile: true,
      hasTouch: true,
      serviceWorkers: 'allow',
    });
    page = await context.newPage();
    user = await buyer(world, 1_000);
    await injectSession(page, world.baseUrl, user.refreshToken);
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** Fills /buy/airtime for a sandbox MTN number delivered at once, up to the PIN. */
  async function airtimeUpToPin(amount: string): Promise<void> {
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByLabel('Amount (₦)').fill(amount);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await page.getByLabel('Transaction PIN').fill(PIN);
  }

  const purchasesOf = (userId: string) =>
    world.ctx.db.selectFrom('vtu_transactions').select('id').where('user_id', '=', userId).execute();

  it('says a purchase whose answer was lost may have gone through, and shows it once found in history', async () => {
    const keys: string[] = [];
    await page.route('**/_serverFn/buyAirtime', async (route) => {
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      // The attempt reaches the service, which accepts it; its answer never comes back.
      await route.fetch();
      await route.abort('connectionreset');
    });
    // The history is held until the note has been read, so the note is certain to be seen.
    let noteSeen = () => {};
    const seen = new Promise<void>((resolve) => {
      noteSeen = resolve;
    });
    await page.route('**/_serverFn/listMyVtuTransactions*', async (route) => {
      await seen;
      await route.continue();
    });
    await airtimeUpToPin('300');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.getByText('Your payment may have gone through.').waitFor(TIMEOUT);
    assert.equal(await page.getByText('You are offline').count(), 0, 'never a bare "You are offline"');
    await screen(page, '12-purchase-answer-lost');
    noteSeen();
    // Found in the history without paying again: the receipt opens by itself.
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    await page.unroute('**/_serverFn/buyAirtime');
    await page.unroute('**/_serverFn/listMyVtuTransactions*');

    assert.equal(keys.length, 1, 'nothing was sent again');
    assert.equal((await purchasesOf(user.userId)).length, 1);
    assert.equal(await walletKobo(world, user.userId), 70_000n);
  });

  it('checks again with the same Idempotency-Key when the lost attempt never arrived: charged once', async () => {
    const keys: string[] = [];
    let lose = true;
    await page.route('**/_serverFn/buyAirtime', async (route) => {
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      if (lose) {
        // This one never reaches the service.
        lose = false;
        await route.abort('connectionreset');
        return;
      }
      await route.fulfill({ response: await route.fetch() });
    });
    await airtimeUpToPin('200');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.getByText('Your payment may have gone through.').waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Check again' }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    await page.unroute('**/_serverFn/buyAirtime');

    assert.equal(keys.length, 2);
    assert.equal(keys[0], keys[1], 'the retry carries the first attempt’s key');
    assert.equal((await purchasesOf(user.userId)).length, 2, 'one purchase for the two attempts');
    assert.equal(await walletKobo(world, user.userId), 50_000n);
  });

  it('installs its service worker and shows the last balance and history offline, marked as such', async () => {
    await page.goto(`${world.baseUrl}/`);
    await page.getByTestId('balance').filter({ hasText: '₦500.00' }).waitFor(TIMEOUT);
    await page.goto(`${world.baseUrl}/transactions`);
    await page.getByRole('main').getByRole('listitem').first().waitFor(TIMEOUT);
    // Controlled by the service worker once it is active and the page loads again.
    await page.evaluate(async () => {
      await (globalThis as unknown as BrowserGlobals).navigator.serviceWorker.ready;
    });
    await page.reload();
    assert.equal(
      await page.evaluate(
        () => (globalThis as unknown as BrowserGlobals).navigator.serviceWorker.controller !== null,
      ),
      true,
    );

    await context.setOffline(true);
    await page.goto(`${world.baseUrl}/`);
    await page.getByText(/^Offline: this is your balance as of /).waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('balance').textContent(), '₦500.00');
    await screen(page, '13-offline-home');
    await page.goto(`${world.baseUrl}/transactions`);
    await page.getByText(/^Offline: your history as of /).waitFor(TIMEOUT);
    assert.match(
      (await page.getByRole('main').getByRole('listitem').first().textContent()) ?? '',
      /₦200\.00 MTN airtime/,
    );
    await context.setOffline(false);
  });

  it('asks the browser for a push subscription through the service worker, and says when it cannot', async () => {
    await context.grantPermissions(['notifications'], { origin: world.baseUrl });
    // A session of its own: the test before cut the network while a refresh was on its way, and a
    // refresh whose answer was lost leaves the page a rotated token, which the service takes as a
    // replay (API.md: the whole session revoked). Seen on PostgreSQL, where that refresh got there.
    const again = await signInAgain(world, user.phone);
    await injectSession(page, world.baseUrl, again.refreshToken);
    await page.goto(`${world.baseUrl}/settings`);
    // The switch is drawn while the phone's state is read, then again with it: click the settled one.
    await page
      .getByTestId('push-state')
      .filter({ hasText: /^(Off|On):/ })
      .waitFor(TIMEOUT);
    await page.getByRole('switch', { name: 'Push on this phone' }).click();
    // Headless Chromium has no push service to register with: the page must say so, not break.
    await page
      .getByText(
        /^(On: this phone shows|This browser could not reach its push service, so push is still off\.)/,
      )
      .waitFor(TIMEOUT);
    const saved = await world.ctx.db
      .selectFrom('push_subscriptions')
      .select('endpoint')
      .where('user_id', '=', user.userId)
      .execute();
    const registered = await page.evaluate(
      async () =>
        (await (globalThis as unknown as BrowserGlobals).navigator.serviceWorker.ready).active?.scriptURL,
    );
    assert.match(registered ?? '', /\/sw\.js$/);
    if ((await page.getByTestId('push-state').filter({ hasText: /^On:/ }).count()) > 0)
      assert.equal(saved.length, 1);
    else assert.equal(saved.length, 0, 'nothing saved when the browser could not subscribe');
  });
});
