import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findPurchase } from '../../src/vtu/purchases.ts';
import { walletKobo } from '../funding/support.ts';
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

// The sandbox outcomes the other browser tests leave out, bought through the screens as a person
// would: a data bundle failed (refunded) and pending, a cable bouquet failed (refunded) and pending
// until the requery fails it (refunded), an electricity token pending, a betting top-up failed
// (refunded), and exam pins failed (refunded) and pending. purchases.test.ts and journeys.test.ts
// cover the rest of "each of the six purchases with a success, a failure with refund and a pending
// outcome". The last digit of the recipient decides each outcome (API.md section 8): the phone for
// data and exam pins (the bills sandbox reads exam pins' outcome from the phone, not from a
// quantity or profile id), the smartcard/IUC for cable, the meter for electricity, the customer id
// for betting; 1 fails (refunded), 2 is pending then delivered on the requery, 3 is pending then
// failed (refunded) on it. A pending purchase settles when the sandbox clock moves past the requery
// and the transaction page, polling every 3 s, shows it. axe-core checks every screen; each is
// saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const TRANSACTION_URL = /\/transactions\/[0-9a-f-]{36}$/;

/** A sandbox account number (meter, smartcard, customer id) ending in the digit that decides the outcome. */
const accountEnding = (last: string, length = 11) =>
  `${String(Math.floor(Math.random() * 10 ** (length - 1))).padStart(length - 1, '0')}${last}`;

/** Naira as the screens write them (₦1,234.56), in kobo. */
function koboOf(text: string): bigint {
  const match = /₦([\d,]+)\.(\d{2})/.exec(text);
  assert.ok(match, `no naira amount in "${text}"`);
  return BigInt(match[1]!.replace(/,/g, '')) * 100n + BigInt(match[2]!);
}

/** The price the summary shows, once it is known: in kobo, and as written (₦1,234.56). */
async function shownPrice(page: Page): Promise<{ kobo: bigint; text: string }> {
  const price = page.getByTestId('price').filter({ hasText: '₦' });
  await price.waitFor(TIMEOUT);
  const content = (await price.textContent()) ?? '';
  return { kobo: koboOf(content), text: /₦[\d,]+\.\d{2}/.exec(content)![0] };
}

/** The purchase's id, once the page has moved to it. */
async function transactionId(page: Page): Promise<string> {
  await page.waitForURL(TRANSACTION_URL, TIMEOUT);
  return new URL(page.url()).pathname.split('/').at(-1)!;
}

const status = (page: Page, text: string) => page.getByTestId('status').filter({ hasText: text });

/** Picks the first real option of a select once its options have loaded. */
async function chooseFirst(page: Page, label: string): Promise<void> {
  const select = page.getByLabel(label, { exact: true });
  await select
    .locator('option')
    .nth(1)
    .waitFor({ state: 'attached', ...TIMEOUT });
  await select.selectOption({ index: 1 });
}

describe('the web client: the failed and pending outcomes of data, cable, electricity, betting, exam pins', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: Buyer;
  /** What the wallet should hold, in kobo, as the purchases go. */
  let expected = 10_000_000n;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    user = await buyer(world, 100_000);
    page = await phonePage(browser);
    // What the sign-in screen keeps: the refresh token; the page gets its access token itself.
    await injectSession(page, world.baseUrl, user.refreshToken);
    // The first screen that asks the service refreshes the session: wait for it to finish, so that
    // the next test's navigation does not cut the rotated refresh token off on its way to the page.
    await page.goto(`${world.baseUrl}/buy`);
    const signedIn = page.waitForResponse((r) => r.url().includes('/_serverFn/getMe') && r.ok(), TIMEOUT);
    await page.getByRole('link', { name: /^TV/ }).click();
    await page.waitForURL(/\/buy\/cable$/, TIMEOUT);
    await signedIn;
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** Fills the data screen for `phone` with the first plan, and answers the price on the summary. */
  async function dataSummary(phone: string) {
    await page.goto(`${world.baseUrl}/buy/data`);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByText('MTN number').waitFor(TIMEOUT);
    // The first plan card of the first type (the radio is visually hidden: a finger taps its card).
    const plan = page.getByRole('group', { name: 'Plan', exact: true }).locator('label').first();
    await plan.click(TIMEOUT);
    await page.getByRole('button', { name: 'Continue' }).click();
    const price = await shownPrice(page);
    await page.getByLabel('Transaction PIN').fill(PIN);
    return price;
  }

  it('refunds a data bundle the vendor fails (a phone ending in 1), and says so', async () => {
    const price = await dataSummary(mtn('1'));
    await screen(page, '80-data-confirm');
    await page.getByRole('button', { name: `Pay ${price.text}` }).click();
    const id = await transactionId(page);
    await status(page, `Failed: ${price.text} is back in your wallet`).waitFor(TIMEOUT);
    await screen(page, '81-data-failed');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).status, 'failed');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full');
  });

  it('follows a pending data bundle (a phone ending in 2) until the requery delivers it', async () => {
    const price = await dataSummary(mtn('2'));
    await page.getByRole('button', { name: `Pay ${price.text}` }).click();
    const id = await transactionId(page);
    await world.ctx.modules.vtu.api.sendEnded(id);
    await status(page, 'Pending: waiting for the provider').waitFor(TIMEOUT);
    await screen(page, '82-data-pending');
    expected -= price.kobo;
    assert.equal(await walletKobo(world, user.userId), expected, 'charged, not refunded while pending');
    // The requery runs on the sandbox clock; the page, polling every 3 s, sees it end.
    await advanceClock(world, 61);
    await status(page, 'Successful').waitFor(TIMEOUT);
    await screen(page, '83-data-settled');
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  /** Fills the cable screen for a smartcard, names the holder on the summary, and answers the price. */
  async function cableSummary(card: string) {
    await page.goto(`${world.baseUrl}/buy/cable`);
    await page.getByLabel('DStv').check();
    await page.getByLabel('Smartcard / IUC number').fill(card);
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByRole('button', { name: 'Check smartcard' }).click();
    await page.getByLabel('Change bouquet').check();
    await chooseFirst(page, 'Bouquet');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    await page.getByLabel('Transaction PIN').fill(PIN);
    return price;
  }

  it('refunds a cable bouquet the provider fails (a smartcard ending in 1), and says so', async () => {
    const price = await cableSummary(accountEnding('1', 10));
    await screen(page, '84-cable-confirm');
    await page.getByRole('button', { name: `Pay ${price.text}` }).click();
    const id = await transactionId(page);
    await status(page, `Failed: ${price.text} is back in your wallet`).waitFor(TIMEOUT);
    await screen(page, '85-cable-failed');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).status, 'failed');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full');
  });

  it('follows a pending cable bouquet (a smartcard ending in 3) until the requery fails it, refunded', async () => {
    const price = await cableSummary(accountEnding('3', 10));
    await page.getByRole('button', { name: `Pay ${price.text}` }).click();
    const id = await transactionId(page);
    await world.ctx.modules.vtu.api.sendEnded(id);
    await status(page, 'Pending: waiting for the provider').waitFor(TIMEOUT);
    await screen(page, '86-cable-pending');
    assert.equal(
      await walletKobo(world, user.userId),
      expected - price.kobo,
      'charged, not refunded while pending',
    );
    await advanceClock(world, 61);
    await status(page, `Failed: ${price.text} is back in your wallet`).waitFor(TIMEOUT);
    await screen(page, '87-cable-pending-failed');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).status, 'failed');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full once it failed');
  });

  it('follows a pending electricity token (a meter ending in 2) until the requery delivers it', async () => {
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Ikeja Electric').check();
    await page.getByLabel('Prepaid').check();
    await page.getByLabel('Meter number').fill(accountEnding('2'));
    await page.getByLabel('Amount (₦)').fill('1200');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    assert.equal(price.kobo, 120_000n, 'no markup on electricity in this world: the face value');
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '88-electricity-confirm');
    await page.getByRole('button', { name: 'Pay ₦1,200.00' }).click();
    const id = await transactionId(page);
    await world.ctx.modules.vtu.api.sendEnded(id);
    await status(page, 'Pending: waiting for the provider').waitFor(TIMEOUT);
    await screen(page, '89-electricity-pending');
    expected -= price.kobo;
    assert.equal(await walletKobo(world, user.userId), expected, 'charged, not refunded while pending');
    await advanceClock(world, 61);
    await status(page, 'Successful').waitFor(TIMEOUT);
    // The token arrives with the requery that delivers it.
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.ok(purchase.token, 'the delivered purchase carries a token');
    // Shown as it is typed into the meter: in groups of four.
    const grouped = purchase.token.replace(/\D/g, '').replace(/(\d{4})(?=\d)/g, '$1 ');
    await page.getByTestId('token').filter({ hasText: grouped }).waitFor(TIMEOUT);
    await screen(page, '90-electricity-settled');
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('refunds a betting top-up the provider fails (a customer id ending in 1), and says so', async () => {
    await page.goto(`${world.baseUrl}/buy/betting`);
    await page.getByLabel('Bet9ja').check();
    await page.getByLabel('Customer ID').fill(accountEnding('1', 8));
    await page.getByLabel('Amount (₦)').fill('800');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    assert.equal((await shownPrice(page)).kobo, 80_000n);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '91-betting-confirm');
    await page.getByRole('button', { name: 'Pay ₦800.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Failed: ₦800.00 is back in your wallet').waitFor(TIMEOUT);
    await screen(page, '92-betting-failed');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).status, 'failed');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full');
  });

  /** Fills the exam pins screen for one WAEC pin texted to `phone`, and answers the price. */
  async function examSummary(phone: string) {
    await page.goto(`${world.baseUrl}/buy/education`);
    await page.getByLabel('WAEC result checker').check();
    await page.getByLabel('How many').fill('1');
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Continue' }).click();
    const price = await shownPrice(page);
    assert.equal(price.kobo, 390_000n, 'one at the list price, no markup in this world');
    await page.getByLabel('Transaction PIN').fill(PIN);
    return price;
  }

  it('refunds exam pins the provider fails (texted to a phone ending in 1), and says so', async () => {
    await examSummary(mtn('1'));
    await screen(page, '93-exam-pins-confirm');
    await page.getByRole('button', { name: 'Pay ₦3,900.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Failed: ₦3,900.00 is back in your wallet').waitFor(TIMEOUT);
    await screen(page, '94-exam-pins-failed');
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.equal(purchase.status, 'failed');
    assert.equal(purchase.pins?.length ?? 0, 0, 'no pins for a failed purchase');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full');
  });

  it('follows pending exam pins (texted to a phone ending in 2) until the requery delivers them', async () => {
    await examSummary(mtn('2'));
    await page.getByRole('button', { name: 'Pay ₦3,900.00' }).click();
    const id = await transactionId(page);
    await world.ctx.modules.vtu.api.sendEnded(id);
    await status(page, 'Pending: waiting for the provider').waitFor(TIMEOUT);
    await screen(page, '95-exam-pins-pending');
    expected -= 390_000n;
    assert.equal(await walletKobo(world, user.userId), expected, 'charged, not refunded while pending');
    await advanceClock(world, 61);
    await status(page, 'Successful').waitFor(TIMEOUT);
    // The pins arrive with the requery that delivers them.
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.equal(purchase.pins?.length, 1);
    for (const pin of purchase.pins ?? []) await page.getByText(pin, { exact: true }).waitFor(TIMEOUT);
    await screen(page, '96-exam-pins-settled');
    assert.equal(await walletKobo(world, user.userId), expected);
  });
});
