import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureWebBuilt } from '../../src/web-build.ts';
import { e164 } from '../auth/support.ts';
import { createWorld, ok, post, readSms, signIn, type World } from '../helpers/world.ts';
import { advanceClock, fund, mtn, PIN } from '../vtu/purchase-support.ts';
import { launchChromium, phonePage, screen, skipWithoutChromium } from './support.ts';

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

  before(async () => {
    await ensureWebBuilt({});
    world = await createWorld();
    browser = await launchChromium();
    const first = await phonePage(browser);
    context = first.context();
    phone = mtn('4');
    const user = await signIn(world, phone);
    userId = user.userId;
    ok(await post(world, 'setTransactionPin', { pin: PIN }, { token: user.accessToken }));
    await fund(world, userId, 1_234);
    // What the sign-in screen keeps: the refresh token; each tab gets its access token itself.
    await first.goto(`${world.baseUrl}/sign-in`);
    await first.evaluate((token) => localStorage.setItem('billrail.refresh', token), user.refreshToken);
    tabs = [first, await context.newPage(), await context.newPage()];
  });
  after(async () => {
    await browser?.close();
    await world?.close();
  });

  /** The person's sessions at the service: how many, and how many were revoked (and why). */
  async function sessionsAtService() {
    return world.ctx.db
      .selectFrom('sessions')
      .select(['id', 'revoked_at', 'revoked_reason'])
      .where('user_id', '=', userId)
      .execute();
  }

  async function everyTabShowsTheBalance(): Promise<void> {
    await Promise.all(
      tabs.map((tab) => tab.getByTestId('balance').filter({ hasText: '₦1,234.00' }).waitFor(TIMEOUT)),
    );
    for (const tab of tabs) assert.doesNotMatch(tab.url(), /\/sign-in/);
  }

  it('keeps three tabs signed in when they are opened and reloaded at once after the access token expired', async () => {
    await advanceClock(world, ACCESS_TOKEN_LIFETIME_SECONDS + 60);
    await Promise.all(tabs.map((tab) => tab.goto(`${world.baseUrl}/`)));
    await everyTabShowsTheBalance();

    for (let round = 1; round <= 4; round += 1) {
      await advanceClock(world, ACCESS_TOKEN_LIFETIME_SECONDS + 60);
      await Promise.all(tabs.map((tab) => tab.reload()));
      await everyTabShowsTheBalance();
    }
    await screen(tabs[2]!, '70-tabs-home');

    const sessions = await sessionsAtService();
    assert.equal(sessions.length, 1);
    assert.equal(sessions[0]?.revoked_reason, null, 'the session was never revoked');

    // The refresh token the tabs keep is the session's current one: the service takes it. (The tabs
    // are idle now; the next one to need a token will find this one rotated and use the new one.)
    const refreshToken = await tabs[0]!.evaluate(() => localStorage.getItem('billrail.refresh'));
    assert.ok(refreshToken !== null);
    const rotated = ok(
      await post<{ accessToken: string; refreshToken: string }>(world, 'refreshSession', { refreshToken }),
    );
    await tabs[1]!.evaluate((token) => localStorage.setItem('billrail.refresh', token), rotated.refreshToken);
    await advanceClock(world, ACCESS_TOKEN_LIFETIME_SECONDS + 60);
    await Promise.all(tabs.map((tab) => tab.reload()));
    await everyTabShowsTheBalance();
    assert.equal((await sessionsAtService())[0]?.revoked_reason, null);
  });

  it('signs every tab out when the person signs out in one', async () => {
    const [settings, ...others] = tabs as [Page, ...Page[]];
    await settings.goto(`${world.baseUrl}/settings`);
    await settings.getByRole('button', { name: 'Sign out' }).click();
    await settings.waitForURL(/\/sign-in/, TIMEOUT);
    await Promise.all(others.map((tab) => tab.waitForURL(/\/sign-in/, TIMEOUT)));
    for (const tab of others)
      assert.equal(await tab.getByTestId('balance').count(), 0, 'no balance left showing');
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
});
