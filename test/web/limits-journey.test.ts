import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { dataExportBuildJob } from '../../src/data-export/service.ts';
import { e164 } from '../auth/support.ts';
import { walletKobo } from '../funding/support.ts';
import { runDomainEvents, runQueuedJobs } from '../helpers/domain-events.ts';
import { readSms, type SignedIn, type World } from '../helpers/world.ts';
import { matchingNin, userAtTier } from '../kyc/kyc-support.ts';
import { advanceClock, mtn, PIN } from '../vtu/purchase-support.ts';
import { closeBrowserWorld, openBrowserWorld, phonePage, screen, skipWithoutChromium } from './support.ts';

// A new person meets the CBN's limits and their data rights in the web client (issue 41 item 6, API.md
// 17.2 and 17.3), from the first visit: Tier 1 on the face-check page, ₦400,000 funded through the
// sandbox checkout, of which ₦100,000 is held over Tier 1's maximum and shown on Home with the way to
// release it; Tier 2 in the app, which releases it; the day's limit explained before the PIN; a copy of
// their data downloaded; closing the account refused while money is in it, with what to do; the money
// sent away over two Lagos days (Tier 2's ₦200,000 a day); then the account closed, and cancelled once.
// The jobs the service runs on its own (the release, the export) are run by the test as a worker
// would, so it knows when they are done. axe-core checks every screen, light and dark.

const TIMEOUT = { timeout: 30_000 };

const screens = (page: Page, name: string) => screen(page, `limits-journey-${name}`);

describe('the web client: limits, a held balance, a copy of one’s data, closing the account', {
  skip: skipWithoutChromium,
  timeout: 300_000,
}, () => {
  let world: World;
  let browser: Browser;
  let page: Page;
  let userId: string;
  /** Where the money goes in the end: another person, at Tier 2 (set up through the API). */
  let friend: SignedIn;
  const phone = mtn('7');

  before(async () => {
    ({ world, browser } = await openBrowserWorld());
    page = await phonePage(browser);
    friend = await userAtTier(world, 2);
  });
  after(() => closeBrowserWorld({ world, browser }));

  /** The PIN on the pad's field, then the step's button. */
  async function withPin(button: string | RegExp): Promise<void> {
    await page.getByLabel('Transaction PIN').fill(PIN);
    await page.getByRole('button', { name: button }).click();
  }

  it('signs in from the first visit, sets the PIN and passes Tier 1 on the face-check page', async () => {
    await page.goto(`${world.baseUrl}/`);
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.getByLabel('Code').fill((await readSms(world, e164(phone))).code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(/\/pin$/, TIMEOUT);
    await page.getByLabel('New PIN').fill(PIN);
    await page.getByLabel('Type it again').fill(PIN);
    await page.getByRole('button', { name: 'Save PIN' }).click();
    await page.waitForURL(`${world.baseUrl}/`, TIMEOUT);

    await page.goto(`${world.baseUrl}/verify`);
    await page.getByRole('button', { name: 'Start face check' }).click();
    await page.waitForURL(/\/__sandbox\/liveness/, TIMEOUT);
    await page.click('#pass');
    await page.getByTestId('tier-1').filter({ hasText: 'Approved' }).waitFor(TIMEOUT);
    const user = await world.ctx.db
      .selectFrom('users')
      .select('id')
      .where('phone', '=', e164(phone))
      .executeTakeFirstOrThrow();
    userId = user.id;
  });

  it('funds ₦400,000 and shows ₦100,000 of it held over the Tier 1 maximum, with the way to release it', async () => {
    await page.goto(`${world.baseUrl}/fund`);
    await page.getByLabel('Amount (₦)').fill('400000');
    // Said before paying: nothing is refused, the part over the maximum is held.
    await page
      .getByTestId('funding-held')
      .getByText(/^₦100,000\.00 of this will be held, not spendable: over your Tier 1 maximum balance/)
      .waitFor(TIMEOUT);
    await page.getByRole('button', { name: 'Pay ₦400,000.00' }).click();
    await page.waitForURL(/\/__sandbox\/checkout\//, TIMEOUT);
    await page.click('#pay');
    await page.getByRole('link', { name: 'Return to the merchant' }).click();
    await page
      .getByTestId('topup-status')
      .filter({ hasText: 'Your wallet has been funded.' })
      .waitFor(TIMEOUT);

    await page.goto(`${world.baseUrl}/`);
    await page.getByTestId('balance').filter({ hasText: '₦300,000.00' }).waitFor(TIMEOUT);
    const held = page.getByTestId('held-balance');
    await held.getByText('₦100,000.00 held: over your Tier 1 maximum of ₦300,000.00.').waitFor(TIMEOUT);
    assert.match((await held.textContent()) ?? '', /when you complete Tier 2 verification/);
    await screens(page, '01-home-held');

    // Settings says the same, with the day's limit.
    await page.goto(`${world.baseUrl}/settings`);
    const limits = page.getByTestId('limits');
    await limits.filter({ hasText: 'Held over the maximum₦100,000.00' }).waitFor(TIMEOUT);
    assert.match((await limits.textContent()) ?? '', /Daily limit \(Tier 1\)₦50,000\.00/);
    assert.match((await limits.textContent()) ?? '', /Maximum balance₦300,000\.00/);
    assert.match(
      (await page.getByTestId('day-resets').textContent()) ?? '',
      /starts again on .*, 00:00 \(Lagos time\)/,
    );
    await screens(page, '02-settings-limits');

    await page.goto(`${world.baseUrl}/`);
    await held.getByRole('link', { name: 'Verify for Tier 2 to release it' }).click();
    await page.waitForURL(/\/verify$/, TIMEOUT);
  });

  it('completes Tier 2 in the app, and the held money moves into the balance', async () => {
    await page.getByLabel('First name').fill('Adaeze');
    await page.getByLabel('Last name').fill('Okafor');
    await page.getByRole('button', { name: 'Save and continue' }).click();
    await page.getByLabel('NIN', { exact: true }).fill(matchingNin());
    await page.getByRole('button', { name: 'Submit NIN' }).click();
    await page.getByTestId('tier-2').filter({ hasText: 'Approved' }).waitFor(TIMEOUT);

    // The release follows the approval, as the workers would run it.
    await runDomainEvents(world);
    assert.equal(await walletKobo(world, userId), 40_000_000n);
    await page.goto(`${world.baseUrl}/`);
    await page.getByTestId('balance').filter({ hasText: '₦400,000.00' }).waitFor(TIMEOUT);
    assert.equal(await page.getByTestId('held-balance').count(), 0);
    await screens(page, '03-home-released');
  });

  /** Fills the transfer form to the friend with `amount` and opens its summary. */
  async function transferSummary(amount: string): Promise<void> {
    await page.goto(`${world.baseUrl}/transfer`);
    await page.getByLabel('Their phone number').fill(friend.phone);
    await page.getByTestId('recipient').waitFor(TIMEOUT);
    await page.getByLabel('Amount (₦)').fill(amount);
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  it('explains the day’s limit before the PIN when a transfer is over it', async () => {
    await transferSummary('400000');
    const note = page.getByTestId('limit-note');
    await note
      .getByText(
        'This is over your daily limit of ₦200,000.00: ₦200,000.00 left today; Tier 3 lifts it to ₦5,000,000.00.',
      )
      .waitFor(TIMEOUT);
    assert.equal(await page.getByLabel('Transaction PIN').count(), 0, 'no PIN for a payment that cannot go');
    assert.equal(await note.getByRole('link', { name: 'Verify for Tier 3' }).count(), 1);
    await screens(page, '04-transfer-over-limit');

    await transferSummary('200000');
    await withPin('Send ₦200,000.00');
    await page.getByText('It is in').waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 20_000_000n);
  });

  it('prepares a copy of the person’s data, then downloads it; a second copy the same day is refused', async () => {
    await page.goto(`${world.baseUrl}/settings`);
    await page.getByRole('button', { name: 'Prepare my data' }).click();
    await page.getByTestId('data-export-status').filter({ hasText: 'being prepared' }).waitFor(TIMEOUT);
    await page.getByRole('heading', { name: 'Download my data' }).scrollIntoViewIfNeeded();
    await screens(page, '05-data-export-preparing');

    // The file is built by a job, which tells the person when it is ready.
    await runExportJobs(world);
    const link = page.getByRole('link', { name: 'Download my data (JSON)' });
    await link.waitFor(TIMEOUT);
    await link.scrollIntoViewIfNeeded();
    await screens(page, '06-data-export-ready');
    const [download] = await Promise.all([page.waitForEvent('download', TIMEOUT), link.click()]);
    const file = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      profile: { phone: string; firstName: string | null };
      wallet: { movements: Array<{ kind: string; amount: number }> };
    };
    assert.equal(file.profile.phone, e164(phone));
    assert.equal(file.profile.firstName, 'Adaeze');
    // Every movement of the wallet: the top-up and the transfer among them.
    const kinds = file.wallet.movements.map((m) => m.kind);
    assert.ok(kinds.includes('topup'), kinds.join());
    assert.ok(file.wallet.movements.some((m) => m.kind === 'transfer_out' && m.amount === 200_000));
    const text = JSON.stringify(file);
    assert.ok(!text.includes(friend.userId), 'nothing of the other person but the name they saw');
    assert.ok(!text.includes(e164(friend.phone)), 'not their phone either');

    await page.getByRole('button', { name: 'Prepare a new copy' }).click();
    await page.getByText(/You already asked for a copy in the last 24 hours/).waitFor(TIMEOUT);

    // A phone that never saw the copy (another device, or signed in again): the refusal names it, and
    // the screen shows it to download.
    await page.evaluate(() => localStorage.removeItem('billrail.kept.data-export'));
    await page.reload();
    await page.getByRole('button', { name: 'Prepare my data' }).click();
    await page.getByText(/You already asked for a copy in the last 24 hours/).waitFor(TIMEOUT);
    await page.getByRole('link', { name: 'Download my data (JSON)' }).waitFor(TIMEOUT);
  });

  it('says before the PIN what stops the account closing, and refuses it with the same things to do', async () => {
    const steps = page.getByTestId('closing-steps');
    await steps.getByText('Spend or transfer your ₦200,000.00 balance.').waitFor(TIMEOUT);
    assert.equal(await steps.getByRole('link', { name: 'Send money' }).count(), 1);
    await page.getByRole('button', { name: 'Close my account…' }).click();
    await withPin('Close my account');
    await page
      .getByRole('alert')
      .filter({ hasText: 'Spend or transfer your ₦200,000.00 balance.' })
      .waitFor(TIMEOUT);
    await page.getByRole('heading', { name: 'Close my account' }).scrollIntoViewIfNeeded();
    await screens(page, '07-closing-refused');
  });

  it('sends the rest the next Lagos day, then closes the account, with its date and a way back', async () => {
    // Today's ₦200,000 is used: the rest waits for the next Lagos day.
    await transferSummary('200000');
    await page
      .getByTestId('limit-note')
      .getByText(/nothing left today/)
      .waitFor(TIMEOUT);
    await advanceClock(world, 24 * 60 * 60);
    await transferSummary('200000');
    await withPin('Send ₦200,000.00');
    await page.getByText('It is in').waitFor(TIMEOUT);
    assert.equal(await walletKobo(world, userId), 0n);

    await page.goto(`${world.baseUrl}/settings`);
    await page.getByRole('button', { name: 'Close my account…' }).click();
    await withPin('Close my account');
    const closing = page.getByTestId('closing');
    await closing.getByText(/^Your account closes on /).waitFor(TIMEOUT);
    await closing.scrollIntoViewIfNeeded();
    await screens(page, '08-closing');
    await closing.getByRole('button', { name: 'Keep my account open' }).click();
    await page.getByText('Your account stays open.').waitFor(TIMEOUT);

    await page.getByRole('button', { name: 'Close my account…' }).click();
    await withPin('Close my account');
    await closing.getByText(/^Your account closes on /).waitFor(TIMEOUT);
    // After a reload too: the service says so.
    await page.reload();
    await closing.getByText(/^Your account closes on /).waitFor(TIMEOUT);

    // Its day comes (the sandbox clock runs the closing): signed out, and the phone is free again.
    await advanceClock(world, 8 * 24 * 60 * 60);
    await page.goto(`${world.baseUrl}/`);
    await page.waitForURL(/\/sign-in/, TIMEOUT);
    await page.getByLabel('Phone number').fill(phone);
    await page.getByRole('button', { name: 'Send code' }).click();
    await page.getByLabel('Code').waitFor(TIMEOUT);
    await page.getByLabel('Code').fill((await readSms(world, e164(phone))).code);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // A new account: no PIN yet, nothing of the closed one.
    await page.waitForURL(/\/pin$/, TIMEOUT);
  });
});

/** Builds the data exports asked for and tells their owners, as the workers would. */
async function runExportJobs(world: World): Promise<void> {
  const { failed } = await runQueuedJobs(world, dataExportBuildJob);
  assert.deepEqual(failed, []);
  await runDomainEvents(world);
}
