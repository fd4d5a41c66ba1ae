import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { walletKobo } from '../funding/support.ts';
import { until } from '../helpers/until.ts';
import { failure, get, ok, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { type Buyer, buyCall, buyer, mtn } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// The operators' screens of the web client (API.md section 17.4) in headless Chromium, with the
// admins' second factor on (ADMIN_SECOND_FACTOR=totp) so that its journey is the real one: an admin
// without an authenticator is asked to enrol one by the first admin screen they open, its codes made
// here with `otpauth` from the secret the screen shows, and a later session asked for a code before
// the screen carries on. Then a person frozen (their app says so, on home and in place of the PIN),
// an adjustment proposed by one admin and approved by the other (the person's history shows it), a
// service paused (its buy screen says unavailable before anything is typed, and a payment already on
// its way is refused in plain words) and resumed, and the audit log read with its filters. axe-core
// checks every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000021';
const SECOND_ADMIN_PHONE = '08030000022';
const e164 = (phone: string) => `+234${phone.slice(1)}`;

type Me = { frozen: boolean };
type Entry = { kind: string; description: string; amount: number };

/**
 * Home, once the service has said who the person is: the balance alone may be the copy kept from
 * the last visit, shown before the page's refresh of the session has come back, and a navigation
 * then would cut that refresh off (a reuse of the rotated token, which ends the session).
 */
async function openHome(page: Page): Promise<void> {
  const me = page.waitForResponse((response) => new URL(response.url()).pathname === '/_serverFn/getMe');
  await page.goto(`${new URL(page.url()).origin}/`);
  assert.equal((await me).status(), 200);
}

async function signedInPage(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  return page;
}

/** The code the authenticator shows now, by the service's clock (the sandbox's). */
const codeNow = (world: World, totp: OTPAuth.TOTP) =>
  totp.generate({ timestamp: world.ctx.clock.now().getTime() });

/**
 * The next 30 s step of the sandbox clock: a code is accepted once (replay), so each use of the
 * authenticator in a test comes from a step of its own.
 */
function nextStep(world: World): void {
  world.ctx.sandboxClock!.advance(30);
}

/**
 * Enrols an authenticator through the dialog an admin screen opens for an admin who has none: the
 * secret shown once, a code from it confirmed. The authenticator, as its otpauth:// link describes it.
 */
async function enrolThroughDialog(world: World, page: Page, shot?: string): Promise<OTPAuth.TOTP> {
  const dialog = page.getByRole('dialog', { name: 'Set up your second factor' });
  await dialog.waitFor(TIMEOUT);
  if (shot !== undefined) await screen(page, `${shot}-enrol`);
  await dialog.getByRole('button', { name: 'Set up my authenticator' }).click();
  const secret = dialog.getByTestId('totp-secret');
  await secret.waitFor(TIMEOUT);
  const url = (await dialog.getByTestId('totp-url').textContent()) ?? '';
  const totp = OTPAuth.URI.parse(url);
  assert.ok(totp instanceof OTPAuth.TOTP, 'a TOTP link');
  assert.equal(
    ((await secret.textContent()) ?? '').replace(/\s/g, ''),
    totp.secret.base32,
    'the key shown is the link’s',
  );
  assert.equal(totp.digits, 6);
  assert.equal(totp.period, 30);
  if (shot !== undefined) await screen(page, `${shot}-secret`);
  await dialog.getByLabel('Code the app shows').fill(codeNow(world, totp));
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await dialog.waitFor({ state: 'hidden', ...TIMEOUT });
  return totp;
}

describe('the web client: operators', { skip: skipWithoutChromium, timeout: 600_000 }, () => {
  let world: World;
  let browser: Browser;
  let admin: Page;
  let second: Page;
  let adminTotp: OTPAuth.TOTP;
  let person: Buyer;
  /** The person's own session for the API: the page's refreshes end the session it was given. */
  let api: SignedIn;
  let personPage: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({
      env: {
        ADMIN_PHONES: [ADMIN_PHONE, SECOND_ADMIN_PHONE].map(e164).join(','),
        ADMIN_SECOND_FACTOR: 'totp',
      },
    }));
    admin = await signedInPage(browser, world, await signIn(world, ADMIN_PHONE));
    second = await signedInPage(browser, world, await signIn(world, SECOND_ADMIN_PHONE));
    person = await buyer(world, 5_000);
    personPage = await signedInPhone(browser, world.baseUrl, person);
    api = await signInAgain(world, person.phone);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('has an admin enrol an authenticator when a screen first needs it, then carries on with that screen', async () => {
    await admin.goto(`${world.baseUrl}/admin`);
    const nav = admin.getByRole('navigation', { name: 'Admin screens' });
    await nav.waitFor(TIMEOUT);
    await screen(admin, 'op-01-admin-index');
    await nav.getByRole('link', { name: /^Pauses/ }).click();
    await admin.waitForURL(/\/admin\/pauses$/, TIMEOUT);
    // The list of pauses was refused for want of a second factor: the dialog asks to enrol one.
    adminTotp = await enrolThroughDialog(world, admin, 'op-02');
    // The screen carried on: its list was asked for again and answered.
    await admin.getByText('Nothing is paused.').waitFor(TIMEOUT);

    // The second admin enrols too, from the adjustments screen.
    nextStep(world);
    await second.goto(`${world.baseUrl}/admin/adjustments`);
    await enrolThroughDialog(world, second);
    await second.getByText('Nothing here.').waitFor(TIMEOUT);
  });

  it('asks a new session of an enrolled admin for the code, says what a declined one leaves undone, refuses a wrong one, and retries what was refused', async () => {
    const again = await signedInPage(browser, world, await signInAgain(world, ADMIN_PHONE));
    await again.goto(`${world.baseUrl}/admin/audit`);
    const dialog = again.getByRole('dialog', { name: 'Your authenticator code' });
    await dialog.waitFor(TIMEOUT);
    // Declined: the screen says what it needs, and how to give it.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await again
      .getByRole('alert')
      .filter({
        hasText: 'This needs the code from your authenticator app: open the screen again to enter it.',
      })
      .waitFor(TIMEOUT);
    assert.equal(await dialog.isVisible(), false);
    await again.goto(`${world.baseUrl}/admin/audit`);
    await dialog.waitFor(TIMEOUT);
    nextStep(world);
    const right = codeNow(world, adminTotp);
    const wrong = String((Number(right) + 1) % 1_000_000).padStart(6, '0');
    await dialog.getByLabel('Authenticator code').fill(wrong);
    await dialog.getByRole('button', { name: 'Verify' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor(TIMEOUT);
    await screen(again, 'op-03-verify-wrong-code');
    await dialog.getByLabel('Authenticator code').fill(right);
    await dialog.getByRole('button', { name: 'Verify' }).click();
    await dialog.waitFor({ state: 'hidden', ...TIMEOUT });
    await again.getByRole('list', { name: 'Audit entries' }).getByRole('listitem').first().waitFor(TIMEOUT);
    await again.context().close();
  });

  it('freezes a person, whose app then says so on home and in place of the PIN, and unfreezes them', async () => {
    // Found by the phone the person calls from, written as they write it.
    await admin.goto(`${world.baseUrl}/admin/users`);
    await admin.getByLabel('Phone or user id').fill(person.phone);
    await admin.getByRole('button', { name: 'Find' }).click();
    const state = admin.getByTestId('freeze-state');
    await state.filter({ hasText: 'Not frozen' }).waitFor(TIMEOUT);
    const found = admin.getByTestId('person');
    assert.match((await found.textContent()) ?? '', new RegExp(person.userId));
    assert.match((await found.textContent()) ?? '', /Balance₦5,000\.00/);
    await admin.getByLabel('Reason').fill('Reported stolen phone');
    await screen(admin, 'op-04-admin-users');
    await admin.getByRole('button', { name: 'Freeze', exact: true }).click();
    await admin.getByText('Frozen: they can no longer pay or send money.').waitFor(TIMEOUT);
    // The reason is the operators': shown to them, never to the person.
    await state.filter({ hasText: 'Why: Reported stolen phone' }).waitFor(TIMEOUT);
    assert.equal(ok(await get<Me>(world, 'getMe', {}, { token: api.accessToken })).frozen, true);

    await personPage.goto(`${world.baseUrl}/`);
    const notice = personPage.getByTestId('frozen-notice');
    await notice.waitFor(TIMEOUT);
    assert.match((await notice.textContent()) ?? '', /Your account is frozen.*Contact billrail support/);
    await screen(personPage, 'op-05-home-frozen');

    // Before paying: the summary says it, and no PIN is asked.
    await personPage.goto(`${world.baseUrl}/buy/airtime`);
    await personPage.getByLabel('Phone number').fill(mtn('5'));
    await personPage.getByLabel('Amount (₦)').fill('100');
    await personPage.getByRole('button', { name: 'Continue' }).click();
    await personPage.getByTestId('frozen-notice').waitFor(TIMEOUT);
    assert.equal(
      await personPage.getByLabel('Transaction PIN').count(),
      0,
      'no PIN asked of a frozen account',
    );
    await screen(personPage, 'op-06-pay-frozen');
    const refused = failure(
      await buyCall(world, api, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
    );
    assert.equal(refused.code, 'ACCOUNT_FROZEN');

    await admin.getByLabel('Reason').fill('Phone recovered; the person called');
    await admin.getByRole('button', { name: 'Unfreeze' }).click();
    await admin.getByText('Unfrozen: they can pay and send money again.').waitFor(TIMEOUT);
    await state.filter({ hasText: 'Not frozen' }).waitFor(TIMEOUT);
    await openHome(personPage);
    assert.equal(await personPage.getByTestId('frozen-notice').count(), 0);
  });

  it('tells a person paying when an operator froze the account meanwhile, and charges nothing', async () => {
    const before = await walletKobo(world, person.userId);
    await personPage.goto(`${world.baseUrl}/buy/airtime`);
    await personPage.getByLabel('Phone number').fill(mtn('5'));
    await personPage.getByLabel('Amount (₦)').fill('100');
    await personPage.getByRole('button', { name: 'Continue' }).click();
    await personPage.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await personPage.getByLabel('Transaction PIN').fill('2580');

    // Found by id this time.
    await admin.goto(`${world.baseUrl}/admin/users`);
    await admin.getByLabel('Phone or user id').fill(person.userId);
    await admin.getByRole('button', { name: 'Find' }).click();
    await admin.getByTestId('freeze-state').filter({ hasText: 'Not frozen' }).waitFor(TIMEOUT);
    await admin.getByLabel('Reason').fill('Second report');
    await admin.getByRole('button', { name: 'Freeze', exact: true }).click();
    await admin.getByText(/^Frozen:/).waitFor(TIMEOUT);

    await personPage.getByRole('button', { name: /^Pay ₦/ }).click();
    await personPage
      .getByRole('alert')
      .filter({ hasText: 'Your account is frozen: no money can leave it for now, and nothing was charged.' })
      .waitFor(TIMEOUT);
    await personPage.getByTestId('frozen-notice').waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, person.userId), before);

    await admin.getByLabel('Reason').fill('Cleared');
    await admin.getByRole('button', { name: 'Unfreeze' }).click();
    await admin.getByText(/^Unfrozen:/).waitFor(TIMEOUT);
  });

  it('has one admin propose an adjustment and another approve it; the person sees it in their history', async () => {
    const before = await walletKobo(world, person.userId);
    await admin.goto(`${world.baseUrl}/admin/adjustments`);
    await admin.getByLabel('Phone or user id').fill(person.phone);
    await admin.getByLabel('Direction').selectOption('credit');
    await admin.getByLabel('Amount (₦)').fill('1,500.50');
    await admin.getByLabel('Reason (the person reads it)').fill('Top-up of 20 Nov credited short');
    await admin.getByRole('button', { name: 'Propose' }).click();
    await admin.getByText('Another admin must approve it before the money moves.').waitFor(TIMEOUT);
    const mine = admin.getByTestId('adjustment').filter({ hasText: 'Top-up of 20 Nov credited short' });
    await mine.getByText('You proposed this: another admin must approve or reject it.').waitFor(TIMEOUT);
    assert.equal(
      await mine.getByRole('button', { name: 'Approve' }).count(),
      0,
      'the proposer is not offered Approve',
    );
    await screen(admin, 'op-07-adjustment-proposed');
    assert.equal(await walletKobo(world, person.userId), before, 'nothing moves on a proposal');

    await second.goto(`${world.baseUrl}/admin/adjustments`);
    const theirs = second.getByTestId('adjustment').filter({ hasText: 'Top-up of 20 Nov credited short' });
    await theirs.waitFor(TIMEOUT);
    await screen(second, 'op-08-adjustment-to-approve');
    await theirs.getByRole('button', { name: 'Approve' }).click();
    await theirs.waitFor({ state: 'detached', ...TIMEOUT });
    assert.equal(await walletKobo(world, person.userId), before + 150_050n);

    await second.getByLabel('Show').selectOption('approved');
    await second
      .getByTestId('adjustment')
      .filter({ hasText: 'Top-up of 20 Nov credited short' })
      .waitFor(TIMEOUT);

    const listed = ok(
      await get<{ items: Entry[] }>(world, 'listTransactions', { limit: 5 }, { token: api.accessToken }),
    );
    assert.equal(listed.items[0]?.kind, 'adjustment');
    await personPage.goto(`${world.baseUrl}/transactions`);
    const row = personPage.getByRole('list', { name: 'Transactions' }).getByRole('listitem').first();
    await row.filter({ hasText: 'Adjustment' }).waitFor(TIMEOUT);
    assert.match((await row.textContent()) ?? '', /Top-up of 20 Nov credited short/);
    assert.match((await row.textContent()) ?? '', /₦1,500\.50/);
    await screen(personPage, 'op-09-history-adjustment');
  });

  it('pauses a service, whose buy screen then says unavailable before anything is typed, and resumes it', async () => {
    // A payment already on its way: its summary is open when the pause comes.
    await personPage.goto(`${world.baseUrl}/buy/airtime`);
    await personPage.getByLabel('Phone number').fill(mtn('5'));
    await personPage.getByLabel('Amount (₦)').fill('100');
    await personPage.getByRole('button', { name: 'Continue' }).click();
    await personPage.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    await personPage.getByLabel('Transaction PIN').fill('2580');

    await admin.goto(`${world.baseUrl}/admin/pauses`);
    await admin.getByLabel('Service', { exact: true }).selectOption({ label: 'Airtime' });
    await admin.getByLabel('Reason').fill('The airtime provider is down');
    await admin.getByRole('button', { name: 'Pause', exact: true }).click();
    const pause = admin.getByTestId('pause').filter({ hasText: 'Airtime through every provider' });
    await pause.waitFor(TIMEOUT);
    await screen(admin, 'op-10-admin-pauses');

    const before = await walletKobo(world, person.userId);
    await personPage.getByRole('button', { name: /^Pay ₦/ }).click();
    await personPage
      .getByRole('alert')
      .filter({ hasText: 'Airtime is paused for now. Nothing was charged; please try again later.' })
      .waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, person.userId), before);
    const refused = failure(
      await buyCall(world, api, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 }),
    );
    assert.equal(refused.code, 'SERVICE_PAUSED');

    // Opened afresh, the buy screen says so before anything is typed.
    await personPage.goto(`${world.baseUrl}/buy/airtime`);
    const unavailable = personPage.getByTestId('service-paused');
    await unavailable.waitFor(TIMEOUT);
    assert.match(
      (await unavailable.textContent()) ?? '',
      /Airtime is unavailable for now.*The airtime provider is down/,
    );
    assert.equal(await personPage.getByLabel('Phone number').count(), 0, 'nothing to type while paused');
    await screen(personPage, 'op-11-buy-paused');

    await pause.getByRole('button', { name: 'Resume Airtime' }).click();
    await admin.getByText('Nothing is paused.').waitFor(TIMEOUT);
    await personPage.goto(`${world.baseUrl}/buy/airtime`);
    await personPage.getByLabel('Phone number').waitFor(TIMEOUT);
    assert.equal(await personPage.getByTestId('service-paused').count(), 0);
  });

  it('reads the audit log, filtered by operation, admin and day', async () => {
    await admin.goto(`${world.baseUrl}/admin/audit`);
    const entries = admin.getByRole('list', { name: 'Audit entries' });
    await entries.getByRole('listitem').first().waitFor(TIMEOUT);
    await admin.getByLabel('Operation').selectOption('adminFreezeUser');
    const freeze = entries.getByTestId('audit-entry');
    await until(
      async () =>
        (await freeze.count()) === 2 && (await freeze.filter({ hasText: 'adminFreezeUser' }).count()) === 2,
      'the two freezes listed alone',
    );
    assert.match(
      (await freeze.first().textContent()) ?? '',
      /Second report/,
      'newest first, with what was sent',
    );
    await screen(admin, 'op-12-audit-log');

    // The second admin approved; the first admin froze: filtered by the second, no freeze.
    await admin.getByLabel('Operation').selectOption('adminApproveAdjustment');
    await freeze.first().waitFor(TIMEOUT);
    await admin.getByTestId('audit-count').filter({ hasText: /of 1$/ }).waitFor(TIMEOUT);
    await freeze.first().getByRole('button', { name: "Only this admin's" }).click();
    await admin.getByLabel('Operation').selectOption('adminFreezeUser');
    await admin
      .getByTestId('audit-count')
      .filter({ hasText: 'Nothing matches these filters.' })
      .waitFor(TIMEOUT);

    // Everything, a page of 20 at a time: every screen's reads and refusals are in it too, and each
    // read of the log itself adds one, so the total grows as the pages are read.
    await admin.getByRole('button', { name: 'Clear filters' }).click();
    const count = admin.getByTestId('audit-count');
    await count.filter({ hasText: /^1 to 20 of \d+$/ }).waitFor(TIMEOUT);
    const total = Number(/of (\d+)$/.exec((await count.textContent()) ?? '')?.[1]);
    assert.ok(total > 20, `more than a page (${total})`);
    const first = await freeze.first().textContent();
    await admin.getByRole('button', { name: 'Older' }).click();
    await count.filter({ hasText: /^21 to \d+ of \d+$/ }).waitFor(TIMEOUT);
    // The count follows the click at once; the entries, once the page has come (the last is kept meanwhile).
    await until(async () => (await freeze.first().textContent()) !== first, 'another page of entries');
    await admin.getByRole('button', { name: 'Newer' }).click();
    await count.filter({ hasText: /^1 to 20 of \d+$/ }).waitFor(TIMEOUT);

    // A day with nothing in it.
    await admin.getByLabel('From').fill('2020-01-01');
    await admin.getByLabel('To').fill('2020-01-02');
    await admin
      .getByTestId('audit-count')
      .filter({ hasText: 'Nothing matches these filters.' })
      .waitFor(TIMEOUT);
  });

  it("resets another admin's lost authenticator: their sessions end, and they enrol anew", async () => {
    await admin.goto(`${world.baseUrl}/admin/users`);
    await admin.getByLabel('Phone or user id').fill(SECOND_ADMIN_PHONE);
    await admin.getByRole('button', { name: 'Find' }).click();
    await admin.getByTestId('person').waitFor(TIMEOUT);
    await admin.getByText('Reset their authenticator').click();
    await admin.getByLabel('How you confirmed it is them').fill('Called them back on their phone on file');
    await admin.getByRole('button', { name: 'Reset the authenticator' }).click();
    await admin.getByText(/^Reset: [1-9]\d* sessions? ended\./).waitFor(TIMEOUT);
    await screen(admin, 'op-13-reset-authenticator');

    // Their own account offers no reset: another admin must do it.
    await admin.getByLabel('Phone or user id').fill(ADMIN_PHONE);
    await admin.getByRole('button', { name: 'Find' }).click();
    await admin
      .getByTestId('person')
      .filter({ hasText: e164(ADMIN_PHONE).slice(4) })
      .waitFor(TIMEOUT);
    assert.equal(await admin.getByText('Reset their authenticator').count(), 0);

    // Signed in again, the second admin is asked to enrol once more.
    const back = await signedInPage(browser, world, await signInAgain(world, SECOND_ADMIN_PHONE));
    await back.goto(`${world.baseUrl}/admin/pauses`);
    nextStep(world);
    await enrolThroughDialog(world, back);
    await back.getByText('Nothing is paused.').waitFor(TIMEOUT);
    await back.context().close();
  });
});
