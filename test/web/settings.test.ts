import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { type NotificationKind, securityKinds } from '../../src/notifications/messages.ts';
import type { SandboxEmail } from '../../src/sandbox/state.ts';
import { get, ok, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// Settings in the web client (API.md section 10), in headless Chromium: a person adds an email
// address, types the 6-digit code the sandbox mailbox received (a wrong one first, refused with the
// tries left), and switches notification kinds off by email and by push, which stay off after a
// reload; the security kinds (PIN changed, sign-in on a new device) are not offered. axe-core checks
// every screen; each is saved as a 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };

type Switches = Record<'email' | 'push', Record<string, boolean>>;

async function mailbox(world: World, to: string): Promise<SandboxEmail[]> {
  const response = await fetch(`${world.baseUrl}/__sandbox/emails?to=${encodeURIComponent(to)}`);
  assert.equal(response.status, 200);
  return ((await response.json()) as { data: SandboxEmail[] }).data;
}

async function signedInPage(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  return page;
}

describe('the web client: settings', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  /** A session of the same person for the API (the page's refresh rotates its own tokens). */
  let api: SignedIn;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    const user = await signIn(world);
    page = await signedInPage(browser, world, user);
    api = await signInAgain(world, user.phone);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('adds an email address and verifies it with the code from the email', async () => {
    const address = `ada.${Date.now()}@example.test`;
    await page.goto(`${world.baseUrl}/settings`);
    await page.getByLabel('Email address').waitFor(TIMEOUT);
    assert.match((await page.getByTestId('email-status').textContent()) ?? '', /No email address yet/);
    await page.getByLabel('Email address').fill('not an address');
    assert.ok(await page.getByText('Type an address such as').isVisible());
    assert.ok(await page.getByRole('button', { name: 'Send the code' }).isDisabled());
    await page.getByLabel('Email address').fill(address);
    await screen(page, '70-settings');
    await page.getByRole('button', { name: 'Send the code' }).click();
    await page.getByLabel('Code from the email').waitFor(TIMEOUT);
    await page.getByText(`We sent a 6-digit code to ${address}`).waitFor(TIMEOUT);
    assert.match((await page.getByTestId('email-status').textContent()) ?? '', /not verified yet/);

    const [mail] = await mailbox(world, address);
    assert.ok(mail !== undefined, 'the code was emailed');
    const code = /\b(\d{6})\b/.exec(mail.text)?.[1];
    assert.ok(code !== undefined, 'the email carries a 6-digit code');

    // A wrong code is refused, said aloud, with the tries left.
    await page.getByLabel('Code from the email').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'not right' }).first().waitFor(TIMEOUT);
    await page.getByText('That code is not right or has expired. 4 tries left.').waitFor(TIMEOUT);
    await screen(page, '71-settings-email-code');

    await page.getByLabel('Code from the email').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText(`${address} is verified.`).waitFor(TIMEOUT);
    assert.equal(
      await page.getByTestId('email-status').textContent(),
      `Your email is ${address} (verified).`,
    );
    assert.equal(await page.getByLabel('Code from the email').count(), 0);
    const me = ok(
      await get<{ email: string; emailVerified: boolean }>(world, 'getMe', {}, { token: api.accessToken }),
    );
    assert.deepEqual([me.email, me.emailVerified], [address, true]);
    await screen(page, '72-settings-email-verified');
  });

  it('switches kinds off by email and by push, kept after a reload; security kinds are not offered', async () => {
    await page.goto(`${world.baseUrl}/settings`);
    const funded = page.getByRole('group', { name: 'Wallet funded' });
    const matured = page.getByRole('group', { name: 'Savings matured' });
    await funded.waitFor(TIMEOUT);
    assert.ok(await funded.getByRole('checkbox', { name: 'Email' }).isChecked(), 'every kind starts on');

    await funded.getByRole('checkbox', { name: 'Email' }).uncheck();
    await page.getByText('Wallet funded by email: off.').waitFor(TIMEOUT);
    await matured.getByRole('checkbox', { name: 'Push' }).uncheck();
    await page.getByText('Savings matured by push: off.').waitFor(TIMEOUT);
    await screen(page, '73-settings-notifications');

    await page.reload();
    await funded.waitFor(TIMEOUT);
    assert.equal(await funded.getByRole('checkbox', { name: 'Email' }).isChecked(), false);
    assert.equal(await funded.getByRole('checkbox', { name: 'Push' }).isChecked(), true);
    assert.equal(await matured.getByRole('checkbox', { name: 'Push' }).isChecked(), false);
    assert.equal(await matured.getByRole('checkbox', { name: 'Email' }).isChecked(), true);
    const saved = ok(await get<Switches>(world, 'getNotificationSettings', {}, { token: api.accessToken }));
    assert.deepEqual(
      [
        saved.email.topup_credited,
        saved.push.topup_credited,
        saved.push.lock_matured,
        saved.email.lock_matured,
      ],
      [false, true, false, true],
    );

    // Security messages are not switches, and neither are the admins' operations alerts for a user.
    // Every kind the service lets a person switch is offered (operations alerts are the admins').
    const switchable = Object.keys(saved.email).filter(
      (kind) => kind !== 'ops_alert' && !securityKinds.includes(kind as NotificationKind),
    );
    const groups = await page.getByRole('group').allTextContents();
    assert.equal(
      groups.length,
      switchable.length,
      'every switchable kind, each with an email and a push switch',
    );
    assert.equal(await page.getByRole('checkbox').count(), 2 * switchable.length);
    for (const scheduled of [/Scheduled purchase skipped/, /Scheduled purchase paused/]) {
      assert.equal(await page.getByRole('group', { name: scheduled }).count(), 1, `${scheduled} is offered`);
    }
    for (const hidden of [/PIN/i, /sign-in/i, /new device/i, /Operations alerts/]) {
      assert.equal(await page.getByRole('group', { name: hidden }).count(), 0, `${hidden} is not offered`);
    }
    assert.ok(await page.getByText('are always emailed and cannot be turned off').isVisible());

    // Sign out still works from here.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/sign-in/, TIMEOUT);
  });
});
