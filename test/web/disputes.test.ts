import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { assertLedgerOk } from '../funding/support.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { get, ok, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// Disputes in the web client (API.md section 16), in headless Chromium: a person reports a problem
// under a purchase's receipt, an admin refunds it on the Disputes screen, and the person then sees
// the refund on the receipt, in the balance and in the history, and the outcome in the inbox.
// Keyboard only where the person acts; axe-core checks every screen.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000005';

describe('the web client: a dispute reported and refunded', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let admin: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}` } }));
    admin = await phonePage(browser);
    await injectSession(admin, world.baseUrl, (await signIn(world, ADMIN_PHONE)).refreshToken);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('the person reports under the receipt; the admin refunds; the refund shows in the balance and the transaction', async () => {
    const user: SignedIn = await buyer(world, 2_000);
    const purchase = await bought(world, user, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('0'),
      amount: 500,
    });
    assert.equal(purchase.status, 'success');
    const balanceBefore = ok(
      await get<{ balance: number }>(world, 'getWallet', {}, { token: user.accessToken }),
    ).balance;

    const phone = await signedInPhone(browser, world.baseUrl, user);
    await phone.goto(`${world.baseUrl}/transactions/${purchase.id}`);
    const report = phone.getByRole('button', { name: 'Report a problem' });
    await report.waitFor(TIMEOUT);
    // By keyboard: the button, the reason, the message, the send button.
    await report.focus();
    await phone.keyboard.press('Enter');
    const reason = phone.getByLabel('What went wrong?');
    await reason.waitFor(TIMEOUT);
    await reason.focus();
    await reason.selectOption('token_not_received');
    await phone.keyboard.press('Tab');
    await phone.keyboard.type('The airtime never arrived on my line.');
    await screen(phone, '90-dispute-report');
    await phone.getByRole('button', { name: 'Send report' }).focus();
    await phone.keyboard.press('Enter');
    await phone.getByTestId('dispute-status').filter({ hasText: 'we are looking into it' }).waitFor(TIMEOUT);
    assert.equal(
      await phone.getByRole('button', { name: 'Report a problem' }).count(),
      0,
      'one open at a time',
    );
    await screen(phone, '91-dispute-open');

    await admin.goto(`${world.baseUrl}/admin`);
    await admin.getByRole('link', { name: /^Disputes/ }).click();
    await admin.waitForURL(/\/admin\/disputes$/, TIMEOUT);
    const card = admin.getByTestId('admin-dispute').filter({ hasText: purchase.reference });
    await card.waitFor(TIMEOUT);
    assert.match((await card.textContent()) ?? '', /The airtime never arrived on my line\./);
    assert.match((await card.textContent()) ?? '', /Provider reference/);
    await card.getByTestId('refundable').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await screen(admin, '92-admin-disputes');
    await card
      .getByLabel('Reason (the person reads it)')
      .fill('The provider confirmed it failed to deliver.');
    await card.getByRole('button', { name: 'Refund' }).click();
    await admin.getByText('Nothing here.').waitFor(TIMEOUT);

    await runDomainEvents(world);
    await phone.reload();
    const outcome = phone.getByTestId('dispute-status').filter({ hasText: 'refunded to your wallet' });
    await outcome.waitFor(TIMEOUT);
    assert.match((await outcome.textContent()) ?? '', /₦/);
    await phone.getByText('Our answer: The provider confirmed it failed to deliver.').waitFor(TIMEOUT);
    await screen(phone, '93-dispute-refunded');

    await phone.goto(`${world.baseUrl}/`);
    const expected = new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' }).format(
      balanceBefore + purchase.amount,
    );
    await phone.getByTestId('balance').filter({ hasText: expected }).waitFor(TIMEOUT);

    await phone.goto(`${world.baseUrl}/transactions`);
    await phone.getByText(`Refund for the problem reported with ${purchase.reference}`).waitFor(TIMEOUT);
    await phone.goto(`${world.baseUrl}/inbox`);
    await phone.getByText('Problem resolved: refunded').first().waitFor(TIMEOUT);
    await screen(phone, '94-dispute-inbox');
    await assertLedgerOk(world);
  });
});
