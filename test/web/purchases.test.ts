import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { findPurchase } from '../../src/vtu/purchases.ts';
import { walletKobo } from '../funding/support.ts';
import { ok, post, signIn, type World } from '../helpers/world.ts';
import { advanceClock, type Buyer, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The bills and the other services of the web client in headless Chromium, driven as a person
// would: cable TV, electricity (a prepaid token shown; a meter the DisCo fails, refunded), a betting
// top-up (one paid at once, one pending until the sandbox clock's requery settles it while the page
// polls), exam pins (the pins shown; a price that changed after the summary opened, shown and
// confirmed again), a social boost priced to the kobo, and airtime sold for cash (a credit). Every
// purchase goes details → summary with the price → PIN last; the sandbox's last digit of the meter,
// card, customer id, phone or quantity decides each outcome (API.md sections 8 and 14). axe-core
// checks every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000003';
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

/** The price the summary shows, once it is known. */
async function shownPrice(page: Page): Promise<bigint> {
  const price = page.getByTestId('price').filter({ hasText: '₦' });
  await price.waitFor(TIMEOUT);
  return koboOf((await price.textContent()) ?? '');
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

describe('the web client: cable, electricity, betting, exam pins, social, airtime to cash', {
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
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}` } }));
    user = await buyer(world, 100_000);
    page = await phonePage(browser);
    // What the sign-in screen keeps: the refresh token; the page gets its access token itself.
    await injectSession(page, world.baseUrl, user.refreshToken);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('lists every service on the buy screen', async () => {
    await page.goto(`${world.baseUrl}/buy`);
    for (const [name, path] of [
      ['Airtime', 'airtime'],
      ['Data', 'data'],
      ['TV', 'cable'],
      ['Electricity', 'electricity'],
      ['Betting', 'betting'],
      ['Exam pins', 'education'],
      ['Social boosts', 'social'],
      ['Airtime to cash', 'airtime-to-cash'],
    ] as const) {
      const link = page.locator(`a[href="/buy/${path}"]`);
      await link.waitFor(TIMEOUT);
      assert.match((await link.textContent()) ?? '', new RegExp(`^${name}`));
    }
    await screen(page, '40-buy');
    // The first screen that asks the service refreshes the session: wait for it to finish, so that
    // the next test's reload does not cut the rotated refresh token off on its way to the page.
    const signedIn = page.waitForResponse((r) => r.url().includes('/_serverFn/getMe') && r.ok(), TIMEOUT);
    await page.getByRole('link', { name: /^TV/ }).click();
    await page.waitForURL(/\/buy\/cable$/, TIMEOUT);
    await signedIn;
  });

  it('pays a DStv bouquet, naming the card holder and showing the price before the PIN', async () => {
    await page.goto(`${world.baseUrl}/buy/cable`);
    await page.getByLabel('DStv').check();
    await page.getByLabel('Smartcard / IUC number').fill(accountEnding('5', 10));
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByRole('button', { name: 'Check smartcard' }).click();
    await page.getByTestId('card-holder').waitFor(TIMEOUT);
    await page.getByLabel('Change bouquet').check();
    await chooseFirst(page, 'Bouquet');
    await screen(page, '41-cable');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '42-cable-confirm');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    await screen(page, '43-cable-done');
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('buys a prepaid electricity token and shows it, copyable', async () => {
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Ikeja Electric').check();
    await page.getByLabel('Prepaid').check();
    await page.getByLabel('Meter number').fill(accountEnding('5'));
    await page.getByLabel('Amount (₦)').fill('500');
    await page.getByText('The minimum is ₦1,000.00').waitFor(TIMEOUT);
    assert.ok(await page.getByRole('button', { name: 'Continue' }).isDisabled(), 'below ₦1,000 cannot go on');
    await page.getByLabel('Amount (₦)').fill('2,000');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await screen(page, '44-electricity');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    assert.equal(price, 200_000n, 'no markup on electricity in this world: the face value');
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '45-electricity-confirm');
    await page.getByRole('button', { name: 'Pay ₦2,000.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    const token = (await page.getByTestId('token').textContent()) ?? '';
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.ok(purchase.token, 'the purchase carries a token');
    // Shown as it is typed into the meter: in groups of four.
    assert.equal(token, purchase.token.replace(/\D/g, '').replace(/(\d{4})(?=\d)/g, '$1 '));
    assert.match(token, /\d{4}/);
    assert.ok(purchase.units, 'the purchase carries the units bought');
    assert.equal(await page.getByTestId('units').textContent(), purchase.units);
    await page.getByRole('button', { name: 'Copy' }).waitFor(TIMEOUT);
    await screen(page, '46-electricity-token');
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('refunds an electricity purchase the DisCo fails (a meter ending in 1), and says so', async () => {
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Ikeja Electric').check();
    await page.getByLabel('Meter number').fill(accountEnding('1'));
    await page.getByLabel('Amount (₦)').fill('1500');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    assert.equal(await shownPrice(page), 150_000n);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Pay ₦1,500.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Failed: ₦1,500.00 is back in your wallet').waitFor(TIMEOUT);
    await screen(page, '47-electricity-failed');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).status, 'failed');
    assert.equal(await walletKobo(world, user.userId), expected, 'refunded in full');
  });

  it('funds a betting wallet, naming the account holder first', async () => {
    await page.goto(`${world.baseUrl}/buy/betting`);
    await page.getByLabel('Bet9ja').check();
    await page.getByLabel('Customer ID').fill(accountEnding('5', 8));
    await page.getByLabel('Amount (₦)').fill('1000');
    await screen(page, '48-betting');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    assert.equal(price, 100_000n);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '49-betting-confirm');
    await page.getByRole('button', { name: 'Pay ₦1,000.00' }).click();
    await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('follows a pending betting top-up (customer id ending in 2) until the requery settles it', async () => {
    await page.goto(`${world.baseUrl}/buy/betting`);
    await page.getByLabel('Bet9ja').check();
    await page.getByLabel('Customer ID').fill(accountEnding('2', 8));
    await page.getByLabel('Amount (₦)').fill('700');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    const price = await shownPrice(page);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    const id = await transactionId(page);
    await world.ctx.modules.vtu.api.sendEnded(id);
    await status(page, 'Pending: waiting for the provider').waitFor(TIMEOUT);
    await screen(page, '50-betting-pending');
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected, 'charged, not refunded while pending');
    // The requery runs on the sandbox clock; the page, polling every 3 s, sees it end.
    await advanceClock(world, 61);
    await status(page, 'Successful').waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('buys WAEC pins, showing the new price when it changed after the summary opened, and shows the pins', async () => {
    await page.goto(`${world.baseUrl}/buy/education`);
    await page.getByLabel('WAEC result checker').check();
    await page.getByLabel('How many').fill('2');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await screen(page, '51-exam-pins');
    await page.getByRole('button', { name: 'Continue' }).click();
    const quoted = await shownPrice(page);
    assert.equal(quoted, 780_000n, 'two at the price listEducationPins gives, no markup yet');
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '52-exam-pins-confirm');

    // Meanwhile the price goes up (₦50 a pin): the service refuses the old one, charging nothing.
    const admin = await signIn(world, ADMIN_PHONE);
    ok(await post(world, 'adminSetMarkup', { service: 'education', flat: 50 }, { token: admin.accessToken }));
    await page.getByRole('button', { name: 'Pay ₦7,800.00' }).click();
    await page.getByRole('alert').filter({ hasText: 'The price is now ₦7,900.00' }).waitFor(TIMEOUT);
    assert.equal(await shownPrice(page), 790_000n);
    await screen(page, '53-exam-pins-price-changed');
    assert.equal(await walletKobo(world, user.userId), expected, 'nothing charged at the old price');

    // The new price is confirmed with the PIN again.
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Pay ₦7,900.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    const purchase = await findPurchase({ db: world.ctx.db }, user.userId, id);
    assert.equal(purchase.pins?.length, 2);
    for (const pin of purchase.pins ?? []) await page.getByText(pin, { exact: true }).waitFor(TIMEOUT);
    assert.equal(await page.getByRole('button', { name: 'Copy' }).count(), 2);
    await screen(page, '54-exam-pins-shown');
    expected -= 790_000n;
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('orders Instagram likes at the rate per 1,000, rounded up to the kobo', async () => {
    await page.goto(`${world.baseUrl}/buy/social`);
    const option = page.getByRole('option', { name: /^Instagram Likes \[Instant\]/ });
    await option.waitFor({ state: 'attached', ...TIMEOUT });
    await page.getByLabel('Service').selectOption({ label: (await option.textContent()) ?? '' });
    await page.getByLabel('Link').fill('https://instagram.com/p/billrail');
    await page.getByLabel('How many').fill('105');
    await screen(page, '55-social');
    await page.getByRole('button', { name: 'Continue' }).click();
    // ₦320.50 per 1,000 × 105 = ₦33.6525, rounded up: ₦33.66.
    assert.equal(await shownPrice(page), 3_366n);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '56-social-confirm');
    await page.getByRole('button', { name: 'Pay ₦33.66' }).click();
    await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    expected -= 3_366n;
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('sells airtime for cash: where to share it and the payout before the PIN, then a credit', async () => {
    await page.goto(`${world.baseUrl}/buy/airtime-to-cash`);
    const line = mtn('5');
    await page.getByLabel('Your phone number').fill(line);
    await page.getByText('MTN number').waitFor(TIMEOUT);
    await page.getByLabel('Airtime to sell (₦)').fill('1000');
    await screen(page, '57-airtime-to-cash');
    await page.getByRole('button', { name: 'Continue' }).click();
    const payout = page.getByTestId('price').filter({ hasText: '₦' });
    await payout.waitFor(TIMEOUT);
    const sendTo = (await page.getByTestId('send-to').textContent()) ?? '';
    assert.match(sendTo, /^0\d{10}$/);
    const summary = (await page.getByRole('definition').allTextContents()).join(' | ');
    assert.equal(summary, `₦1,000.00 MTN airtime | ${line} | ${sendTo} | 80% | ₦800.00`);
    await page.getByText('You receive').waitFor(TIMEOUT);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '58-airtime-to-cash-confirm');
    assert.equal(await walletKobo(world, user.userId), expected, 'nothing debited');
    await page.getByRole('button', { name: 'Sell for ₦800.00' }).click();
    const id = await transactionId(page);
    await status(page, 'Successful').waitFor(TIMEOUT);
    await page.getByTestId('receipt-amount').filter({ hasText: '+₦800.00' }).waitFor(TIMEOUT);
    await screen(page, '59-airtime-to-cash-credited');
    assert.equal((await findPurchase({ db: world.ctx.db }, user.userId, id)).direction, 'credit');
    expected += 80_000n;
    assert.equal(await walletKobo(world, user.userId), expected);
  });
});
