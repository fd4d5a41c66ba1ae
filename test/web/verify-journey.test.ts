import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { e164 } from '../auth/support.ts';
import { ok, readSms, type World } from '../helpers/world.ts';
import { matchingAccount, matchingNin, pngDocument, submitTier2, userAtTier } from '../kyc/kyc-support.ts';
import { mtn, PIN } from '../vtu/purchase-support.ts';
import { closeBrowserWorld, openBrowserWorld, phonePage, screen, skipWithoutChromium } from './support.ts';

// A new person verifies themselves in the web client (issue 26 items 1 and 3), from the first visit:
// sign-in and the PIN on the screens, the funding screen before Tier 2 (what Tier 2 unlocks), the
// name asked for in Tier 2's own form, Tier 1 through the sandbox's face-check page, Tier 2 refused
// twice with the real reason each time (an NIN verified on another account, an NIN registered with
// another phone) and then approved, the profile's verified name, Tier 3 with a bank picked from the
// service's list and a document, and the dedicated account on Fund with Copy. axe-core checks every
// screen, in light and in dark, each saved as a 360×800 screenshot named by screen.

const TIMEOUT = { timeout: 30_000 };

/** What the test reads of the page's clipboard (the service's compiler has no DOM library). */
type ClipboardPage = { navigator: { clipboard: { readText(): Promise<string> } } };

/** axe and a screenshot (light and dark: see screen()) of the screen as it is. */
const screens = (page: Page, name: string) => screen(page, `kyc-journey-${name}`);

describe('the web client: a new person verifies themselves', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  const phone = mtn('7');
  /** An NIN another account verified first. */
  const takenNin = matchingNin();

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    page = await phonePage(browser);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.baseUrl });
    // A browser without the Web Share API (as desktop Linux Chromium is, or not, by version): Share
    // then copies the details, which the test can read back.
    await page.addInitScript(() => {
      const { navigator } = globalThis as unknown as { navigator: object };
      Object.defineProperty(Object.getPrototypeOf(navigator), 'share', { value: undefined });
    });
    const holder = await userAtTier(world, 1);
    assert.equal(ok(await submitTier2(world, holder, { nin: takenNin })).status, 'approved');
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('signs in from the first visit and sets the PIN on the screen', async () => {
    await page.goto(`${world.baseUrl}/`);
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    const { code } = await readSms(world, e164(phone));
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/pin$/, TIMEOUT);
    await page.getByLabel('New PIN').fill(PIN);
    await page.getByLabel('Type it again').fill(PIN);
    await page.getByRole('button', { name: 'Save PIN' }).click();
    await page.waitForURL(`${world.baseUrl}/`, TIMEOUT);
  });

  it('offers quick amounts on Fund, and says what Tier 2 unlocks before there is an account number', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    await page.getByRole('heading', { name: 'Get your own account number' }).waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('dedicated-account').count(), 0);
    await page.getByRole('button', { name: '₦5,000' }).click();
    assert.equal(await page.getByLabel('Amount (₦)').inputValue(), '5000');
    await page.getByRole('button', { name: 'Pay ₦5,000.00' }).waitFor(TIMEOUT);
    await screens(page, '01-fund-below-tier2');
    await page.getByRole('link', { name: 'Verify now' }).click();
    await page.waitForURL(/\/verify$/, TIMEOUT);
  });

  it('shows what each tier unlocks, and passes Tier 1 through the face-check page', async () => {
    await page.getByTestId('tier-1').filter({ hasText: 'Not started' }).waitFor(TIMEOUT);
    assert.match(
      (await page.getByTestId('tier-2').textContent()) ?? '',
      /Send money to other billrail users.*Your own account number/,
    );
    await screens(page, '02-verify-tier1');
    await page.getByRole('button', { name: 'Start face check' }).click();
    await page.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    await page.click('#pass');
    await page.getByTestId('tier-1').filter({ hasText: 'Approved' }).waitFor(TIMEOUT);
  });

  it('asks for the name in Tier 2’s own form, since the profile has none', async () => {
    await page.getByTestId('tier-2').getByText('First, your name as it is on your NIN').waitFor(TIMEOUT);
    assert.equal(await page.getByLabel('NIN', { exact: true }).count(), 0, 'no NIN before the name');
    await page.getByLabel('First name').fill('Adaeze');
    await page.getByLabel('Last name').fill('Okafor');
    await screens(page, '03-verify-tier2-name');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.getByTestId('tier2-name').filter({ hasText: 'Adaeze Okafor' }).waitFor(TIMEOUT);
  });

  it('refuses an NIN verified on another account, saying so', async () => {
    await page.getByLabel('NIN', { exact: true }).fill(takenNin);
    await page.getByRole('button', { name: 'Submit NIN' }).click();
    const alert = page.getByRole('alert').filter({ hasText: /\S/ });
    await alert.waitFor(TIMEOUT);
    assert.equal(
      (await alert.textContent())?.trim(),
      'This NIN is already verified on another billrail account. One NIN can verify only one account: if that account is yours, sign in with its phone number.',
    );
    await screens(page, '04-verify-tier2-nin-in-use');
  });

  it('says when the NIN is registered with another phone, and then approves a matching NIN', async () => {
    // The sandbox's NINs starting with 8 carry another phone (API.md section 8).
    await page.getByLabel('NIN', { exact: true }).fill(`8${matchingNin().slice(1)}`);
    await page.getByRole('button', { name: 'Submit NIN' }).click();
    const local = `0${e164(phone).slice(4)}`;
    const outcome = page.getByTestId('tier2-outcome');
    await outcome.filter({ hasText: /\S/ }).waitFor(TIMEOUT);
    assert.equal(
      (await outcome.textContent())?.trim(),
      `Your NIN is registered with another phone number, not ${local}. Sign in with the number on your NIN, or have NIMC update it, then try again.`,
    );
    await page.getByTestId('tier-2').filter({ hasText: 'Did not pass' }).waitFor(TIMEOUT);
    assert.equal(
      (await page.getByRole('alert').filter({ hasText: /\S/ }).count()) > 0,
      false,
      'the 409 is gone',
    );
    await screens(page, '05-verify-tier2-other-phone');

    await page.getByLabel('NIN', { exact: true }).fill(matchingNin());
    await page.getByRole('button', { name: 'Submit NIN' }).click();
    await page.getByTestId('tier-2').filter({ hasText: 'Approved' }).waitFor(TIMEOUT);
  });

  it('shows the verified name on the profile, read-only, reached from Settings', async () => {
    await page.goto(`${world.baseUrl}/settings`);
    await page.getByRole('link', { name: /Your profile/ }).click();
    await page.waitForURL(/\/profile$/, TIMEOUT);
    await page.getByText('Verified', { exact: true }).waitFor(TIMEOUT);
    assert.match((await page.getByRole('main').textContent()) ?? '', /Adaeze.*Okafor/);
    assert.equal(await page.getByLabel('First name').count(), 0, 'a verified name cannot be edited');
    assert.equal(await page.getByTestId('profile-phone').textContent(), `0${e164(phone).slice(4)}`);
    assert.equal(await page.getByTestId('profile-email').textContent(), 'No email address yet.');
    await screens(page, '06-profile-verified');
  });

  it('submits Tier 3 with a bank picked from the list and a document', async () => {
    await page.goto(`${world.baseUrl}/verify`);
    await page.getByRole('form', { name: 'Bank account and ID' }).waitFor(TIMEOUT);
    const bank = page.getByLabel('Bank', { exact: true });
    await bank
      .locator('option', { hasText: 'Guaranty Trust Bank' })
      .waitFor({ state: 'attached', ...TIMEOUT });
    await page.getByLabel('Search for your bank').fill('guaranty');
    assert.equal(await bank.inputValue(), '058', 'the one bank left is chosen');
    await page.getByLabel('Account number').fill(matchingAccount());
    // A file of another type is refused before anything is sent.
    const file = page.getByLabel('Photo or PDF of the document');
    await file.setInputFiles({ name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') });
    await page.getByText('Choose a JPG or PNG photo, or a PDF.').waitFor(TIMEOUT);
    assert.equal(await page.getByRole('button', { name: 'Submit for review' }).isDisabled(), true);
    await file.setInputFiles({ name: 'passport.png', mimeType: 'image/png', buffer: pngDocument() });
    await screens(page, '07-verify-tier3');
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByTestId('tier-3').filter({ hasText: 'Being checked' }).waitFor(TIMEOUT);
    await screens(page, '08-verify-tier3-pending');
  });

  it('shows the dedicated account on Fund, and Copy and Share put it on the clipboard', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    const account = page.getByTestId('dedicated-account');
    await account.waitFor(TIMEOUT);
    const text = (await account.textContent()) ?? '';
    const number = /Account number(\d{10})/.exec(text)?.[1];
    assert.ok(number, text);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByText('Account number copied.').waitFor(TIMEOUT);
    const read = () =>
      page.evaluate(() => (globalThis as unknown as ClipboardPage).navigator.clipboard.readText());
    assert.equal(await read(), number);
    await screens(page, '09-fund-account-number');

    await page.getByRole('button', { name: 'Share', exact: true }).click();
    await page.getByText('Account details copied.').waitFor(TIMEOUT);
    assert.match(await read(), new RegExp(`^Bank: .+, Account: ${number}, Name: .+$`));
  });
});
