import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { walletKobo } from '../bulk-orders/support.ts';
import type { World } from '../helpers/world.ts';
import { type Buyer, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  openBrowserWorld,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// The bulk-order screens in headless Chromium, driven as a person would and by keyboard alone where
// it matters: lines pasted, the preview with the line the service would refuse shown first and
// dropped, the total, the PIN last, then the order's lines polled until every one has its outcome
// (the sandbox's last digit decides: 0 delivered, 1 failed and refunded), and the list of orders.
// axe-core checks every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const ORDER_URL = /\/bulk\/[0-9a-f-]{36}$/;

/** Presses Tab until the focused element's text or label holds `name`; fails if it never comes. */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let presses = 0; presses < 60; presses += 1) {
    await page.keyboard.press('Tab');
    // The focused element's own text, its aria-label and its label's text (a string: tests have no DOM types).
    const focused = await page.evaluate<string>(`(() => {
      const el = document.activeElement;
      const byFor = el && el.id ? document.querySelector('label[for="' + el.id + '"]') : null;
      const around = el ? el.closest('label') : null;
      return [el && el.textContent, el && el.getAttribute('aria-label'), byFor && byFor.textContent,
        around && around.textContent].join(' ');
    })()`);
    if (focused.includes(name)) return;
  }
  assert.fail(`"${name}" is not reachable with Tab`);
}

describe('the web client: bulk orders', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: Buyer;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    user = await buyer(world, 5_000);
    page = await signedInPhone(browser, world.baseUrl, user);
  });
  after(async () => {
    await closeBrowserWorld({ world, browser });
  });

  it('pastes lines, shows the refused line first, drops it, pays with the PIN last and follows the lines', async () => {
    await page.goto(`${world.baseUrl}/buy`);
    await page.getByRole('link', { name: /Bulk orders/ }).click();
    await page.getByRole('link', { name: 'New bulk order' }).click();
    await page.getByRole('heading', { name: 'New bulk order' }).waitFor(TIMEOUT);
    await screen(page, 'bulk-new');

    const delivered = mtn('0');
    const failing = mtn('1');
    const tooSmall = mtn('5');
    await tabTo(page, 'Numbers and amounts');
    await page.keyboard.insertText(`${delivered}, 100\n${tooSmall}, 10\n${failing}, 200`);
    await tabTo(page, 'Check 3 lines');
    await page.keyboard.press('Enter');

    const refused = page.getByTestId('refused-lines');
    await refused.waitFor(TIMEOUT);
    assert.match((await refused.textContent()) ?? '', new RegExp(`Line 2, ${tooSmall}`));
    // The refusal comes before the total and the way to pay.
    const refusedAt = (await refused.boundingBox())!.y;
    const totalAt = (await page.getByTestId('price').boundingBox())!.y;
    assert.ok(refusedAt < totalAt, 'the refused lines are shown before the total');
    assert.equal(
      await page.getByRole('button', { name: 'Continue to pay' }).count(),
      0,
      'no paying with a bad line',
    );
    await screen(page, 'bulk-preview-refused');

    await page.getByRole('button', { name: 'Remove these lines' }).click();
    await page.getByRole('button', { name: 'Check 2 lines' }).click();
    await page.getByTestId('price').filter({ hasText: '₦300.00' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, user.userId), 500_000n, 'nothing charged by the preview');
    await tabTo(page, 'Continue to pay');
    await page.keyboard.press('Enter');
    await tabTo(page, 'Transaction PIN');
    await page.keyboard.type(PIN);
    await screen(page, 'bulk-pin');
    await tabTo(page, 'Pay ₦300.00');
    await page.keyboard.press('Enter');

    await page.waitForURL(ORDER_URL, TIMEOUT);
    await page
      .getByTestId('bulk-status')
      .filter({ hasText: 'Completed: 1 delivered, 0 pending, 1 failed' })
      .waitFor(TIMEOUT);
    const statuses = await page.getByTestId('line-status').allTextContents();
    assert.deepEqual(statuses, ['Delivered', 'Failed, refunded']);
    assert.equal(
      await walletKobo(world, user.userId),
      490_000n,
      'the delivered line paid, the failed one refunded',
    );
    await screen(page, 'bulk-order');

    await page.getByRole('link', { name: 'All bulk orders' }).click();
    await page.getByRole('link', { name: /2 airtime lines/ }).waitFor(TIMEOUT);
    await screen(page, 'bulk-orders');
  });
});
