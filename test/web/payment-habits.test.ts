import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { until } from '../helpers/until.ts';
import { type SignedIn, signIn, type World } from '../helpers/world.ts';
import { advanceClock, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The habits every payment screen shares (issue 26 item 2), through the airtime screen: the form a
// person cannot use yet says the tier it needs before anything is typed; an instant success shows at
// once, without waiting for the transaction screen's poll; a purchase still processing says what
// happens next and how long it usually takes.

const TIMEOUT = { timeout: 30_000 };

describe('payment habits in the browser', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
  });
  after(() => closeBrowserWorld({ world, browser }));

  async function openAs(user: SignedIn): Promise<void> {
    page = await phonePage(browser);
    await injectSession(page, world.baseUrl, user.refreshToken);
  }

  /** Fills /buy/airtime and pays with the PIN; answers the receipt's status once it shows. */
  async function buyAirtime(to: string, amount: string): Promise<string> {
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(to);
    await page.getByLabel('Amount (₦)').fill(amount);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    for (const digit of PIN) await page.getByRole('button', { name: digit, exact: true }).click();
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    const status = page.getByTestId('status');
    await status.waitFor(TIMEOUT);
    return (await status.textContent()) ?? '';
  }

  it('says the tier a form needs, what each tier unlocks, and links to Verify, before anything is typed', async () => {
    await openAs(await signIn(world));
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByRole('heading', { name: 'Buying airtime needs Tier 1 verification' }).waitFor(TIMEOUT);
    assert.equal(await page.getByLabel('Phone number').count(), 0, 'no form to fill in vain');
    assert.ok(await page.getByText(/Send money to other billrail users/).isVisible());
    await screen(page, 'tier-gate');
    await page.getByRole('link', { name: 'Verify now' }).click();
    await page.waitForURL(/\/verify$/, TIMEOUT);
  });

  it('shows an instant success at once, typed on the PIN pad, not after the 3-second poll', async () => {
    const user = await buyer(world, 1_000);
    await openAs(user);
    // The page's timers are the test's: an answer that needed the 3 s poll would never come.
    await page.clock.install();
    const status = await buyAirtime(mtn('5'), '100');
    if (/^Pending/.test(status)) {
      // Pay's answer said processing; the provider has delivered since. Half a second later, it shows.
      await until(async () => {
        const row = await world.ctx.db
          .selectFrom('vtu_transactions')
          .select('status')
          .where('user_id', '=', user.userId)
          .executeTakeFirst();
        return row?.status === 'success';
      }, 'the sandbox delivering');
      await page.clock.runFor(1_000);
    }
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
  });

  it('says what happens next while a purchase is processing, and how long it usually takes', async () => {
    const status = await buyAirtime(mtn('2'), '100');
    assert.match(status, /Pending/);
    assert.match(status, /notify you/);
    assert.match(status, /within a few minutes/);
    await screen(page, 'purchase-processing');
    await advanceClock(world, 61);
    // The page's clock is still the test's (installed above): the next 3 s poll, now.
    await page.clock.runFor(3_500);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
  });
});
