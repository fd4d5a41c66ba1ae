import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { e164 } from '../auth/support.ts';
import { walletKobo } from '../funding/support.ts';
import { readSms, signInAgain, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { advanceClock, fund, mtn } from '../vtu/purchase-support.ts';
import { closeBrowserWorld, openBrowserWorld, phonePage, screen, skipWithoutChromium } from './support.ts';

// A person using the web client (API.md section 15), in headless Chromium against the service in
// sandbox mode: signing in with the code from the sandbox SMS, setting the PIN, buying airtime with
// each sandbox outcome (success, failure with refund, pending then success), reading the history and
// funding the wallet through the sandbox checkout and back. axe-core checks every screen, and each
// is saved as a 360×800 screenshot.

const PIN = '2580';
const TIMEOUT = { timeout: 30_000 };

describe('the web client in a browser', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let phone: string;
  let userId: string;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    page = await phonePage(browser);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('signs in with the code from the SMS and sets the PIN', async () => {
    phone = mtn('7');
    await page.goto(`${world.baseUrl}/`);
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    await screen(page, '01-sign-in');
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    const { code } = await readSms(world, e164(phone));
    await page.getByLabel('Code').fill(code);
    await screen(page, '02-sign-in-code');
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.waitForURL(/\/pin$/, TIMEOUT);
    await screen(page, '03-pin');
    await page.getByLabel('New PIN').fill(PIN);
    await page.getByLabel('Type it again').fill('1111');
    assert.ok(await page.getByText('The two PINs are not the same').isVisible());
    await page.getByLabel('Type it again').fill(PIN);
    await page.getByRole('button', { name: 'Save PIN' }).click();
    await page.waitForURL(`${world.baseUrl}/`, TIMEOUT);
    await page.getByTestId('balance').waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('balance').textContent(), '₦0.00');
    await screen(page, '04-home');

    // Tier 1 (the liveness widget has its own browser test) and money, through the API.
    const apiSession = await signInAgain(world, phone);
    userId = apiSession.userId;
    await userAtTier(world, 1, apiSession);
    await fund(world, userId, 5_000);
  });

  /** Buys airtime for `to` through the screens and answers the transaction page's final status. */
  async function buyAirtime(to: string, amount: string, screens?: string): Promise<string> {
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(to);
    await page.getByText('MTN number').waitFor(TIMEOUT);
    assert.ok(await page.getByRole('radio', { name: 'MTN' }).isChecked(), 'the network is detected as typed');
    await page.getByLabel('Amount (₦)').fill(amount);
    if (screens) await screen(page, `${screens}-form`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    if (screens) await screen(page, `${screens}-confirm`);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    const status = page.getByTestId('status');
    await status.waitFor(TIMEOUT);
    return (await status.textContent()) ?? '';
  }

  it('buys airtime: the price before the PIN, then the receipt once delivered', async () => {
    const status = await buyAirtime(mtn('5'), '500', '05-buy-airtime');
    // The instant sandbox provider: delivered by the time the page first asks, or on its next poll.
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.match(status, /Successful|Pending/);
    await screen(page, '06-receipt');
    assert.equal(await walletKobo(world, userId), 450_000n);
  });

  it('explains a wrong PIN with the tries left, and the corrected PIN pays once', async () => {
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(mtn('6'));
    await page.getByLabel('Amount (₦)').fill('100');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await page.getByLabel('Transaction PIN').fill('1111');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.getByText('That PIN is not right. 4 tries left before it locks.').waitFor(TIMEOUT);
    await screen(page, '05-wrong-pin');
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 440_000n);
  });

  it('shows a failed purchase as refunded', async () => {
    await buyAirtime(mtn('1'), '200');
    await page.getByTestId('status').filter({ hasText: 'Failed' }).waitFor(TIMEOUT);
    assert.match((await page.getByTestId('status').textContent()) ?? '', /₦200\.00 is back in your wallet/);
    await screen(page, '07-failed');
    assert.equal(await walletKobo(world, userId), 440_000n);
  });

  it('follows a pending purchase until the requery settles it', async () => {
    const status = await buyAirtime(mtn('2'), '100');
    assert.match(status, /Pending/);
    await screen(page, '08-processing');
    await advanceClock(world, 61);
    // The page asks again about every 3 s.
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 430_000n);
  });

  it('lists every movement of the wallet, newest first, and filters them by kind', async () => {
    await page.goto(`${world.baseUrl}/transactions`);
    const rows = page.getByRole('list', { name: 'Transactions' }).getByRole('listitem');
    // The funding, four purchases and the failed one's refund.
    await rows.nth(5).waitFor(TIMEOUT);
    assert.equal(await rows.count(), 6);
    assert.match((await rows.first().textContent()) ?? '', /₦100\.00 MTN airtime/);
    assert.match((await rows.nth(1).textContent()) ?? '', /^Refund.*\+₦200\.00/);
    await screen(page, '09-history');
    await page.getByLabel('Type', { exact: true }).selectOption('topup');
    await page.getByText('Nothing matches these filters.').waitFor(TIMEOUT);
    await page.getByLabel('Type', { exact: true }).selectOption('purchase');
    await page.waitForURL(/kind=purchase/, TIMEOUT);
    await rows.nth(3).waitFor(TIMEOUT);
    assert.equal(await rows.count(), 4);
  });

  it('funds the wallet through the checkout, and shows it funded only once the service says so', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    await page.getByLabel('Amount (₦)').fill('2000');
    await screen(page, '10-fund');
    await page.getByRole('button', { name: 'Pay ₦2,000.00' }).click();
    await page.waitForURL(/\/__sandbox\/checkout\//, TIMEOUT);
    await page.click('#pay');
    await page.getByRole('link', { name: 'Return to the merchant' }).click();
    await page.waitForURL(/\/fund\/return\?/, TIMEOUT);
    await page
      .getByTestId('topup-status')
      .filter({ hasText: 'Your wallet has been funded.' })
      .waitFor(TIMEOUT);
    await screen(page, '11-funded');
    assert.equal(await walletKobo(world, userId), 630_000n);
  });

  it('brings a person who declined at the checkout back to a page that says so and offers another try', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    await page.getByLabel('Amount (₦)').fill('500');
    await page.getByRole('button', { name: 'Pay ₦500.00' }).click();
    await page.waitForURL(/\/__sandbox\/checkout\//, TIMEOUT);
    await page.click('#decline');
    await page.getByRole('link', { name: 'Return to the merchant' }).click();
    await page.waitForURL(/\/fund\/return\?/, TIMEOUT);
    await page
      .getByTestId('topup-status')
      .filter({ hasText: 'The payment did not go through. Nothing was added to your wallet.' })
      .waitFor(TIMEOUT);
    await page.getByRole('link', { name: 'Try again' }).click();
    await page.waitForURL(/\/fund$/, TIMEOUT);
    assert.equal(await walletKobo(world, userId), 630_000n);
  });
});
