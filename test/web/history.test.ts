import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Download, Page } from 'playwright-core';
import { ensureWebBuilt } from '../../src/web-build.ts';
import { e164 } from '../auth/support.ts';
import { createIntent, walletKobo } from '../funding/support.ts';
import { until } from '../helpers/until.ts';
import {
  createWorld,
  ok,
  passOtpResendWindow,
  post,
  readSms,
  type SignedIn,
  signIn,
  signInAgain,
  type World,
} from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { checkout } from '../payments/helpers.ts';
import { transferCall } from '../transfers/support.ts';
import { bought, fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  launchChromium,
  openBrowserWorld,
  phonePage,
  screen,
  screenshotDir,
  skipWithoutChromium,
} from './support.ts';

// One history of every wallet movement in the browser (issue 26): a new person's top-up, the money
// they send (which the other person sees "from" them), an electricity token read again from history
// (grouped in fours, copied), the kind and date filters (whole days in Lagos), a movement's own
// details, the receipt saved as an image and as a PDF (the files checked), and home's last few.
//
// The service clock starts at 23:40 on 25 November 2026 in Lagos: the top-up is made that day, and
// the rest an hour later, on the 26th.

const TIMEOUT = { timeout: 30_000 };
const start = Date.parse('2026-11-25T22:40:00.000Z');

type BrowserGlobals = {
  navigator: { clipboard: { readText(): Promise<string> } };
  getComputedStyle(element: unknown): { whiteSpace: string };
};

describe('history, receipts and tokens in the browser', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let alice: SignedIn;
  let bob: SignedIn;
  let tokenPurchase: { id: string; token: string; reference: string };

  /** Signs the phone in through the sign-in screen, landing on `path`. */
  async function signInOnScreen(on: Page, phone: string, path: string): Promise<void> {
    passOtpResendWindow(world);
    await on.goto(`${world.baseUrl}${path}`);
    await on.waitForURL(/\/sign-in/, TIMEOUT);
    await on.getByLabel('Phone number').fill(phone);
    await on.getByRole('button', { name: 'Send code' }).click();
    await on.getByLabel('Code').waitFor(TIMEOUT);
    await on.getByLabel('Code').fill((await readSms(world, e164(phone))).code);
    await on.getByRole('button', { name: 'Sign in' }).click();
    await on.waitForURL(`${world.baseUrl}${path}`, TIMEOUT);
  }

  const rows = (on: Page) => on.getByRole('list', { name: 'Transactions' }).getByRole('listitem');

  async function saved(download: Promise<Download>): Promise<{ name: string; bytes: Buffer }> {
    const file = await download;
    return { name: file.suggestedFilename(), bytes: await readFile((await file.path())!) };
  }

  before(async () => {
    await ensureWebBuilt({});
    const offset = start - Date.now();
    world = await createWorld({ clock: { now: () => new Date(Date.now() + offset) } });
    browser = await launchChromium();
    page = await phonePage(browser);

    // Alice is new: verified to Tier 2 with a PIN, funded by a card top-up through the checkout.
    alice = await userAtTier(world, 2);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: alice.accessToken }));
    const intent = await createIntent(world, alice, 20_000);
    await checkout(intent.checkoutUrl, 'pay');
    // The credit comes with the provider's webhook, through a job: it must land before the hour passes.
    await until(async () => (await walletKobo(world, alice.userId)) === 2_000_000n, 'the top-up credited');

    // An hour on, the 26th in Lagos: she sends Bob money and buys electricity.
    world.ctx.sandboxClock!.advance(3_600);
    alice = { ...alice, ...(await signInAgain(world, alice.phone)) };
    bob = await userAtTier(
      world,
      1,
      await kycUser(world, { firstName: 'Chioma', lastName: 'Eze' }, mtn('8')),
    );
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: bob.accessToken }));
    ok(await transferCall(world, alice, bob, 2_500, { narration: 'for the rent' }));
    const electricity = await bought(world, alice, 'buyElectricity', {
      plan: 'ikeja-electric',
      meter: '45012345675',
      type: 'prepaid',
      amount: 3_000,
      phone: mtn('5'),
    });
    assert.equal(electricity.status, 'success');
    tokenPurchase = { id: electricity.id, token: electricity.token!, reference: electricity.reference };
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  it('lists every movement of the wallet, newest first, with its kind and amount', async () => {
    await signInOnScreen(page, alice.phone, '/transactions');
    await rows(page).nth(2).waitFor(TIMEOUT);
    assert.equal(await rows(page).count(), 3);
    const texts = await rows(page).allTextContents();
    assert.match(
      texts[0]!,
      /Purchase.*₦3,000\.00 Ikeja Electric prepaid electricity for meter 45012345675.*Successful.*−₦3,000\.00/,
    );
    assert.match(texts[1]!, /Money sent to Chioma E\..*−₦2,500\.00/);
    assert.match(texts[2]!, /Top-up.*Wallet top-up.*\+₦20,000\.00/);
    // An amount never wraps onto a second line, even at 360 px.
    for (const amount of await page.getByText(/^[+−]₦/).all()) {
      const whiteSpace = await amount.evaluate(
        (element) => (globalThis as unknown as BrowserGlobals).getComputedStyle(element).whiteSpace,
      );
      assert.equal(whiteSpace, 'nowrap');
    }
    await screen(page, 'history');
  });

  it('filters by kind and by whole days in Lagos', async () => {
    await page.getByLabel('Type', { exact: true }).selectOption('transfer_out');
    await page.waitForURL(/kind=transfer_out/, TIMEOUT);
    await rows(page)
      .filter({ hasText: 'Top-up' })
      .waitFor({ state: 'detached', ...TIMEOUT });
    await rows(page).filter({ hasText: 'Money sent' }).waitFor(TIMEOUT);
    assert.equal(await rows(page).count(), 1);
    await screen(page, 'history-money-sent');

    await page.getByLabel('Type', { exact: true }).selectOption('');
    await page.getByLabel('From', { exact: true }).fill('2026-11-25');
    await page.getByLabel('To', { exact: true }).fill('2026-11-25');
    await page.waitForURL(/to=2026-11-25/, TIMEOUT);
    await rows(page)
      .filter({ hasText: 'Ikeja Electric' })
      .waitFor({ state: 'detached', ...TIMEOUT });
    await rows(page).filter({ hasText: 'Top-up' }).waitFor(TIMEOUT);
    assert.equal(await rows(page).count(), 1, 'the 25th in Lagos: the top-up alone');
    await screen(page, 'history-one-day');

    await page.getByLabel('From', { exact: true }).fill('2026-11-26');
    await page.getByText('This is before the From date.').waitFor(TIMEOUT);
    await page.getByLabel('To', { exact: true }).fill('2026-11-26');
    await rows(page).filter({ hasText: 'Money sent' }).waitFor(TIMEOUT);
    assert.deepEqual(
      (await rows(page).allTextContents()).map((text) => /^(Purchase|Money sent|Top-up)/.exec(text)?.[1]),
      ['Purchase', 'Money sent'],
    );

    await page.getByLabel('Purchase status').selectOption('success');
    await page.getByText('Only purchases are shown while a status is chosen.').waitFor(TIMEOUT);
    await rows(page)
      .filter({ hasText: 'Money sent' })
      .waitFor({ state: 'detached', ...TIMEOUT });
    await rows(page).filter({ hasText: 'Ikeja Electric' }).waitFor(TIMEOUT);
    assert.equal(await rows(page).count(), 1);
    await page.getByLabel('Purchase status').selectOption('failed');
    await page.getByText('Nothing matches these filters.').waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await rows(page).nth(2).waitFor(TIMEOUT);
  });

  it('reads an electricity token again from history: grouped in fours and copied', async () => {
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.baseUrl });
    await rows(page).filter({ hasText: 'Ikeja Electric' }).getByRole('link').click();
    await page.waitForURL(new RegExp(`/transactions/${tokenPurchase.id}$`), TIMEOUT);
    const digits = tokenPurchase.token.replace(/\D/g, '');
    const grouped = digits.replace(/(\d{4})(?=\d)/g, '$1 ');
    assert.match(grouped, /^\d{4}( \d{4})+$/);
    await page.getByTestId('token').filter({ hasText: grouped }).waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Copy token' }).click();
    await page.getByRole('button', { name: 'Copied token' }).waitFor(TIMEOUT);
    const copied = await page.evaluate(() =>
      (globalThis as unknown as BrowserGlobals).navigator.clipboard.readText(),
    );
    assert.equal(copied, digits);
    await screen(page, 'transaction-token');

    const buyAgain = page.getByRole('link', { name: 'Buy again' });
    const href = (await buyAgain.getAttribute('href')) ?? '';
    assert.match(href, /^\/buy\/electricity\?/);
    // The router writes a value as JSON where plain text would read as another type ("45012345675").
    const search = new URL(href, world.baseUrl).searchParams;
    const value = (key: string) => {
      const text = search.get(key) ?? '';
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    };
    assert.deepEqual(['recipient', 'provider', 'type', 'amount'].map(value), [
      '45012345675',
      'ikeja-electric',
      'prepaid',
      3_000,
    ]);
  });

  it('saves the receipt as a PNG image and as a PDF', async () => {
    const imageDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Save image' }).click();
    const image = await saved(imageDownload);
    assert.ok(image.name.endsWith('.png'), image.name);
    assert.deepEqual([...image.bytes.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.ok(
      image.bytes.length > 10_000,
      `a drawn receipt, not an empty image: ${image.bytes.length} bytes`,
    );
    await writeFile(path.join(screenshotDir, 'receipt-image.png'), image.bytes);

    const pdfDownload = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Save PDF' }).click();
    const pdf = await saved(pdfDownload);
    assert.ok(pdf.name.endsWith('.pdf'), pdf.name);
    const text = pdf.bytes.toString('latin1');
    assert.ok(text.startsWith('%PDF-'), text.slice(0, 20));
    assert.ok(text.includes(tokenPurchase.reference), 'the PDF carries the reference');
    assert.ok(text.includes(tokenPurchase.token.replace(/\D/g, '').slice(0, 4)), 'and the token');
    assert.ok(text.includes('NGN 3,000.00'), 'and the amount');
  });

  it('opens any other movement in its own details, with its receipt', async () => {
    await page.goto(`${world.baseUrl}/transactions`);
    await rows(page).filter({ hasText: 'Top-up' }).getByRole('link').click();
    await page.waitForURL(/\/transactions\/entry\/\d+$/, TIMEOUT);
    await page.getByTestId('entry-kind').filter({ hasText: 'Top-up' }).waitFor(TIMEOUT);
    await page.getByText('Your balance after it:').waitFor(TIMEOUT);
    await page.getByText(/^topup:/).waitFor(TIMEOUT);
    await screen(page, 'wallet-entry');
  });

  it('shows the last few movements on home, with the way to all of them', async () => {
    await page.goto(`${world.baseUrl}/`);
    const recent = page.getByRole('list', { name: 'Recent transactions' }).getByRole('listitem');
    await recent.nth(2).waitFor(TIMEOUT);
    assert.equal(await recent.count(), 3);
    await page.getByRole('link', { name: 'See all' }).waitFor(TIMEOUT);
    await screen(page, 'home-recent');
  });

  it('shows the person who was sent money who sent it', async () => {
    const bobPage = await phonePage(browser);
    await signInOnScreen(bobPage, bob.phone, '/transactions');
    const received = rows(bobPage).filter({ hasText: 'Money received from Adebayo O.' });
    await received.waitFor(TIMEOUT);
    assert.match((await received.textContent()) ?? '', /\+₦2,500\.00/);
    await screen(bobPage, 'history-received');
    await received.getByRole('link').click();
    await bobPage
      .getByTestId('entry-kind')
      .filter({ hasText: 'Money received from Adebayo O.' })
      .waitFor(TIMEOUT);
    await bobPage.close();
  });
});

// A person with nothing yet: a new user's history says so.
describe('an empty history', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let world: World;
  let browser: Browser;
  before(async () => {
    ({ world, browser } = await openBrowserWorld());
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('says "Nothing here yet." until something moves, then shows it', async () => {
    const page = await phonePage(browser);
    const user = await signIn(world);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    passOtpResendWindow(world);
    await page.goto(`${world.baseUrl}/transactions`);
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    await page.getByLabel('Phone number').fill(user.phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    // The code field shows once requestOtp has answered: only then is the new code in the SMS (read
    // before it, the SMS is still the sign-in's, a code already used).
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.getByLabel('Code').fill((await readSms(world, e164(user.phone))).code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Nothing here yet.').waitFor(TIMEOUT);
    await fund(world, user.userId, 100);
    await page.reload();
    await page.getByRole('list', { name: 'Transactions' }).getByText('Adjustment').waitFor(TIMEOUT);
  });
});
