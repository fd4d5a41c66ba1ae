import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findPurchase } from '../../src/vtu/purchases.ts';
import { walletKobo } from '../funding/support.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import type { World } from '../helpers/world.ts';
import { advanceClock, type Buyer, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// A token that comes after the success (API.md sections 8 and 16), in headless Chromium: a prepaid
// meter ending in 6 is paid for and shows Successful at once, without a token and saying it is on the
// way; the sandbox clock moves (POST /__sandbox/clock), the requery brings the token, and it appears
// on the purchase's page (which keeps asking while it is awaited) and in the inbox, copyable in both.
// axe-core checks every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const TRANSACTION_URL = /\/transactions\/[0-9a-f-]{36}$/;
const grouped = (token: string) => token.replace(/\D/g, '').replace(/(\d{4})(?=\d)/g, '$1 ');

describe('the web client: a token that arrives after the success', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: Buyer;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    user = await buyer(world, 10_000);
    page = await phonePage(browser);
    await injectSession(page, world.baseUrl, user.refreshToken);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('shows Successful without a token, then the token on the purchase and in the inbox once the clock moves', async () => {
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Ikeja Electric').check();
    await page.getByLabel('Prepaid').check();
    await page.getByLabel('Meter number').fill('45012345676');
    await page.getByLabel('Amount (₦)').fill('2,000');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Pay ₦2,000.00' }).click();
    await page.waitForURL(TRANSACTION_URL, TIMEOUT);
    const id = new URL(page.url()).pathname.split('/').at(-1)!;

    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'token is on the way' }).waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('token').count(), 0, 'no token yet');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).token, undefined);
    assert.equal(await walletKobo(world, user.userId), 800_000n, 'charged at the success');
    await screen(page, '48-electricity-token-awaited');

    // The sandbox clock runs the requery that is due; the page, still open, picks the token up.
    await advanceClock(world, 16);
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.match(purchase.token ?? '', /^\d{20}$/, 'the requery kept the token');
    await page.getByTestId('token').waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('token').textContent(), grouped(purchase.token!));
    assert.equal(await page.getByTestId('status').filter({ hasText: 'on the way' }).count(), 0);
    await page.getByRole('button', { name: 'Copy token' }).waitFor(TIMEOUT);
    await screen(page, '49-electricity-token-arrived');

    // The worker's part: the events become inbox entries.
    await runDomainEvents(world);
    await page.goto(`${world.baseUrl}/inbox`);
    const arrival = page.getByRole('listitem').filter({ hasText: 'Your electricity token is here' });
    await arrival.waitFor(TIMEOUT);
    assert.equal(await arrival.getByTestId('token').textContent(), grouped(purchase.token!));
    // Copyable with the keyboard alone: from the message's link, Tab reaches its Copy button.
    await arrival.getByRole('link').focus();
    await page.keyboard.press('Tab');
    const focused = await arrival
      .getByRole('button', { name: 'Copy token' })
      .evaluate((button) => button === button.ownerDocument.activeElement);
    assert.ok(focused, 'Tab from the message reaches Copy token');
    await screen(page, '50-inbox-token');
    // The success that came first says the token was on its way, and carries none.
    const success = page.getByRole('listitem').filter({ hasText: 'Electricity delivered' });
    assert.match((await success.textContent()) ?? '', /token is on the way/);
    assert.equal(await success.getByTestId('token').count(), 0);
    assert.equal(await walletKobo(world, user.userId), 800_000n, 'nothing moved with the token');
  });
});
