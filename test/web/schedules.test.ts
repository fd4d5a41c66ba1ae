import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { until } from '../helpers/until.ts';
import type { World } from '../helpers/world.ts';
import { advanceClock, type Buyer, buyer, mtn, PIN } from '../vtu/purchase-support.ts';
import {
  assertAccessible,
  closeBrowserWorld,
  openBrowserWorld,
  screen,
  signedInPhone,
  skipWithoutChromium,
} from './support.ts';

// Scheduled purchases in headless Chromium, as a person makes one: airtime's confirm step, "Repeat
// this purchase", the start and how often, the PIN last; then the sandbox clock passes the start and
// the run is in the history like any purchase; the schedules screen pauses, resumes and cancels it.
// axe-core checks each screen.

const TIMEOUT = { timeout: 30_000 };

describe('the web client: scheduled purchases', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let user: Buyer;

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    user = await buyer(world, 5_000);
    page = await signedInPhone(browser, world.baseUrl, user);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('repeats an airtime purchase from its confirm step, and the first run lands in the history', async () => {
    const phone = mtn('5');
    await page.goto(`${world.baseUrl}/buy/airtime`);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByText('MTN number').waitFor(TIMEOUT);
    await page.getByLabel('Amount (₦)').fill('200');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByTestId('price').filter({ hasText: '₦' }).waitFor(TIMEOUT);
    // "Save as" holds for a schedule as for a payment.
    await page.getByLabel('Save as (optional)').fill('Mum');
    await page.getByLabel('Repeat this purchase').check();
    await page.getByLabel('How often').selectOption('day');
    await assertAccessible(page, 'schedule form');
    await screen(page, '90-repeat-airtime');
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: 'Schedule purchase' }).click();

    await page.waitForURL(/\/schedules$/, TIMEOUT);
    const item = page.getByTestId('schedule').filter({ hasText: 'Airtime every day' });
    await item.waitFor(TIMEOUT);
    // The number as the person typed it, not as the service keeps it (+234...).
    assert.ok(((await item.textContent()) ?? '').includes(`₦200.00 to ${phone}`));
    assert.match((await item.textContent()) ?? '', /0 purchases so far/);
    await assertAccessible(page, 'schedules');
    await screen(page, '91-schedules');
    const rows = await world.ctx.db
      .selectFrom('schedules')
      .selectAll()
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.every, 'day');
    const saved = await world.ctx.db
      .selectFrom('beneficiaries')
      .select(['label', 'service'])
      .where('user_id', '=', user.userId)
      .execute();
    assert.deepEqual(saved, [{ label: 'Mum', service: 'airtime' }]);

    // The default start is an hour from now: the clock passes it and the runner buys.
    await advanceClock(world, 2 * 3_600);
    await page.goto(`${world.baseUrl}/transactions`);
    const bought = page
      .getByRole('list', { name: 'Transactions' })
      .getByRole('listitem')
      .filter({ hasText: /airtime/i });
    await bought.first().waitFor(TIMEOUT);
    assert.match((await bought.first().textContent()) ?? '', /200\.00/);
    await screen(page, '92-schedule-run-in-history');

    await page.goto(`${world.baseUrl}/schedules`);
    await item.filter({ hasText: '1 purchase so far' }).waitFor(TIMEOUT);
  });

  it('pauses, resumes and cancels from the schedules screen, by keyboard too', async () => {
    await page.goto(`${world.baseUrl}/schedules`);
    const item = page.getByTestId('schedule').first();
    await item.getByRole('button', { name: 'Pause' }).click();
    await item.filter({ hasText: 'Paused' }).getByText('Paused: paused by you').waitFor(TIMEOUT);
    const resume = item.getByRole('button', { name: 'Resume' });
    await resume.focus();
    await page.keyboard.press('Enter');
    await item.getByRole('button', { name: 'Pause' }).waitFor(TIMEOUT);
    await item.getByRole('button', { name: 'Cancel schedule' }).click();
    await item.filter({ hasText: 'Cancelled' }).waitFor(TIMEOUT);
    // The item says Cancelled first; its buttons go once the list is read again.
    await until(
      async () => (await item.getByRole('button').count()) === 0,
      'a cancelled schedule offering nothing',
    );
    await assertAccessible(page, 'schedules after cancel');
    const [row] = await world.ctx.db
      .selectFrom('schedules')
      .select('status')
      .where('user_id', '=', user.userId)
      .execute();
    assert.equal(row?.status, 'cancelled');
  });
});
