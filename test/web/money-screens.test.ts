import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { walletKobo } from '../funding/support.ts';
import { ok, post, signIn, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { fund, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The web client's savings, rewards, send-money, inbox and settings screens in headless Chromium,
// driven as a person would: a lock made and broken with the penalty shown first, the daily check-in,
// a transfer to another user by phone, a poll vote, and signing out. The person signs in through the
// API and the page is given the refresh token the sign-in screen would have kept (that screen has
// its own journey test). axe-core checks every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };

describe('the web client: savings, rewards, transfers, inbox', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let userId: string;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: '+2348030000001' } }));
    page = await phonePage(browser);
    const user = await userAtTier(world, 2);
    userId = user.userId;
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    await fund(world, userId, 10_000);
    // What the sign-in screen keeps: the refresh token; the page gets its access token itself.
    await injectSession(page, world.baseUrl, user.refreshToken);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('locks savings with the maturity date shown, and breaks the lock with the penalty shown first', async () => {
    await page.goto(`${world.baseUrl}/savings`);
    await page.getByLabel('Amount (₦)').fill('2000');
    await page.getByLabel('Days').fill('30');
    await page.getByText(/^Comes back on /).waitFor(TIMEOUT);
    await screen(page, '20-savings');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Lock ₦2,000.00' }).click();
    await page.getByText(/^₦2,000\.00 is locked for 30 days\./).waitFor(TIMEOUT);
    const lock = page.getByRole('list', { name: 'Your locks' }).getByRole('listitem').first();
    await lock.getByText('Locked', { exact: true }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 800_000n);

    await page.getByRole('button', { name: 'Break early' }).click();
    await page
      .getByText('Breaking now keeps a 5% penalty of ₦100.00; you get ₦1,900.00 back.')
      .waitFor(TIMEOUT);
    await screen(page, '21-savings-break');
    await page.getByRole('button', { name: 'Break and pay the penalty' }).click();
    await lock.getByText('Broken early', { exact: true }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 990_000n);
  });

  it('checks in once a day and shows the streak', async () => {
    await page.goto(`${world.baseUrl}/rewards`);
    await page.getByRole('button', { name: 'Check in for ₦10.00' }).click();
    await page.getByTestId('streak').filter({ hasText: 'Streak: 1 day' }).waitFor(TIMEOUT);
    await page.getByText(/^Checked in today/).waitFor(TIMEOUT);
    await screen(page, '22-rewards');
  });

  it('sends money to another user, showing their masked name before the PIN', async () => {
    // At Tier 2, so the name shown is a verified one (below it, it is marked as typed, not verified).
    const friend = await kycUser(world, { firstName: 'Chioma', lastName: 'Eze' });
    await userAtTier(world, 2, friend);
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').fill(friend.phone);
    await page.getByText('Sending to Chioma E.').waitFor(TIMEOUT);
    await page.getByText('Name verified with their NIN.').waitFor(TIMEOUT);
    await page.getByLabel('Amount (₦)').fill('1500');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '23-transfer');
    await page.getByRole('button', { name: 'Send ₦1,500.00' }).click();
    await page.getByRole('heading', { name: 'Money sent' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, friend.userId), 150_000n);
    assert.equal(await walletKobo(world, userId), 840_000n);
    // A reload shows the receipt again, not an empty form that invites sending twice. The reloaded
    // page refreshes its session (its access token lived in memory): leaving it before that answer
    // arrives would lose the rotated refresh token, and the service takes the next use of the old one
    // for a reuse and ends the session (web/src/api/session.ts), failing every screen after this one.
    const refreshed = page.waitForResponse(
      (response) => response.url().includes('/_serverFn/refreshSession') && response.ok(),
      TIMEOUT,
    );
    await page.reload();
    await refreshed;
    await page.getByRole('heading', { name: 'Money sent' }).waitFor(TIMEOUT);
    await page.getByText('Chioma E.', { exact: false }).first().waitFor(TIMEOUT);
    assert.equal(await page.getByLabel('Their phone number').count(), 0);
    // Opening Send money afresh starts a new transfer.
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').waitFor(TIMEOUT);
  });

  it('warns before sending to a name nobody verified, or to a person who gave none', async () => {
    const typed = await userAtTier(
      world,
      1,
      await kycUser(world, { firstName: 'Billrail', lastName: 'Support' }),
    );
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').fill(typed.phone);
    await page.getByText('Sending to Billrail S.').waitFor(TIMEOUT);
    await page.getByText(/^This name is the one they typed, not verified with an NIN\./).waitFor(TIMEOUT);
    await screen(page, '23b-transfer-unverified');

    const nameless = await userAtTier(world, 1, await kycUser(world, null));
    await page.getByLabel('Their phone number').fill(nameless.phone);
    await page.getByText(/^This person has not given a name, and none is verified\./).waitFor(TIMEOUT);
  });

  it('votes in a poll and shows the tallies', async () => {
    const admin = await signIn(world, '08030000001');
    ok(
      await post(
        world,
        'adminCreateBroadcast',
        {
          title: 'Which service next?',
          body: 'Tell us what to add.',
          poll: { question: 'What should we add?', options: ['Insurance', 'Flights'] },
        },
        { token: admin.accessToken },
      ),
    );
    await page.goto(`${world.baseUrl}/inbox`);
    await page.getByRole('button', { name: 'Flights' }).click();
    await page.getByText('Flights (your vote)').waitFor(TIMEOUT);
    await screen(page, '24-inbox');
  });

  it('shows the permanent account number for funding by bank transfer at Tier 2', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    const account = page.getByTestId('dedicated-account');
    await account.waitFor(TIMEOUT);
    assert.match((await account.textContent()) ?? '', /Account number\d{10}/);
    await screen(page, '26-fund-by-transfer');
  });

  it('signs out at the service and comes back to sign-in', async () => {
    await page.goto(`${world.baseUrl}/settings`);
    await screen(page, '25-settings');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    assert.equal(await page.evaluate(() => localStorage.getItem('billrail.refresh')), null);
    await page.goto(`${world.baseUrl}/savings`);
    await page.waitForURL(/\/sign-in\?next=/, TIMEOUT);
  });
});
