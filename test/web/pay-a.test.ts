import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type DataPlan, groupPlans, planTitle } from '../../web/src/payments/data-plans.ts';
import { walletKobo } from '../funding/support.ts';
import { get, ok, post, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// Airtime, data and send money built from the shared payment pieces (issue 26), in headless Chromium
// at 360×800 as a person would use them: a number saved as "Mum" on one phone offered on another,
// where one tap fills the form and buys; a network picked against the number's prefix flagged with
// "Switch to MTN"; data plans grouped by type, smallest first, each with its validity; "Fund wallet"
// instead of the PIN when the balance is short; and a transfer that names its recipient before the
// PIN, ends on a receipt, and reaches the recipient's history, also when its answer is lost.
// axe-core checks every screen; each is saved as a screenshot in light and dark.

const TIMEOUT = { timeout: 30_000 };
const TRANSACTION_URL = /\/transactions\/[0-9a-f-]{36}$/;

type Beneficiary = { label: string; recipient: string; network?: string };
type WalletItem = { reference: string; direction: string; amount: number; counterparty?: string };

/** A phone in another browser context (another device) signed in as `user` with its own session. */
async function signedInPhone(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  // The first call refreshes the session: let home show the balance before the tests navigate, so
  // that no navigation cuts the rotated refresh token off on its way to the page.
  await page.goto(`${world.baseUrl}/`);
  await page.getByTestId('balance').filter({ hasText: '₦' }).waitFor(TIMEOUT);
  return page;
}

/**
 * Taps a choice drawn as a card: its radio is visually hidden (for screen readers and keyboards), so
 * a finger lands on the card, its label.
 */
async function tap(page: Page, radio: string | RegExp): Promise<void> {
  const name = typeof radio === 'string' ? { name: radio, exact: true } : { name: radio };
  await page
    .locator('label')
    .filter({ has: page.getByRole('radio', name) })
    .click();
}

/** The number as the service keeps a beneficiary's phone. */
const e164 = (local: string) => `+234${local.slice(1)}`;

describe('data plans as the data screen lists them', () => {
  const plan = (plan_id: string, planType: string, name: string, amount: number): DataPlan => ({
    plan_id,
    planType,
    name,
    validity: '30 days',
    amount,
  });

  it('groups by type (SME, corporate gifting, gifting, then the rest) and sorts by size, then price', () => {
    const groups = groupPlans([
      plan('1', 'GIFTING', '2.0GB', 900),
      plan('2', 'SME', '1.0GB', 600),
      plan('3', 'AWOOF', '1.0GB', 300),
      plan('4', 'SME', '500.0MB', 400),
      plan('5', 'CG', 'MTN N1000 1.5GB - 30 days', 1000),
      plan('6', 'SME', '1GB', 550),
      plan('7', 'GIFTING', '1.0GB', 500),
      plan('8', 'SME', 'Night plan', 100),
    ]);
    assert.deepEqual(
      groups.map((g) => [g.label, g.plans.map((p) => p.plan_id)]),
      [
        ['SME', ['4', '6', '2', '8']],
        ['Corporate gifting', ['5']],
        ['Gifting', ['7', '1']],
        ['Awoof', ['3']],
      ],
    );
  });

  it('names a plan by its size alone, never with the price a vendor wrote into its name', () => {
    assert.equal(planTitle(plan('5', 'CG', 'MTN N1000 1.5GB - 30 days', 1000)), '1.5 GB');
    assert.equal(planTitle(plan('4', 'SME', '500.0MB', 400)), '500 MB');
    assert.equal(planTitle(plan('8', 'SME', 'Night plan', 100)), 'Night plan');
  });
});

describe('the web client: beneficiaries, airtime, data and send money', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: SignedIn;
  /** The same person's session for reading through the API (the page rotates its own). */
  let api: SignedIn;
  /** What the wallet should hold, in kobo, as the payments go. */
  let expected: bigint;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    // Tier 2, so that sending money is open too.
    user = await userAtTier(world, 2);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    await fund(world, user.userId, 20_000);
    expected = 2_000_000n;
    page = await signedInPhone(browser, world, user);
    api = await signInAgain(world, user.phone);
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** The price the summary shows, once known, in kobo. */
  async function shownPriceKobo(on: Page): Promise<bigint> {
    const price = on.getByTestId('price').filter({ hasText: '₦' });
    await price.waitFor(TIMEOUT);
    const [, naira, kobo] = /₦([\d,]+)\.(\d{2})/.exec((await price.textContent()) ?? '')!;
    return BigInt(naira!.replace(/,/g, '')) * 100n + BigInt(kobo!);
  }

  /** Pays the open summary with the PIN and waits for the purchase to succeed on its receipt. */
  async function payAndSucceed(on: Page): Promise<void> {
    const price = await shownPriceKobo(on);
    await on.getByLabel('Transaction PIN').fill(PIN);
    await on.getByRole('button', { name: /^Pay ₦/ }).click();
    await on.waitForURL(TRANSACTION_URL, TIMEOUT);
    await on.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    expected -= price;
    assert.equal(await walletKobo(world, user.userId), expected);
  }

  it('saves a number as "Mum" when the airtime is paid, and another phone offers it: one tap fills the form', async () => {
    const mum = mtn('5');
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(mum);
    await page.getByLabel('Amount (₦)').fill('200');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Save as (optional)').fill('Mum');
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await screen(page, 'pa-01-airtime-save-as');
    await payAndSucceed(page);
    const saved = ok(
      await get<{ items: Beneficiary[] }>(world, 'listBeneficiaries', {}, { token: api.accessToken }),
    );
    assert.deepEqual(
      saved.items.map(({ label, recipient, network }) => ({ label, recipient, network })),
      [{ label: 'Mum', recipient: e164(mum), network: 'mtn' }],
    );

    // Another phone, signed in on its own: the saved number came with the person, not the device.
    const other = await signedInPhone(browser, world, await signInAgain(world, user.phone));
    await other.goto(`${world.baseUrl}/buy/airtime`);
    const mumButton = other.getByRole('button', { name: /^Mum/ });
    await mumButton.waitFor(TIMEOUT);
    await screen(other, 'pa-02-airtime-beneficiaries');
    assert.equal(await other.getByLabel('Phone number').inputValue(), '');
    await mumButton.click();
    assert.equal(await other.getByLabel('Phone number').inputValue(), mum);
    assert.ok(await other.getByRole('radio', { name: 'MTN' }).isChecked());
    await other.getByLabel('Amount (₦)').fill('100');
    await other.getByRole('button', { name: 'Continue' }).click();
    await other.getByText('Saved as Mum').waitFor(TIMEOUT);
    await payAndSucceed(other);

    // Managed there too: deleted, it is no longer offered.
    await other.goto(`${world.baseUrl}/buy/airtime`);
    await other.getByRole('button', { name: 'Manage' }).click();
    await screen(other, 'pa-03-beneficiaries-manage');
    await other.getByRole('button', { name: 'Delete Mum' }).click();
    await other.getByText('Mum deleted.').waitFor(TIMEOUT);
    const left = ok(
      await get<{ items: Beneficiary[] }>(world, 'listBeneficiaries', {}, { token: api.accessToken }),
    );
    assert.deepEqual(left.items, []);
    await other.context().close();
  });

  it('flags a Glo pick for an MTN number on data with "Switch to MTN", which switches it back', async () => {
    await page.goto(`${world.baseUrl}/buy/data`);
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByText('MTN number').waitFor(TIMEOUT);
    await tap(page, 'Glo');
    const flag = page.getByRole('alert').filter({ hasText: 'This looks like an MTN number.' });
    await flag.waitFor(TIMEOUT);
    await screen(page, 'pa-04-data-switch-network');
    // The override stands until the person switches: Glo's plans are the ones offered.
    assert.ok(await page.getByRole('radio', { name: 'Glo' }).isChecked());
    await page.getByRole('button', { name: 'Switch to MTN' }).click();
    assert.ok(await page.getByRole('radio', { name: 'MTN' }).isChecked());
    await flag.waitFor({ state: 'detached', ...TIMEOUT });
  });

  it('lists data plans grouped by type, smallest first, each with its validity, and buys one', async () => {
    await page.goto(`${world.baseUrl}/buy/data`);
    await page.getByLabel('Phone number').fill(mtn('5'));
    const types = page.getByRole('group', { name: 'Plan type' }).getByRole('radio');
    await types.first().waitFor(TIMEOUT);
    assert.deepEqual(await types.evaluateAll((radios) => radios.map((r) => r.parentElement?.textContent)), [
      'SME',
      'Corporate gifting',
      'Gifting',
    ]);
    const plans = page.getByRole('group', { name: 'Plan', exact: true }).getByRole('radio');
    const cards = () => plans.evaluateAll((radios) => radios.map((r) => r.parentElement?.textContent ?? ''));
    // SME first: from 500 MB to 10 GB, every one for 30 days.
    const sme = await cards();
    assert.deepEqual(
      sme.map((card) => /^([\d.]+ [MG]B)(30 days)₦/.exec(card)?.slice(1, 3)),
      ['500 MB', '1 GB', '2 GB', '3 GB', '5 GB', '10 GB'].map((size) => [size, '30 days']),
    );
    await tap(page, 'Gifting');
    await page.getByRole('radio', { name: /^2\.5 GB/ }).waitFor(TIMEOUT);
    assert.deepEqual(
      (await cards()).map((card) => card.replace(/₦.*/, '')),
      ['1 GB1 day', '2.5 GB2 days', '3.5 GB30 days', '7 GB30 days', '20 GB30 days'],
    );
    await tap(page, /^2\.5 GB/);
    await screen(page, 'pa-05-data-plans');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('2.5 GB Gifting').waitFor(TIMEOUT);
    await page.getByText('2 days').waitFor(TIMEOUT);
    await screen(page, 'pa-06-data-confirm');
    await payAndSucceed(page);
  });

  it('opens data prefilled, as Buy again does: the number, its network and the plan chosen', async () => {
    const catalogue = ok(
      await get<{ items: Array<{ plan_id: string; planType: string; name: string }> }>(
        world,
        'listDataPlans',
        { network: 'mtn' },
        { token: api.accessToken },
      ),
    );
    const gifting = catalogue.items.find((p) => p.planType === 'GIFTING' && p.name.startsWith('2.5'));
    assert.ok(gifting, 'the sandbox sells MTN 2.5 GB gifting');
    const number = mtn('5');
    // As the router writes a plan id in a Buy again link: JSON, so that "352" stays text.
    const plan_id = encodeURIComponent(JSON.stringify(gifting.plan_id));
    await page.goto(`${world.baseUrl}/buy/data?recipient=${number}&network=mtn&plan=${plan_id}`);
    const plan = page.getByRole('radio', { name: /^2\.5 GB/ });
    await plan.waitFor({ state: 'attached', ...TIMEOUT });
    assert.ok(await plan.isChecked());
    assert.ok(await page.getByRole('radio', { name: 'Gifting', exact: true }).isChecked());
    assert.equal(await page.getByLabel('Phone number').inputValue(), number);
    assert.ok(await page.getByRole('button', { name: 'Continue' }).isEnabled());
  });

  it('offers "Fund wallet" instead of the PIN when the balance does not cover the price', async () => {
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByLabel('Amount (₦)').fill('50000');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await page.getByText('Your balance does not cover this.').waitFor(TIMEOUT);
    await screen(page, 'pa-07-balance-short');
    assert.equal(await page.getByLabel('Transaction PIN').count(), 0, 'no PIN asked');
    assert.equal(await page.getByRole('button', { name: /^Pay/ }).count(), 0);
    await page.getByRole('link', { name: 'Fund wallet' }).click();
    await page.waitForURL(/\/fund$/, TIMEOUT);
    assert.equal(await walletKobo(world, user.userId), expected, 'nothing charged');
  });

  it('sends money: the verified name before the PIN, then a receipt, and the recipient sees it', async () => {
    const friend = await userAtTier(world, 2, await kycUser(world, { firstName: 'Chioma', lastName: 'Eze' }));
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').fill(friend.phone);
    await page.getByText('Sending to Chioma E.').waitFor(TIMEOUT);
    await page.getByLabel('Amount (₦)').fill('1500');
    await page.getByLabel('Note (optional)').fill('For lunch');
    await screen(page, 'pa-08-transfer');
    await page.getByRole('button', { name: 'Continue' }).click();

    const pin = page.getByLabel('Transaction PIN');
    await pin.waitFor(TIMEOUT);
    const recipient = page.getByTestId('recipient');
    assert.match(
      (await recipient.textContent()) ?? '',
      /^Sending to Chioma E\.Name verified with their NIN\./,
    );
    const [nameBox, pinBox] = [await recipient.boundingBox(), await pin.boundingBox()];
    assert.ok(nameBox !== null && pinBox !== null && nameBox.y < pinBox.y, 'the name comes before the PIN');
    assert.equal(await page.getByTestId('price').textContent(), '₦1,500.00');
    await page.getByLabel('Save as (optional)').fill('Chioma');
    await pin.fill(PIN);
    await screen(page, 'pa-09-transfer-confirm');
    await page.getByRole('button', { name: 'Send ₦1,500.00' }).click();

    const receipt = page.getByRole('region', { name: 'Receipt' });
    await receipt.waitFor(TIMEOUT);
    assert.equal(await receipt.getByTestId('receipt-amount').textContent(), '−₦1,500.00');
    const [status, to, phone, note, reference, date] = await receipt
      .getByRole('definition')
      .allTextContents();
    assert.deepEqual([status, to, phone, note], ['Successful', 'Chioma E.', friend.phone, 'For lunch']);
    assert.match(reference!, /^TRF\w+$/);
    assert.match(date!, /\d{4}/);
    await screen(page, 'pa-10-transfer-receipt');
    expected -= 150_000n;
    assert.equal(await walletKobo(world, user.userId), expected);
    assert.equal(await walletKobo(world, friend.userId), 150_000n);

    // The recipient sees it in their history, from whom, under the same reference.
    const history = ok(
      await get<{ items: WalletItem[] }>(world, 'listTransactions', {}, { token: friend.accessToken }),
    );
    const received = history.items.find((item) => item.reference.endsWith(reference!));
    assert.deepEqual(
      received && { direction: received.direction, amount: received.amount, from: received.counterparty },
      { direction: 'credit', amount: 1500, from: 'Adebayo O.' },
    );

    // Saved as Chioma: the next transfer is one tap away.
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByRole('button', { name: /^Chioma/ }).click();
    assert.equal(await page.getByLabel('Their phone number').inputValue(), friend.phone);
    await page.getByText('Sending to Chioma E.').waitFor(TIMEOUT);
  });

  it('finds a transfer whose answer was lost in the history, and shows its receipt, sent once', async () => {
    const friend = await userAtTier(
      world,
      2,
      await kycUser(world, { firstName: 'Tunde', lastName: 'Bakare' }),
    );
    let sends = 0;
    await page.route('**/_serverFn/transferToUser', async (route) => {
      sends += 1;
      // The service does the transfer; its answer never comes back.
      await route.fetch();
      await route.abort('connectionreset');
    });
    // The history is held back until the page has said the payment may have gone through, which
    // it says at once; the search of the history that follows would otherwise end it as quickly.
    let releaseHistory = () => {};
    const historyHeld = new Promise<void>((resolve) => {
      releaseHistory = resolve;
    });
    const history = (url: URL) => url.pathname.endsWith('/_serverFn/listTransactions');
    await page.route(history, async (route) => {
      await historyHeld;
      await route.continue();
    });
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').fill(friend.phone);
    await page.getByText('Sending to Tunde B.').waitFor(TIMEOUT);
    await page.getByLabel('Amount (₦)').fill('700');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Send ₦700.00' }).click();
    await page.getByText('Your payment may have gone through.').waitFor(TIMEOUT);
    await screen(page, 'pa-11-transfer-answer-lost');
    releaseHistory();
    // The history is searched every few seconds: the transfer is found there and its receipt shown.
    const receipt = page.getByRole('region', { name: 'Receipt' });
    await receipt.waitFor(TIMEOUT);
    assert.deepEqual((await receipt.getByRole('definition').allTextContents()).slice(0, 2), [
      'Successful',
      'Tunde B.',
    ]);
    await page.unroute('**/_serverFn/transferToUser');
    await page.unroute(history);
    assert.equal(sends, 1, 'never sent again');
    expected -= 70_000n;
    assert.equal(await walletKobo(world, user.userId), expected);
    assert.equal(await walletKobo(world, friend.userId), 70_000n);
  });
});
