import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { withoutPrice } from '../../src/shared/display-names.ts';
import { findPurchase } from '../../src/vtu/purchases.ts';
import { walletKobo } from '../funding/support.ts';
import { get, ok, post, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { userAtTier } from '../kyc/kyc-support.ts';
import { buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  openBrowserWorld,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// Electricity, cable TV, betting and exam pins built from the shared payment pieces (issue 26), in
// headless Chromium at 360×800 as a person would use them: a meter saved as "Home" with its DisCo
// and type, offered next time and bought again with one tap, the token shown; a smartcard's current
// bouquet renewed at the catalogue's price; a betting account named before the PIN; exam pins priced
// by listEducationPins and charged at that price; and each form behind the Tier 1 gate for a person
// who has not verified. axe-core checks every screen; each is saved as a screenshot in light and dark.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000003';
const TRANSACTION_URL = /\/transactions\/[0-9a-f-]{36}$/;

type Customer = { name: string; details: Record<string, string> };
type Beneficiary = { label: string; recipient: string; details?: Record<string, string> };
type CablePlan = { plan_id: string; name: string; amount: number };

/** A sandbox account number (meter, smartcard, customer id) ending in the digit that decides the outcome. */
const accountEnding = (last: string, length = 11) =>
  `${String(Math.floor(Math.random() * 10 ** (length - 1))).padStart(length - 1, '0')}${last}`;

/** A token as the receipt shows it: in groups of four, as it is typed into the meter. */
const grouped = (token: string) => token.replace(/\D/g, '').replace(/(\d{4})(?=\d)/g, '$1 ');

/** Naira in kobo. */
const kobo = (naira: number) => BigInt(Math.round(naira * 100));

describe('the web client: electricity, cable, betting and exam pins', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: SignedIn;
  /** The same person's session for reading through the API (the page rotates its own). */
  let api: SignedIn;
  let admin: SignedIn;
  /** What the wallet should hold, in kobo, as the payments go. */
  let expected = 10_000_000n;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({
      env: {
        ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}`,
        // One buyer pays every bill of this file in one Lagos day: a random smartcard's bouquet can
        // take it past Tier 1's CBN limit (N50,000), and the confirm screen then shows the limit in place
        // of the PIN. The limits have their own web tests (limits-journey.test.ts).
        LIMIT_TIER1_DAILY: 'none',
      },
    }));
    user = await buyer(world, 100_000);
    page = await signedInPhone(browser, world.baseUrl, user);
    api = await signInAgain(world, user.phone);
    admin = await signIn(world, ADMIN_PHONE);
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** The price the summary shows, once known, in kobo. */
  async function shownPrice(): Promise<bigint> {
    const price = page.getByTestId('price').filter({ hasText: '₦' });
    await price.waitFor(TIMEOUT);
    const [, naira, fraction] = /₦([\d,]+)\.(\d{2})/.exec((await price.textContent()) ?? '')!;
    return BigInt(naira!.replace(/,/g, '')) * 100n + BigInt(fraction!);
  }

  /** Pays the open summary with the PIN; answers the purchase once it has succeeded, and checks the wallet. */
  async function payAndSucceed() {
    const price = await shownPrice();
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(TRANSACTION_URL, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected);
    const id = new URL(page.url()).pathname.split('/').at(-1)!;
    return { price, purchase: await findPurchase({ db: world.ctx.db }, user.userId, id) };
  }

  const beneficiaries = async (service: string) =>
    ok(
      await get<{ items: Beneficiary[] }>(
        world,
        'listBeneficiaries',
        { service },
        { token: api.accessToken },
      ),
    ).items;

  it('offers every service on the buy menu as a tile with its icon', async () => {
    await page.goto(`${world.baseUrl}/buy`);
    const tiles = page.getByRole('main').getByRole('listitem').getByRole('link');
    await tiles.first().waitFor(TIMEOUT);
    assert.deepEqual(
      await tiles.evaluateAll((links) =>
        links.map((a) => [a.getAttribute('href'), a.querySelector('svg') !== null]),
      ),
      ['airtime', 'data', 'electricity', 'cable', 'betting', 'education', 'social', 'airtime-to-cash'].map(
        (s) => [`/buy/${s}`, true],
      ),
    );
    await screen(page, 'pb-00-buy');
  });

  it('saves a meter as "Home" with its DisCo and type, then one tap fills the form again and the token shows', async () => {
    const meter = accountEnding('5');
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Eko Electric').check();
    await page.getByLabel('Meter number').fill(meter);
    await page.getByText('At least ₦1,000.00').waitFor(TIMEOUT);
    await page.getByRole('button', { name: '₦2,000', exact: true }).click();
    assert.equal(await page.getByLabel('Amount (₦)').inputValue(), '2000');
    await screen(page, 'pb-01-electricity');
    await page.getByRole('button', { name: 'Continue' }).click();

    // The name on the meter, from the DisCo, before the PIN.
    const customer = ok(
      await post<Customer>(
        world,
        'verifyMeter',
        { meter, plan: 'eko-electric', type: 'prepaid' },
        { token: api.accessToken },
      ),
    );
    await page.getByTestId('customer').filter({ hasText: customer.name }).waitFor(TIMEOUT);
    await page.getByText('Eko Electric', { exact: true }).waitFor(TIMEOUT);
    await page.getByLabel('Save as (optional)').fill('Home');
    await screen(page, 'pb-02-electricity-confirm');
    const first = await payAndSucceed();
    assert.equal(first.price, 200_000n, 'no markup on electricity in this world: the face value');
    assert.ok(first.purchase.token, 'a prepaid purchase carries its token');
    await page
      .getByTestId('token')
      .filter({ hasText: grouped(first.purchase.token) })
      .waitFor(TIMEOUT);
    // The receipt says whose meter it is (Eko's answer names nobody: the name is the look-up's), on
    // screen and in the PDF it saves.
    assert.equal(first.purchase.customerName, customer.name);
    const receipt = page.getByRole('region', { name: 'Receipt' });
    await receipt
      .getByRole('term')
      .filter({ hasText: /^Customer$/ })
      .waitFor(TIMEOUT);
    await receipt.getByRole('definition').filter({ hasText: customer.name }).waitFor(TIMEOUT);
    const pdfDownload = page.waitForEvent('download');
    await receipt.getByRole('button', { name: 'Save PDF' }).click();
    const pdf = await readFile((await (await pdfDownload).path())!);
    assert.ok(pdf.toString('latin1').includes(customer.name), 'the PDF names the customer');
    assert.deepEqual(
      (await beneficiaries('electricity')).map(({ label, recipient, details }) => ({
        label,
        recipient,
        details,
      })),
      [{ label: 'Home', recipient: meter, details: { disco: 'eko-electric', type: 'prepaid' } }],
    );

    // Next time the saved meter is offered first; one tap fills the meter, its DisCo and its type.
    await page.goto(`${world.baseUrl}/buy/electricity`);
    const home = page.getByRole('button', { name: /^Home/ });
    await home.waitFor(TIMEOUT);
    assert.match((await home.textContent()) ?? '', /Eko Electric prepaid/);
    await screen(page, 'pb-03-electricity-saved');
    await home.click();
    assert.equal(await page.getByLabel('Meter number').inputValue(), meter);
    assert.ok(await page.getByRole('radio', { name: 'Eko Electric' }).isChecked());
    assert.ok(await page.getByRole('radio', { name: 'Prepaid' }).isChecked());
    await page.getByLabel('Amount (₦)').fill('1500');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Saved as Home').waitFor(TIMEOUT);
    const again = await payAndSucceed();
    assert.equal(again.price, 150_000n);
    assert.equal(again.purchase.recipient, meter);
    assert.ok(again.purchase.token);
    assert.notEqual(again.purchase.token, first.purchase.token, 'a new token for a new purchase');
    await page
      .getByTestId('token')
      .filter({ hasText: grouped(again.purchase.token) })
      .waitFor(TIMEOUT);
    await screen(page, 'pb-04-electricity-token');
  });

  it('offers a meter paid before but not saved, and one tap fills its DisCo and type too', async () => {
    const meter = accountEnding('5');
    await page.goto(`${world.baseUrl}/buy/electricity`);
    await page.getByLabel('Ikeja Electric').check();
    await page.getByRole('radio', { name: 'Postpaid' }).check();
    await page.getByLabel('Meter number').fill(meter);
    await page.getByLabel('Amount (₦)').fill('1000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').waitFor(TIMEOUT);
    await payAndSucceed();

    await page.goto(`${world.baseUrl}/buy/electricity`);
    const recent = page.getByRole('button', { name: new RegExp(`^${meter}`) });
    await recent.waitFor(TIMEOUT);
    assert.match((await recent.textContent()) ?? '', /Ikeja Electric postpaid/);
    await recent.click();
    assert.equal(await page.getByLabel('Meter number').inputValue(), meter);
    assert.ok(await page.getByRole('radio', { name: 'Ikeja Electric' }).isChecked());
    assert.ok(await page.getByRole('radio', { name: 'Postpaid' }).isChecked());
  });

  it("renews a smartcard's current bouquet at the catalogue's price, and Buy again opens it as a renewal", async () => {
    // A cable markup, so that the price is the catalogue's retail one, not the provider's.
    ok(await post(world, 'adminSetMarkup', { service: 'cable', flat: 100 }, { token: admin.accessToken }));
    const card = accountEnding('5', 10);
    const customer = ok(
      await post<Customer>(
        world,
        'verifyCableIUC',
        { identifier: 'dstv', iuc: card },
        { token: api.accessToken },
      ),
    );
    const plans = ok(
      await get<{ items: CablePlan[] }>(
        world,
        'listCablePlans',
        { identifier: 'dstv' },
        { token: api.accessToken },
      ),
    ).items;
    const current = plans.find((p) => p.plan_id === customer.details.Current_Bouquet_Code);
    assert.ok(current, 'the sandbox card is on a bouquet the catalogue sells');

    await page.goto(`${world.baseUrl}/buy/cable`);
    await page.getByLabel('DStv').check();
    await page.getByLabel('Smartcard / IUC number').fill(card);
    await page.getByRole('button', { name: 'Check smartcard' }).click();
    await page.getByTestId('card-holder').filter({ hasText: customer.name }).waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('current-bouquet').textContent(), withoutPrice(current.name));
    const renew = page.getByRole('radio', { name: /^Renew current bouquet/ });
    assert.ok(await renew.isChecked(), 'renewing is offered first');
    await screen(page, 'pb-05-cable-renew');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('customer').filter({ hasText: customer.name }).waitFor(TIMEOUT);
    assert.equal(await shownPrice(), kobo(current.amount));
    await screen(page, 'pb-06-cable-renew-confirm');
    const { purchase } = await payAndSucceed();
    assert.equal(purchase.amount, current.amount);
    assert.deepEqual([purchase.order?.plan, purchase.order?.type], [current.plan_id, 'renew']);
    const order = [...world.ctx.sandbox!.state.bills.orders.values()].find((o) => o.recipient === card);
    assert.match(order?.productName ?? '', /Renewal$/, 'the provider was asked to renew');

    await page.getByRole('link', { name: 'Buy again' }).click();
    await page.waitForURL(/\/buy\/cable\?/, TIMEOUT);
    assert.equal(await page.getByLabel('Smartcard / IUC number').inputValue(), card);
    assert.ok(await page.getByRole('radio', { name: 'DStv' }).isChecked());
    await page.getByRole('button', { name: 'Check smartcard' }).click();
    await renew.waitFor(TIMEOUT);
    assert.ok(await renew.isChecked());
  });

  it('names a betting account before the PIN, and keeps it when saved', async () => {
    const account = accountEnding('5', 8);
    await page.goto(`${world.baseUrl}/buy/betting`);
    await page.getByLabel('SportyBet').check();
    await page.getByLabel('Customer ID').fill(account);
    await page.getByLabel('Amount (₦)').fill('50');
    await page.getByText('The minimum is ₦100.00').waitFor(TIMEOUT);
    assert.ok(await page.getByRole('button', { name: 'Continue' }).isDisabled());
    await page.getByLabel('Amount (₦)').fill('1000');
    await screen(page, 'pb-07-betting');
    await page.getByRole('button', { name: 'Continue' }).click();
    const customer = ok(
      await post<Customer>(
        world,
        'verifyBetAccount',
        { betting_company: 'sportybet', customer_id: account },
        { token: api.accessToken },
      ),
    );
    await page.getByTestId('customer').filter({ hasText: customer.name }).waitFor(TIMEOUT);
    await page.getByLabel('Save as (optional)').fill('Weekend');
    await screen(page, 'pb-08-betting-confirm');
    const { price, purchase } = await payAndSucceed();
    assert.equal(price, 100_000n);
    assert.equal(purchase.recipient, account);
    assert.deepEqual(
      (await beneficiaries('betting')).map(({ label, recipient, details }) => ({
        label,
        recipient,
        details,
      })),
      [{ label: 'Weekend', recipient: account, details: { company: 'sportybet' } }],
    );
  });

  it('says which account was not found, before any PIN', async () => {
    await page.goto(`${world.baseUrl}/buy/betting`);
    await page.getByLabel('Bet9ja').check();
    // The sandbox knows no account ending in 9.
    const account = accountEnding('9', 8);
    await page.getByLabel('Customer ID').fill(account);
    await page.getByLabel('Amount (₦)').fill('500');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: `Bet9ja has no customer ID ${account}` })
      .waitFor(TIMEOUT);
    assert.equal(await page.getByLabel('Transaction PIN').count(), 0);
    assert.equal(await walletKobo(world, user.userId), expected);
  });

  it('prices exam pins from listEducationPins, shows the total once, and charges it', async () => {
    ok(
      await post(world, 'adminSetMarkup', { service: 'education', percent: 2 }, { token: admin.accessToken }),
    );
    const [neco] = ok(
      await get<{ items: Array<{ variation: string; name: string; amount: number }> }>(
        world,
        'listEducationPins',
        { exam: 'neco' },
        { token: api.accessToken },
      ),
    ).items;
    assert.ok(neco);
    assert.equal(neco.amount, 1_326, '₦1,300.00 and the 2 % markup');

    await page.goto(`${world.baseUrl}/buy/education`);
    await page.getByLabel('NECO result checker').check();
    const each = page.getByRole('radio', { name: /₦1,326\.00 each$/ });
    await each.waitFor(TIMEOUT);
    assert.ok(await each.isChecked(), 'the one NECO pin is chosen already');
    await page.getByLabel('How many').fill('11');
    await page.getByText('Type a number from 1 to 10').waitFor(TIMEOUT);
    await page.getByLabel('How many').fill('2');
    await page.getByLabel('Phone number').fill(mtn('5'));
    await screen(page, 'pb-09-exam-pins');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('2 × ₦1,326.00').waitFor(TIMEOUT);
    assert.equal(await shownPrice(), 2n * kobo(neco.amount));
    assert.equal(await page.getByText('₦2,652.00', { exact: true }).count(), 1, 'the total is written once');
    await screen(page, 'pb-10-exam-pins-confirm');
    const { purchase } = await payAndSucceed();
    assert.equal(purchase.amount, 2_652);
    assert.equal(purchase.pins?.length, 2);
    for (const pin of purchase.pins ?? []) await page.getByText(pin, { exact: true }).waitFor(TIMEOUT);
  });

  it('puts every bill behind the Tier 1 gate for a person who has not verified, with the way to Verify', async () => {
    const unverified = await userAtTier(world, 0);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: unverified.accessToken }));
    const phone = await signedInPhone(browser, world.baseUrl, unverified);
    for (const [path, what] of [
      ['electricity', 'Buying electricity'],
      ['cable', 'Paying for cable TV'],
      ['betting', 'Funding a betting wallet'],
      ['education', 'Buying exam pins'],
      ['social', 'Buying social boosts'],
    ] as const) {
      await phone.goto(`${world.baseUrl}/buy/${path}`);
      await phone.getByRole('heading', { name: `${what} needs Tier 1 verification` }).waitFor(TIMEOUT);
      await phone.getByText('You are at Tier 0.').waitFor(TIMEOUT);
      assert.equal(await phone.getByRole('link', { name: 'Verify now' }).getAttribute('href'), '/verify');
      assert.equal(await phone.getByRole('button', { name: /^(Continue|Check smartcard)$/ }).count(), 0);
      await screen(phone, `pb-11-gate-${path}`);
    }
    await phone.getByRole('link', { name: 'Verify now' }).click();
    await phone.waitForURL(/\/verify$/, TIMEOUT);
    await phone.context().close();
  });
});
