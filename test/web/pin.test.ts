import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { e164, otherCode } from '../auth/support.ts';
import { walletKobo } from '../funding/support.ts';
import { failure, passOtpResendWindow, post, readSms, type World } from '../helpers/world.ts';
import { type Buyer, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// Changing the transaction PIN, and replacing a forgotten or locked one, in headless Chromium
// (issue 26 item 1, API.md section 4): a new SMS code to the person's own phone, then the code and
// the new PIN twice. Afterwards the old PIN is refused and the new one pays. axe-core checks every
// screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };

describe('changing and resetting the PIN', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
  });
  after(() => closeBrowserWorld({ world, browser }));

  /**
   * A phone page signed in as `person` (a Tier 1 buyer with PIN 2580 and ₦5,000). The page's first
   * refresh ends the person's API access token (one per session): API calls go before.
   */
  async function signedInPage(person: Buyer): Promise<Page> {
    const page = await phonePage(browser);
    await injectSession(page, world.baseUrl, person.refreshToken);
    // The API sign-in just sent this phone a code: the next may be sent a minute later.
    passOtpResendWindow(world);
    return page;
  }

  /** buyAirtime through the API, as another client would: its HTTP status and error code. */
  async function buyWithPin(person: Buyer, pin: string) {
    const response = await post(
      world,
      'buyAirtime',
      { network: 'mtn', phone: mtn('5'), amount: 100, pin },
      { token: person.accessToken },
    );
    return response.status === 200 ? 'bought' : failure(response).code;
  }

  /** Types the code the SMS brought (or another, `mistyped`) and the new PIN twice; answers the code. */
  async function typeCodeAndNewPin(page: Page, person: Buyer, newPin: string, mistyped = false) {
    const { code } = await readSms(world, e164(person.phone));
    await page.getByLabel('Code').fill(mistyped ? otherCode(code) : code);
    await page.getByLabel('New PIN').fill(newPin);
    await page.getByLabel('Type it again').fill(newPin);
    await page.getByRole('button', { name: 'Save new PIN' }).click();
    return code;
  }

  /** Buys ₦100 of airtime through the screens with `pin`, and answers the receipt's status. */
  async function buyAirtimeOnScreen(page: Page, pin: string): Promise<void> {
    await page.getByLabel('Phone number').fill(mtn('5'));
    await page.getByLabel('Amount (₦)').fill('100');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Transaction PIN').fill(pin);
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
  }

  it('changes the PIN from Settings with a code sent by SMS: the old PIN is refused, the new one pays', async () => {
    const person = await buyer(world, 5_000);
    const page = await signedInPage(person);
    await page.goto(`${world.baseUrl}/settings`);
    await page.getByRole('link', { name: 'Change PIN' }).click();
    await page.waitForURL(/\/pin\/change$/, TIMEOUT);
    const written = `${person.phone.slice(0, 4)} ${person.phone.slice(4, 7)} ${person.phone.slice(7)}`;
    await page.getByText(`We will send the code to ${written}.`).waitFor(TIMEOUT);
    await screen(page, '44-pin-change');
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText('We sent you a code by SMS. It works for 5 minutes.').waitFor(TIMEOUT);

    // A mistyped code first: said so, with the tries left; the PIN is not changed.
    const code = await typeCodeAndNewPin(page, person, '1357', true);
    await page.getByText('That code is not right. 4 tries left.').waitFor(TIMEOUT);
    await screen(page, '45-pin-change-wrong-code');
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Save new PIN' }).click();
    await page.getByText('Your PIN has been changed.', { exact: false }).waitFor(TIMEOUT);
    await screen(page, '46-pin-changed');

    await page.getByRole('link', { name: 'Continue' }).click();
    await page.waitForURL(`${world.baseUrl}/`, TIMEOUT);

    // The old PIN is refused now, and the new one pays.
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await buyAirtimeOnScreen(page, PIN);
    await page.getByText('That PIN is not right. 4 tries left before it locks.').waitFor(TIMEOUT);
    await page.getByLabel('Transaction PIN').fill('1357');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, person.userId), 490_000n);
    await page.context().close();
  });

  it('resets a PIN locked by five wrong tries, and the new PIN pays at once', async () => {
    const person = await buyer(world, 5_000);
    for (let attempt = 0; attempt < 5; attempt += 1) await buyWithPin(person, '0000');
    assert.equal(await buyWithPin(person, PIN), 'PIN_LOCKED', 'even the right PIN is refused while locked');
    const page = await signedInPage(person);

    // Paying on the screens says what the lock is and how long it lasts.
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await buyAirtimeOnScreen(page, PIN);
    await page
      .getByText(
        /^Your PIN is locked for 30 minutes after 5 wrong tries \((30|29) minutes left\)\. Reset it with a code, or wait\.$/,
      )
      .waitFor(TIMEOUT);
    await screen(page, '47-pin-locked');

    // "Forgot PIN?" on the PIN prompt goes to the change screen, which comes back to the payment with
    // its order filled in (the order is in the address since Continue).
    const phone = new URL(page.url()).searchParams.get('recipient');
    assert.match(phone ?? '', /^0803\d{7}$/);
    await page.getByRole('link', { name: 'Forgot PIN?' }).click();
    await page.waitForURL(/\/pin\/change\?next=%2Fbuy%2Fairtime%3F/, TIMEOUT);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await typeCodeAndNewPin(page, person, '8642');
    await page.getByText('Your PIN has been changed.', { exact: false }).waitFor(TIMEOUT);
    await page.getByRole('link', { name: 'Continue' }).click();
    await page.waitForURL(/\/buy\/airtime\?/, TIMEOUT);
    assert.equal(await page.getByLabel('Phone number').inputValue(), phone);
    assert.equal(await page.getByLabel('Amount (₦)').inputValue(), '100');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel('Transaction PIN').fill('8642');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, person.userId), 490_000n);
    await page.context().close();
  });
});
