import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { advanceClock, e164 } from '../auth/support.ts';
import { passOtpResendWindow, readSms, type World } from '../helpers/world.ts';
import { mtn } from '../vtu/purchase-support.ts';
import { closeBrowserWorld, openBrowserWorld, phonePage, screen, skipWithoutChromium } from './support.ts';

// Signing in, in headless Chromium, when it does not go straight through. The answer to verifyOtp
// lost on the way back (issue 25 item 5): the service never keeps a sign-in's answer for replay
// (API.md section 3), so the retry finds the code used up, and the screen says so plainly and lets
// the person ask for a new code (one per phone per 60 s) and sign in with it, without help. And
// (issue 26 item 1) a reload while waiting for the SMS, a changed number, a wrong code with the
// tries left, and an expired one.

const TIMEOUT = { timeout: 30_000 };

describe('signing in when it does not go straight through', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    page = await phonePage(browser);
    // The page's clock is the test's to move, like the sandbox's: the one-per-minute wait for a new
    // code is counted down in the page.
    await page.clock.install();
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('asks for a new code after the used one is refused, and signs in with it', async () => {
    const phone = mtn('8');
    const answers: Array<{ key: string; status: number; body: string }> = [];
    let lose = true;
    await page.route('**/_serverFn/verifyOtp', async (route) => {
      // Each attempt reaches the service; the first one's answer (a session) never comes back.
      const response = await route.fetch();
      answers.push({
        key: route.request().headers()['idempotency-key'] ?? '',
        status: response.status(),
        body: await response.text(),
      });
      if (lose) {
        lose = false;
        await route.abort('connectionreset');
        return;
      }
      await route.fulfill({ response });
    });

    await page.goto(`${world.baseUrl}/sign-in`);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    const first = await readSms(world, e164(phone));
    await page.getByLabel('Code').fill(first.code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('You are offline. Check your connection and try again.').waitFor(TIMEOUT);

    // Tried again: the code was used by the sign-in whose answer was lost, and the service says so.
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/This code has already been used/).waitFor(TIMEOUT);
    await screen(page, '30-sign-in-code-used');
    assert.equal(answers.length, 2);
    assert.equal(answers[0]?.status, 200, 'the first attempt signed in at the service');
    assert.equal(answers[1]?.status, 401, 'the retry is refused');
    assert.doesNotMatch(answers[1]?.body ?? '', /accessToken/, 'and no tokens come back');
    assert.equal(answers[0]?.key, answers[1]?.key, 'the retry carries the first attempt’s key');

    // The same code typed again (cleared, then pasted back) is still explained as used up.
    await page.getByLabel('Code').fill('');
    await page.getByLabel('Code').fill(first.code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/This code has already been used/).waitFor(TIMEOUT);
    assert.equal(answers.length, 3);

    // A new code only a minute after the last (one per 60 s): the button counts down until then.
    const countingDown = page.getByRole('button', { name: /^Resend code \(in \d+ s\)$/ });
    await countingDown.waitFor(TIMEOUT);
    assert.ok(await countingDown.isDisabled(), 'no new code can be asked for yet');
    // A minute later, in the page and at the service (both clocks move instead of the test waiting).
    await page.clock.fastForward(61_000);
    passOtpResendWindow(world);
    await page.getByRole('button', { name: 'Resend code', exact: true }).click();
    await page.getByText('We sent a new code. Enter it below.').waitFor(TIMEOUT);
    const second = await readSms(world, e164(phone));
    assert.notEqual(second.code, first.code);
    assert.equal(await page.getByLabel('Code').inputValue(), '', 'the used code is cleared');
    await page.getByLabel('Code').fill(second.code);
    await page.getByRole('button', { name: 'Sign in' }).click();

    // Signed in: a new user goes on to set a PIN, with the session kept for reloads.
    await page.waitForURL(/\/pin$/, TIMEOUT);
    assert.ok(await page.evaluate(() => localStorage.getItem('billrail.refresh') !== null));
    await page.unroute('**/_serverFn/verifyOtp');
    const user = await world.ctx.db
      .selectFrom('users')
      .select('id')
      .where('phone', '=', e164(phone))
      .executeTakeFirstOrThrow();
    const sessions = await world.ctx.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    assert.equal(sessions.length, 2, 'the lost sign-in and the one that arrived');
  });

  it('keeps the code field through a reload while the person waits for the SMS', async () => {
    const phone = mtn('6');
    await page.evaluate(() => {
      localStorage.clear();
      sessionStorage.clear();
    });
    await page.goto(`${world.baseUrl}/sign-in`);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.reload();

    // Still the code step for this phone, with the wait for a new code still counted down.
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.getByText(`We sent a 6-digit code by SMS to ${phone}.`).waitFor(TIMEOUT);
    const resend = page.getByRole('button', { name: /^Resend code \(in \d+ s\)$/ });
    assert.ok(await resend.isDisabled(), 'no new code can be asked for within the minute');
    await screen(page, '34-sign-in-after-reload');
    const { code } = await readSms(world, e164(phone));
    const kept = await page.evaluate(() => JSON.stringify(sessionStorage));
    assert.match(kept, new RegExp(phone), 'the phone is kept in this tab');
    assert.doesNotMatch(kept, new RegExp(code), 'the code is not');

    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/pin$/, TIMEOUT);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'nothing of the sign-in is left');
  });

  it('lets the person change the number, going on to a code already sent to it', async () => {
    const first = mtn('5');
    const second = mtn('3');
    await page.evaluate(() => {
      localStorage.clear();
      sessionStorage.clear();
    });
    await page.goto(`${world.baseUrl}/sign-in`);
    await page.getByLabel('Phone number').fill(second);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Change number' }).click();
    await page.getByLabel('Phone number').fill(first);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByText(`We sent a 6-digit code by SMS to ${first}.`).waitFor(TIMEOUT);

    // Back to the number first typed, within its minute: no second code, but the one sent will do.
    await page.getByRole('button', { name: 'Change number' }).click();
    await page.getByLabel('Phone number').fill(second);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page
      .getByText(
        /^We sent a code to this number a moment ago: enter it below\. You can ask for a new one in \d+ seconds?\.$/,
      )
      .waitFor(TIMEOUT);
    await screen(page, '35-sign-in-code-already-sent');
    const { code } = await readSms(world, e164(second));
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/pin$/, TIMEOUT);
  });

  it('says a wrong code is wrong with the tries left, and an expired one needs a new code', async () => {
    const phone = mtn('9');
    await page.evaluate(() => {
      localStorage.clear();
      sessionStorage.clear();
    });
    await page.goto(`${world.baseUrl}/sign-in`);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    const { code } = await readSms(world, e164(phone));
    await page.getByLabel('Code').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That code is not right. 4 tries left.').waitFor(TIMEOUT);
    await screen(page, '36-sign-in-wrong-code');
    assert.equal(await page.getByText(/session/i).count(), 0, 'a wrong code is not an ended session');

    // Five minutes on, the code has expired: the screen says to ask for a new one, which the
    // button gives once its minute is over (both clocks move instead of the test waiting).
    await advanceClock(world, 5 * 60 + 1);
    await page.clock.fastForward(5 * 60 * 1000 + 1000);
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/^This code can no longer be used .* Ask for a new code\.$/).waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Resend code', exact: true }).click();
    await page.getByText('We sent a new code. Enter it below.').waitFor(TIMEOUT);
    await page.getByLabel('Code').fill((await readSms(world, e164(phone))).code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/pin$/, TIMEOUT);
  });
});
