import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { get, ok, post, type SignedIn, signInAgain, type World } from '../helpers/world.ts';
import { kycUser, userAtTier } from '../kyc/kyc-support.ts';
import { fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  openBrowserWorld,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// The USSD channel in the browser (issue 44, API.md 17.6). In the app's Settings a person switches
// USSD on and off with the transaction PIN (a wrong PIN refused with the tries left, a locked PIN
// said as every PIN step says it, the lock shared with the app's other PIN checks). Then the whole
// journey: a person signed up, verified to Tier 1, with a PIN and a funded wallet, switches USSD on in
// Settings, picks up the sandbox's feature phone (/__sandbox/ussd), dials the service code, buys ₦100
// of airtime for their own phone with the PIN, reads the reference on the last screen, and finds that
// purchase in the app's history, and Settings then says what is left of the day's USSD limit.
// axe-core checks every screen, the feature phone's page too. The service runs with a code and limits
// other than the defaults, so that the app shows only what getUssdSettings tells it.

const TIMEOUT = { timeout: 30_000 };
const serviceCode = '*347*88#';

/** A person at Tier 1 with a PIN and ₦5,000, on an MTN number ending in 5 (the sandbox's plain success). */
async function payer(world: World): Promise<SignedIn> {
  const user = await userAtTier(world, 1, await kycUser(world, undefined, mtn('5')));
  ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
  await fund(world, user.userId, 5_000);
  return user;
}

async function ussdEnabled(world: World, user: SignedIn): Promise<boolean> {
  return ok(await get<{ ussdEnabled: boolean }>(world, 'getMe', {}, { token: user.accessToken })).ussdEnabled;
}

const ussdSwitch = (page: Page) => page.getByRole('switch', { name: `USSD (${serviceCode})` });

/** Opens Settings and the PIN step of the USSD switch. */
async function openSwitch(page: Page, baseUrl: string): Promise<void> {
  await page.goto(`${baseUrl}/settings`);
  await ussdSwitch(page).waitFor(TIMEOUT);
  await ussdSwitch(page).click();
  await page.getByLabel('Transaction PIN').waitFor(TIMEOUT);
}

/** What the feature phone's screen shows once it has the service's answer. */
async function phoneScreen(page: Page): Promise<string> {
  const shown = page.getByRole('status', { name: 'Phone screen' });
  await page.locator('#screen[data-state]:not([data-state="busy"])').waitFor(TIMEOUT);
  return (await shown.textContent()) ?? '';
}

/** Types on the feature phone's keypad, key by key, and presses Send. */
async function keyIn(page: Page, keys: string): Promise<string> {
  const keypad = page.getByRole('group', { name: 'Keypad' });
  for (const key of keys) await keypad.getByRole('button', { name: key, exact: true }).click();
  await page.getByRole('button', { name: 'Send', exact: true }).click();
  return phoneScreen(page);
}

describe('USSD: the switch in Settings and a purchase from the feature phone', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({
      env: { USSD_SERVICE_CODE: serviceCode, USSD_SINGLE_MAX: '5000', USSD_DAILY_MAX: '20000' },
    }));
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('switches USSD on and off with the PIN, off by default, a wrong and a locked PIN said as elsewhere', async () => {
    const user = await payer(world);
    const page = await signedInPhone(browser, world.baseUrl, user);
    // A session of the same person for the test's own calls (the page rotates its own tokens).
    const api = await signInAgain(world, user.phone);
    await page.goto(`${world.baseUrl}/settings`);
    await ussdSwitch(page).waitFor(TIMEOUT);
    assert.equal(await ussdSwitch(page).getAttribute('aria-checked'), 'false', 'off by default');
    assert.match((await page.getByTestId('ussd-state').textContent()) ?? '', /^Off/);
    await page.getByText('at most ₦5,000.00 at a time and ₦20,000.00 a day').waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('ussd-left-today').textContent(), '₦20,000.00 left today by USSD.');

    // A wrong PIN: refused with the tries left, and nothing switched.
    await ussdSwitch(page).click();
    await page.getByLabel('Transaction PIN').fill('1111');
    await page.getByRole('button', { name: 'Switch USSD on' }).click();
    await page.getByRole('alert').filter({ hasText: 'That PIN is not right. 4 tries left' }).waitFor(TIMEOUT);
    await screen(page, 'ussd-settings-wrong-pin');
    assert.equal(await ussdEnabled(world, api), false);

    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Switch USSD on' }).click();
    await page
      .getByTestId('ussd-saved')
      .filter({ hasText: `USSD is on. Dial ${serviceCode}` })
      .waitFor(TIMEOUT);
    assert.equal(await ussdSwitch(page).getAttribute('aria-checked'), 'true');
    assert.equal(await ussdEnabled(world, api), true, 'the service has it on');
    await screen(page, 'ussd-settings-on');

    // Still on after a reload: the switch shows getMe.ussdEnabled.
    await page.reload();
    await ussdSwitch(page).waitFor(TIMEOUT);
    assert.equal(await ussdSwitch(page).getAttribute('aria-checked'), 'true');

    await openSwitch(page, world.baseUrl);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Switch USSD off' }).click();
    await page.getByTestId('ussd-saved').filter({ hasText: 'USSD is off' }).waitFor(TIMEOUT);
    assert.equal(await ussdEnabled(world, api), false, 'the service has it off');

    // Wrong PINs anywhere count toward the one lock: locked by the app's other PIN checks, the
    // switch says it is locked as every PIN step does.
    for (let wrong = 0; wrong < 5; wrong += 1) {
      await post(world, 'setPersonalDailyLimit', { amount: 1_000, pin: '0000' }, { token: api.accessToken });
    }
    await openSwitch(page, world.baseUrl);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Switch USSD on' }).click();
    await page.getByRole('alert').filter({ hasText: 'locked' }).waitFor(TIMEOUT);
    await screen(page, 'ussd-settings-locked');
    assert.equal(await ussdEnabled(world, api), false, 'a locked PIN switches nothing');
    await page.context().close();
  });

  it('buys airtime on the sandbox feature phone and sees it in the app’s history', async () => {
    const user = await payer(world);
    const page = await signedInPhone(browser, world.baseUrl, user);

    // Switched on in the app's Settings, with the PIN.
    await openSwitch(page, world.baseUrl);
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Switch USSD on' }).click();
    await page.getByTestId('ussd-saved').filter({ hasText: 'USSD is on' }).waitFor(TIMEOUT);

    // The feature phone, dialling from the person's number.
    await page.goto(`${world.baseUrl}/__sandbox/ussd?phone=${encodeURIComponent(user.phone)}`);
    assert.equal(await page.getByLabel('Phone dialling').inputValue(), user.phone);
    assert.equal(await phoneScreen(page), `Dial ${serviceCode} and press Send.`);
    await screen(page, 'ussd-phone');

    const menu = await keyIn(page, serviceCode);
    assert.match(menu, /1\W+Balance/i);
    assert.match(menu, /2\W+Airtime/i);
    assert.match(menu, /3\W+Data/i);
    assert.match(menu, /4\W+Last 3 transactions/i);
    await screen(page, 'ussd-phone-menu');

    const forWhom = await keyIn(page, '2');
    assert.match(forWhom, /1\W+This phone/i);
    assert.match(await keyIn(page, '1'), /amount/i); // this phone
    const confirm = await keyIn(page, '100'); // ₦100
    assert.match(confirm, new RegExp(`N100 MTN airtime to ${user.phone}`));
    assert.match(confirm, /PIN/);
    const last = await keyIn(page, PIN);
    assert.equal(await page.locator('#screen').getAttribute('data-state'), 'end', `an END: ${last}`);
    assert.match(last, /Processing/);
    const reference = /Ref (\S+)/.exec(last)?.[1]?.replace(/[.,]$/, '');
    assert.ok(reference !== undefined, `the last screen carries the reference: ${last}`);
    await screen(page, 'ussd-phone-end');

    // In the app's history: the ₦100 airtime purchase, its details carrying the same reference.
    await page.goto(`${world.baseUrl}/transactions`);
    const rows = page.getByRole('list', { name: 'Transactions' }).getByRole('listitem');
    const purchase = rows.filter({ hasText: /airtime/i }).filter({ hasText: '₦100' });
    await purchase.first().waitFor(TIMEOUT);
    assert.equal(await purchase.count(), 1, 'bought once');
    await purchase.getByRole('link').click();
    await page.getByText(reference).waitFor(TIMEOUT);
    await screen(page, 'ussd-history-purchase');

    // Settings counts the purchase toward the day's USSD limit.
    await page.goto(`${world.baseUrl}/settings`);
    await page
      .getByTestId('ussd-left-today')
      .filter({ hasText: '₦19,900.00 left today by USSD (₦100.00 paid today).' })
      .waitFor(TIMEOUT);
  });
});
