import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { walletKobo } from '../funding/support.ts';
import { get, ok, post, readSms, type SignedIn, signIn, type World } from '../helpers/world.ts';
import {
  advanceSandboxClock,
  deferred,
  kycUser,
  matchingAccount,
  matchingNin,
  pngDocument,
  userAtTier,
} from '../kyc/kyc-support.ts';
import { fund, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// Verification and data in the web client, in headless Chromium: a person submits Tier 2 (NIN) and
// Tier 3 (bank account and a document upload) through the screens, an admin approves Tier 3 on the
// review screen, and the person buys a data plan chosen from the catalogue. axe-core checks every
// screen; each is saved as a 360×800 screenshot.

/** What the busy-button test uses of the page, which runs in the browser. */
type ObservedPage = {
  document: {
    querySelectorAll(selector: string): Iterable<{ textContent: string | null; disabled: boolean }>;
    body: unknown;
  };
  MutationObserver: new (
    callback: () => void,
  ) => { observe(target: unknown, options: Record<string, boolean>): void };
};

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000002';

/** The user's tier as the service keeps it (the page's refresh rotated the API session's tokens). */
async function tierOf(world: World, user: SignedIn): Promise<number> {
  const row = await world.ctx.db
    .selectFrom('users')
    .select('kyc_tier')
    .where('id', '=', user.userId)
    .executeTakeFirstOrThrow();
  return row.kyc_tier;
}

async function signedInPage(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  return page;
}

describe('the web client: verification, admin review, data', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let user: SignedIn;
  let page: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}` } }));
    user = await userAtTier(world, 1);
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    page = await signedInPage(browser, world, user);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('passes the Tier 1 face check in the provider page and comes back verified', async () => {
    const newcomer = await kycUser(world);
    const own = await signedInPage(browser, world, newcomer);
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByTestId('tier-1').filter({ hasText: 'not started' }).waitFor(TIMEOUT);
    await screen(own, '29-kyc-tier1');
    await own.getByRole('button', { name: 'Start face check' }).click();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    await own.click('#pass');
    await own.getByTestId('tier-1').filter({ hasText: 'approved' }).waitFor(TIMEOUT);
    assert.equal(own.url(), `${world.baseUrl}/verify`, 'the spent token leaves the address bar');
    assert.equal(await tierOf(world, newcomer), 1);
    await own.context().close();
  });

  it('never submits a face check this device did not start: a crafted link changes nothing', async () => {
    const person = await kycUser(world);
    const other = await kycUser(world);
    // Someone else's own check, and the token the provider's widget gave them.
    const check = ok(
      await get<{ state: string }>(world, 'getKycLivenessUrl', {}, { token: other.accessToken }),
    );
    const widget = await fetch(`${world.baseUrl}/__sandbox/kyc/liveness/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ outcome: 'pass' }),
    });
    const { token } = (await widget.json()) as { token: string };
    const own = await signedInPage(browser, world, person);
    const submissions: string[] = [];
    own.on('request', (request) => {
      if (request.url().includes('/_serverFn/submitKycTier1')) submissions.push(request.url());
    });
    for (const link of [
      `/verify?livenessToken=${encodeURIComponent(token)}`,
      `/verify?livenessToken=${encodeURIComponent(token)}&state=${encodeURIComponent(check.state)}`,
    ]) {
      await own.goto(`${world.baseUrl}${link}`);
      await own.getByTestId('liveness-ignored').waitFor(TIMEOUT);
      await own.waitForURL(`${world.baseUrl}/verify`, TIMEOUT);
      await own.getByTestId('tier-1').filter({ hasText: 'not started' }).waitFor(TIMEOUT);
    }
    assert.deepEqual(submissions, [], 'the client submitted nothing');
    assert.equal(await tierOf(world, person), 0);
    // The token was not spent: the person who did the check can still use it with their own state.
    const theirs = ok(
      await post<{ status: string }>(
        world,
        'submitKycTier1',
        { livenessToken: token, state: check.state },
        { token: other.accessToken },
      ),
    );
    assert.equal(theirs.status, 'approved');
    await own.context().close();
  });

  it('keeps a face check that comes back while signed out out of every address, and uses it after sign-in', async () => {
    const person = await kycUser(world);
    const own = await signedInPage(browser, world, person);
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByRole('button', { name: 'Start face check' }).click();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    // The session ends while the person is on the provider's page (signed out in another tab, or it
    // expired): they come back to a sign-in screen.
    await own.evaluate(() => localStorage.removeItem('billrail.refresh'));
    await own.click('#pass');
    await own.waitForURL(/\/sign-in/, TIMEOUT);
    await own.getByLabel('Phone number').waitFor(TIMEOUT);
    const secret = /livenessToken|state/;
    assert.doesNotMatch(decodeURIComponent(own.url()), secret, 'the sign-in address carries no token');
    assert.equal(own.url(), `${world.baseUrl}/sign-in?next=%2Fverify`);
    await screen(own, '29b-kyc-tier1-signed-out');

    await advanceSandboxClock(world, 61); // the API sign-in just sent this phone a code
    await own.getByLabel('Phone number').fill(person.phone);
    await own.getByRole('button', { name: 'Send code' }).click();
    await own.getByLabel('Code').waitFor(TIMEOUT);
    const { code } = await readSms(world, `+234${person.phone.slice(1)}`);
    await own.getByLabel('Code').fill(code);
    await own.getByRole('button', { name: 'Sign in' }).click();
    await own.getByTestId('tier-1').filter({ hasText: 'approved' }).waitFor(TIMEOUT);
    assert.equal(own.url(), `${world.baseUrl}/verify`);
    assert.equal(await tierOf(world, person), 1);
    assert.deepEqual(
      await own.evaluate(() => Object.keys(sessionStorage)),
      [],
      'nothing of the check is left in the tab',
    );
    // Every entry of this tab's history, as the browser keeps it: none holds the token, and none
    // of this app's its state (the provider's page is given the state, by design).
    const cdp = await own.context().newCDPSession(own);
    const { entries } = (await cdp.send('Page.getNavigationHistory')) as { entries: Array<{ url: string }> };
    const visited = entries.map((entry) => entry.url);
    assert.ok(visited.includes(`${world.baseUrl}/sign-in?next=%2Fverify`), visited.join(', '));
    for (const url of visited) {
      assert.doesNotMatch(decodeURIComponent(url), /livenessToken/, `history holds ${url}`);
      if (!url.includes('/__sandbox/')) assert.doesNotMatch(decodeURIComponent(url), secret, url);
    }
    // And Back goes to the sign-in screen as it was, with nothing of the check.
    await own.goBack({ waitUntil: 'commit' });
    assert.equal(own.url(), `${world.baseUrl}/sign-in?next=%2Fverify`);
    await own.context().close();
  });

  it('says a check finished in another window was not matched, in a live region that was there all along', async () => {
    const person = await kycUser(world);
    const own = await signedInPage(browser, world, person);
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByTestId('tier-1').filter({ hasText: 'not started' }).waitFor(TIMEOUT);
    const region = own.getByTestId('liveness-ignored');
    assert.equal(
      await region.getAttribute('role'),
      'status',
      'the live region is in the page before any text',
    );
    assert.equal(await region.getAttribute('aria-live'), 'polite');
    await own.getByRole('button', { name: 'Start face check' }).click();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    const other = await own.context().newPage(); // a new tab: none of this tab's sessionStorage
    await other.goto(own.url());
    await other.click('#pass');
    await other.getByTestId('liveness-ignored').waitFor(TIMEOUT);
    assert.equal(
      (await other.getByTestId('liveness-ignored').textContent())?.trim(),
      'We could not match this face check to one started in this window, so it was not used. Start the face check again.',
    );
    await screen(other, '29c-kyc-tier1-unmatched');
    assert.equal(await tierOf(world, person), 0);
    await own.context().close();
  });

  it('shows the approval, not "You are offline", when the submit reached the service but its answer was lost', async () => {
    const person = await kycUser(world);
    const own = await signedInPage(browser, world, person);
    await own.route('**/_serverFn/submitKycTier1', async (route) => {
      await route.fetch();
      await route.abort('connectionreset');
    });
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByRole('button', { name: 'Start face check' }).click();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    await own.click('#pass');
    await own.getByTestId('tier-1').filter({ hasText: 'approved' }).waitFor(TIMEOUT);
    assert.equal(await tierOf(world, person), 1);
    assert.equal(
      await own.getByRole('alert').filter({ hasText: /\S/ }).count(),
      0,
      'no stale error beside the approval',
    );
    await own.context().close();
  });

  it('keeps Start face check busy while the provider page loads, so a second tap starts nothing', async () => {
    const person = await kycUser(world);
    const own = await signedInPage(browser, world, person);
    const starts: string[] = [];
    own.on('request', (request) => {
      if (request.url().includes('/_serverFn/getKycLivenessUrl')) starts.push(request.url());
    });
    const loading = deferred<void>();
    const release = deferred<void>();
    await own.route('**/__sandbox/liveness**', async (route) => {
      loading.resolve();
      await release.promise;
      await route.continue();
    });
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByRole('button', { name: 'Start face check' }).waitFor(TIMEOUT);
    // The page cannot be evaluated while it navigates away, so it says itself, on the console, if
    // the button comes back.
    await own.evaluate(() => {
      // The page's own globals, typed here for the service's compiler (which has no DOM library).
      const { document, MutationObserver } = globalThis as unknown as ObservedPage;
      // The button says "Please wait…" while busy.
      const button = () =>
        [...document.querySelectorAll('button')].find((b) =>
          /^(Start face check|Please wait…)$/.test(b.textContent ?? ''),
        );
      let busy = false;
      new MutationObserver(() => {
        const now = button();
        if (now?.disabled) busy = true;
        else if (busy && now?.textContent === 'Start face check') console.log('start-face-check-enabled');
      }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    const cameBack = own
      .waitForEvent('console', {
        predicate: (message) => message.text() === 'start-face-check-enabled',
        timeout: 2_000,
      })
      .then(
        () => true,
        () => false,
      );
    // noWaitAfter: the click must not wait for the navigation it starts, which is held until later.
    await own.getByRole('button', { name: 'Start face check' }).click({ noWaitAfter: true });
    await loading.promise;
    // A short bounded look for it coming back: the only way to see that something does not happen.
    assert.equal(await cameBack, false, 'Start face check is enabled again while the provider page loads');
    release.resolve();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    assert.equal(starts.length, 1);
    await own.context().close();
  });

  it('submits Tier 2 and Tier 3 (with a document upload) through the screens', async () => {
    await page.goto(`${world.baseUrl}/verify`);
    await page.getByTestId('tier-1').filter({ hasText: 'approved' }).waitFor(TIMEOUT);
    await page.getByLabel('NIN', { exact: true }).fill(matchingNin());
    await screen(page, '30-kyc-tier2');
    await page.getByRole('button', { name: 'Submit NIN' }).click();
    await page.getByTestId('tier-2').filter({ hasText: 'approved' }).waitFor(TIMEOUT);

    const bank = page.getByLabel('Bank', { exact: true });
    await bank
      .locator('option', { hasText: 'Guaranty Trust Bank' })
      .waitFor({ state: 'attached', ...TIMEOUT });
    await bank.selectOption({ label: 'Guaranty Trust Bank' });
    await page.getByLabel('Account number').fill(matchingAccount());
    await page
      .getByLabel('Photo or PDF of the document')
      .setInputFiles({ name: 'passport.png', mimeType: 'image/png', buffer: pngDocument() });
    await screen(page, '31-kyc-tier3');
    await page.getByRole('button', { name: 'Submit for review' }).click();
    await page.getByTestId('tier-3').filter({ hasText: 'being checked' }).waitFor(TIMEOUT);
    assert.equal(await tierOf(world, user), 2);
  });

  it('lets an admin approve the Tier 3 submission on the review screen', async () => {
    const admin = await signIn(world, ADMIN_PHONE);
    const adminPage = await signedInPage(browser, world, admin);
    await adminPage.goto(`${world.baseUrl}/admin/kyc`);
    const submission = adminPage.getByRole('listitem').filter({ hasText: 'tier 3' });
    await submission.waitFor(TIMEOUT);
    await screen(adminPage, '32-admin-kyc');
    await submission.getByRole('button', { name: 'Approve' }).click();
    await adminPage.getByText('Nothing is waiting.').waitFor(TIMEOUT);
    assert.equal(await tierOf(world, user), 3);
    await adminPage.context().close();
  });

  it('buys a data plan chosen from the catalogue, paying the price shown', async () => {
    await fund(world, user.userId, 5_000);
    await page.goto(`${world.baseUrl}/buy/data`);
    await page.getByLabel('Phone number').fill(mtn('5'));
    // The first plan card of the first type (the radio is visually hidden: a finger taps its card).
    await page.getByRole('group', { name: 'Plan', exact: true }).locator('label').first().click(TIMEOUT);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    const price = (await page.getByTestId('price').textContent()) ?? '';
    const kobo = BigInt(Math.round(Number(price.replace(/[₦,]/g, '')) * 100));
    await page.getByLabel('Transaction PIN').fill(PIN);
    await screen(page, '33-buy-data');
    await page.getByRole('button', { name: /^Pay ₦/ }).click();
    await page.waitForURL(/\/transactions\/[0-9a-f-]{36}$/, TIMEOUT);
    await page.getByTestId('status').filter({ hasText: 'Successful' }).waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, user.userId), 500_000n - kobo);
  });

  // Last: it moves the service's clock past the check's 30 minutes.
  it('says an expired face check expired, not that something the person typed is wrong', async () => {
    const person = await kycUser(world);
    const own = await signedInPage(browser, world, person);
    await own.goto(`${world.baseUrl}/verify`);
    await own.getByRole('button', { name: 'Start face check' }).click();
    await own.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    await advanceSandboxClock(world, 1900);
    await own.click('#pass');
    const alert = own.getByRole('alert').filter({ hasText: /\S/ });
    await alert.waitFor(TIMEOUT);
    assert.equal(
      (await alert.textContent())?.trim(),
      'That face check expired or was already used. Start the face check again.',
    );
    await own.getByRole('button', { name: 'Start face check' }).waitFor(TIMEOUT);
    await screen(own, '29d-kyc-tier1-expired');
    assert.equal(await tierOf(world, person), 0);
    await own.context().close();
  });
});
