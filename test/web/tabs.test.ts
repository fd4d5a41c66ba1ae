import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page, Request } from 'playwright-core';
import { signOut } from '../../src/auth/sessions.ts';
import { sha256Hex } from '../../src/shared/keyed-hash.ts';
import { e164 } from '../auth/support.ts';
import { until } from '../helpers/until.ts';
import { ok, post, readSms, signIn, type World } from '../helpers/world.ts';
import { advanceClock, fund, mtn, PIN } from '../vtu/purchase-support.ts';
import { closeBrowserWorld, openBrowserWorld, phonePage, screen, skipWithoutChromium } from './support.ts';

// Several tabs of one browser share one session (issue 26 item 1). Each tab keeps its access token
// in memory and the refresh token is shared, and the service rotates it on every refresh and
// revokes the whole session when a rotated one comes back: two tabs refreshing with the same token
// at once used to sign the person out of both. Three tabs are opened and reloaded together, again
// and again, each time after the access token has expired (the sandbox clock moves past its 15
// minutes); then signing out in one tab signs out all, and signing in in one reaches the others.

const TIMEOUT = { timeout: 30_000 };
const ACCESS_TOKEN_LIFETIME_SECONDS = 15 * 60;

describe('one session shared by several tabs', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let context: BrowserContext;
  let tabs: Page[];
  let phone: string;
  let userId: string;
  /** The tabs' calls to the service that have not been answered yet. */
  const inFlight = new Set<Request>();

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    const first = await phonePage(browser);
    context = first.context();
    phone = mtn('4');
    const user = await signIn(world, phone);
    userId = user.userId;
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    await fund(world, userId, 1_234);
    // What the sign-in screen keeps: the refresh token; each tab gets its access token itself. It is
    // put in from a page of the origin that is not the app, so that no screen uses it before the tabs.
    await first.goto(`${world.baseUrl}/openapi.json`);
    await first.evaluate((token) => localStorage.setItem('billrail.refresh', token), user.refreshToken);
    tabs = [first, await context.newPage(), await context.newPage()];
    context.on('request', (request) => {
      if (request.url().includes('/_serverFn/')) inFlight.add(request);
    });
    context.on('requestfinished', (request) => inFlight.delete(request));
    context.on('requestfailed', (request) => inFlight.delete(request));
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** The person's sessions at the service: how many, and how many were revoked (and why). */
  async function sessionsAtService() {
    return world.ctx.db
      .selectFrom('sessions')
      .select(['id', 'revoked_at', 'revoked_reason'])
      .where('user_id', '=', userId)
      .execute();
  }

  /**
   * Every tab shows the balance, and none is waiting on the service any more. Reloading a tab while
   * its refresh is in flight throws away the rotated token the service sent back, and the next use
   * of the old one is a reuse that revokes the session: no client can prevent that (only a service
   * that forgave a rotated token for a moment could), so the tabs are reloaded when they are idle.
   */
  async function everyTabShowsTheBalance(): Promise<void> {
    await Promise.all(
      tabs.map((tab) => tab.getByTestId('balance').filter({ hasText: '₦1,234.00' }).waitFor(TIMEOUT)),
    );
    for (const tab of tabs) assert.doesNotMatch(tab.url(), /\/sign-in/);
    await until(() => inFlight.size === 0, 'the tabs to finish their calls');
  }

  /**
   * Loads every tab at once, and waits until each has read the wallet from the service (home shows
   * the last balance it kept before that, whether or not the person is still signed in) and all are
   * idle again.
   */
  async function loadEveryTab(load: (tab: Page) => Promise<unknown>): Promise<void> {
    await Promise.all(
      tabs.map(async (tab) => {
        const wallet = tab.waitForResponse(
          (response) => response.url().includes('/_serverFn/getWallet') && response.ok(),
          TIMEOUT,
        );
        await load(tab);
        await wallet;
      }),
    );
    await everyTabShowsTheBalance();
  }

  /** The refresh token every tab reads now (each tab's copy of localStorage catches up by itself). */
  async function keptRefreshToken(): Promise<string> {
    let kept: Array<string | null> = [];
    await until(async () => {
      kept = await Promise.all(
        tabs.map((tab) => tab.evaluate(() => localStorage.getItem('billrail.refresh'))),
      );
      return kept[0] !== null && kept.every((token) => token === kept[0]);
    }, 'the tabs to agree on the refresh token');
    return kept[0]!;
  }

  it('keeps three tabs signed in when they are opened and reloaded at once after the access token expired', async () => {
    await advanceClock(world, ACCESS_TOKEN_LIFETIME_SECONDS + 60);
    await loadEveryTab((tab) => tab.goto(`${world.baseUrl}/`));
    for (let round = 1; round <= 4; round += 1) {
      await advanceClock(world, ACCESS_TOKEN_LIFETIME_SECONDS + 60);
      await loadEveryTab((tab) => tab.reload());
    }
    await screen(tabs[2]!, '76-tabs-home');

    const sessions = await sessionsAtService();
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]?.revoked_reason, null, 'the session was never revoked');

    // The refresh token the tabs keep is the session's live one: never rotated, its session valid.
    const live = await world.ctx.db
      .selectFrom('refresh_tokens')
      .select(['rotated_at', 'session_id'])
      .where('token_hash', '=', sha256Hex(await keptRefreshToken()))
      .executeTakeFirstOrThrow();
    assert.equal(live.rotated_at, null, 'the refresh token the tabs keep has not been used');
    assert.equal(live.session_id, sessions[0]?.id);
  });

  it('signs every tab out when the person signs out in one', async () => {
    const [settings, ...others] = tabs as [Page, ...Page[]];
    await settings.goto(`${world.baseUrl}/settings`);
    await settings.getByRole('button', { name: 'Sign out' }).click();
    await settings.waitForURL(/\/sign-in/, TIMEOUT);
    // The other tabs go to the sign-in screen by themselves, and nothing of the person stays on them.
    await Promise.all(others.map((tab) => tab.getByLabel('Phone number').waitFor(TIMEOUT)));
    for (const tab of others) {
      assert.match(tab.url(), /\/sign-in\?next=%2F$/);
      assert.equal(await tab.getByTestId('balance').count(), 0, 'no balance left showing');
    }
    await screen(others[0]!, '77-tabs-signed-out-elsewhere');
    assert.equal((await sessionsAtService())[0]?.revoked_reason, 'signed_out');
  });

  it('takes every tab in when the person signs in in one', async () => {
    const [signing, ...others] = tabs as [Page, ...Page[]];
    await advanceClock(world, 61); // one code per phone per minute
    await signing.getByLabel('Phone number').fill(phone);
    await signing.getByRole('button', { name: 'Send code' }).click();
    await signing.getByLabel('Code').waitFor(TIMEOUT);
    await signing.getByLabel('Code').fill((await readSms(world, e164(phone))).code);
    await signing.getByRole('button', { name: 'Sign in' }).click();
    await everyTabShowsTheBalance();
    for (const tab of others) assert.doesNotMatch(tab.url(), /\/sign-in/);
  });
  it('sends a tab whose session the service ended to sign-in, and forgets the balance it kept', async () => {
    const [tab] = tabs as [Page, ...Page[]];
    await tab.goto(`${world.baseUrl}/`);
    await tab.getByTestId('balance').waitFor(TIMEOUT);
    const keptKeys = () =>
      tab.evaluate(() => Object.keys(localStorage).filter((key) => key.startsWith('billrail.kept.')));
    assert.notDeepEqual(await keptKeys(), [], 'the balance is kept for offline reading');
    // The service ends the session (as it does after 30 days, or a refresh token used twice): the
    // tab finds out when it next needs a token.
    const [live] = (await sessionsAtService()).filter((s) => s.revoked_at === null);
    assert.ok(live !== undefined);
    await signOut({ db: world.ctx.db, clock: world.ctx.clock }, live.id);
    await tab.reload();
    await tab.waitForURL(/\/sign-in\?next=%2F$/, TIMEOUT);
    await tab.getByLabel('Phone number').waitFor(TIMEOUT);
    assert.equal(await tab.getByTestId('balance').count(), 0, 'no balance left showing');
    assert.equal(await tab.getByText(/^Offline:/).count(), 0);
    assert.deepEqual(await keptKeys(), []);
    await screen(tab, '77b-tabs-session-ended');
  });
});
