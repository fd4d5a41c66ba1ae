import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { raiseAlert } from '../../src/alerts/alerts.ts';
import { until } from '../helpers/until.ts';
import { get, ok, post, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { bought, buyer, current, mtn } from '../vtu/purchase-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The admin screens of the web client (API.md section 11), in headless Chromium: the admin index, a
// broadcast with a poll that a user then sees and votes on, a markup set per service and per provider
// that quotePrice then charges, a price level made by its first markup with a user put on it (API.md
// section 16), reconciling a pending purchase and checking the ledger, and an alert raised by the
// service shown on the alerts screen. axe-core checks every screen; each is saved as a
// 360×800 screenshot.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000004';

type Broadcasts = {
  items: Array<{
    title: string;
    poll?: { question: string; options: Array<{ text: string; votes: number }>; myVote: string | null };
  }>;
};
type Quote = { provider: string; markup: number; retail: number };

async function signedInPage(browser: Browser, world: World, user: SignedIn): Promise<Page> {
  const page = await phonePage(browser);
  await injectSession(page, world.baseUrl, user.refreshToken);
  return page;
}

describe('the web client: admin screens', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let admin: Page;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}` } }));
    admin = await signedInPage(browser, world, await signIn(world, ADMIN_PHONE));
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('lists the admin screens for an admin, and only says no to anyone else', async () => {
    await admin.goto(`${world.baseUrl}/admin`);
    const nav = admin.getByRole('navigation', { name: 'Admin screens' });
    await nav.waitFor(TIMEOUT);
    const labels = [
      'Alerts',
      'KYC reviews',
      'Disputes',
      'Broadcasts',
      'Markups',
      'Reconcile and ledger check',
      'Reconciliation',
      'Users',
      'Adjustments',
      'Pauses',
      'Audit log',
    ];
    assert.equal(await nav.getByRole('link').count(), labels.length);
    for (const label of labels)
      assert.equal(await nav.getByRole('link', { name: new RegExp(`^${label}`) }).count(), 1);
    await screen(admin, '60-admin-index');

    const someone = await signedInPage(browser, world, await signIn(world));
    await someone.goto(`${world.baseUrl}/admin`);
    await someone.getByText('These screens are for administrators only.').waitFor(TIMEOUT);
    assert.equal(await someone.getByRole('navigation', { name: 'Admin screens' }).count(), 0);
    await someone.context().close();
  });

  it('creates a broadcast with a poll, which a user then sees in the inbox and votes on', async () => {
    await admin.goto(`${world.baseUrl}/admin`);
    await admin.getByRole('link', { name: /Broadcasts/ }).click();
    await admin.waitForURL(/\/admin\/broadcasts$/, TIMEOUT);
    await admin.getByLabel('Title').fill('New data prices');
    await admin.getByLabel('Message').fill('Data bundles are cheaper from Monday.');
    await admin.getByLabel('Add a poll').check();
    await admin.getByLabel('Question').fill('Which bundle do you buy most?');
    await admin.getByLabel('Option 1', { exact: true }).fill('Daily');
    await admin.getByLabel('Option 2', { exact: true }).fill('Weekly');
    await admin.getByRole('button', { name: 'Add an option' }).click();
    await admin.getByLabel('Option 3', { exact: true }).fill('Monthly');
    await screen(admin, '61-admin-broadcast');
    await admin.getByRole('button', { name: 'Send to everyone' }).click();
    await admin.getByText('Sent: New data prices').waitFor(TIMEOUT);
    assert.match(
      (await admin.getByRole('status').filter({ hasText: 'Sent:' }).textContent()) ?? '',
      /with a poll of 3 options/,
    );
    assert.equal(await admin.getByLabel('Title').inputValue(), '', 'the form is cleared for the next one');

    // A user sees it through the API and in the inbox, and votes.
    const user = await signIn(world);
    const listed = ok(await get<Broadcasts>(world, 'listBroadcasts', {}, { token: user.accessToken }));
    const broadcast = listed.items.find((b) => b.title === 'New data prices');
    assert.ok(broadcast?.poll, 'the broadcast carries its poll');
    assert.equal(broadcast.poll.question, 'Which bundle do you buy most?');
    assert.deepEqual(
      broadcast.poll.options.map((o) => o.text),
      ['Daily', 'Weekly', 'Monthly'],
    );

    const page = await signedInPage(browser, world, await signInAgain(world, user.phone));
    await page.goto(`${world.baseUrl}/inbox`);
    const item = page.getByRole('list', { name: 'Polls' }).getByRole('listitem').filter({
      hasText: 'New data prices',
    });
    await item.waitFor(TIMEOUT);
    await item.getByRole('group', { name: 'Which bundle do you buy most?' }).waitFor(TIMEOUT);
    await item.getByRole('button', { name: 'Weekly' }).click();
    await item.getByText('Weekly (your vote)').waitFor(TIMEOUT);
    await screen(page, '62-inbox-broadcast-poll');
    await page.context().close();
  });

  it('sets a markup per service and per provider, shows it in force, and quotePrice charges it', async () => {
    const user = await signIn(world);
    const quote = async () =>
      ok(
        await post<Quote>(
          world,
          'quotePrice',
          { service: 'cable', wholesale: 1_000 },
          { token: user.accessToken },
        ),
      );
    assert.equal((await quote()).markup, 0, 'no markup yet');

    await admin.goto(`${world.baseUrl}/admin/markups`);
    await admin.getByLabel('Service', { exact: true }).selectOption({ label: 'Cable TV' });
    const now = admin.getByTestId('markup-now');
    await now.filter({ hasText: 'Cable TV' }).filter({ hasText: 'no markup' }).waitFor(TIMEOUT);
    await admin.getByLabel('Flat amount (₦)').fill('50');
    await admin.getByLabel('Percentage of the wholesale price (%)').fill('1.5');
    await screen(admin, '63-admin-markups');
    await admin.getByRole('button', { name: 'Save the markup' }).click();
    await admin.getByText(/^Saved: Cable TV, every provider: ₦50\.00 plus 1\.5%/).waitFor(TIMEOUT);
    await now.filter({ hasText: '₦50.00 plus 1.5% of the wholesale price' }).waitFor(TIMEOUT);
    assert.deepEqual(
      await quote().then((q) => [q.markup, q.retail]),
      [65, 1_065],
      'retail = 1,000 + 50 + 1.5% of 1,000',
    );

    // A markup of the provider cable is routed to wins over the service's; a field left empty is
    // kept (a new provider row starts at 0 %).
    await admin.getByLabel('Provider', { exact: true }).selectOption({ label: 'Bills provider only' });
    await now.filter({ hasText: 'bills provider' }).waitFor(TIMEOUT);
    await admin.getByLabel('Flat amount (₦)').fill('10');
    await admin.getByRole('button', { name: 'Save the markup' }).click();
    await admin.getByText(/^Saved: Cable TV, bills provider: ₦10\.00 plus 0%/).waitFor(TIMEOUT);
    await now.filter({ hasText: 'has a markup of ₦10.00 plus 0%' }).waitFor(TIMEOUT);
    assert.deepEqual(await quote().then((q) => [q.provider, q.markup, q.retail]), ['bills', 10, 1_010]);
    await admin.getByLabel('Percentage of the wholesale price (%)').fill('101');
    assert.ok(await admin.getByText('Type a percentage from 0 to 100').isVisible());
    assert.ok(await admin.getByRole('button', { name: 'Save the markup' }).isDisabled());
  });

  it('makes a price level with its first markup, puts a user on it by keyboard, and their quote pays it', async () => {
    // Follows the markups above: cable's default is ₦50 plus 1.5 % for every provider, ₦10 through
    // the bills provider it is routed to.
    const user = await signIn(world);
    const quote = async () =>
      ok(
        await post<Quote>(
          world,
          'quotePrice',
          { service: 'cable', wholesale: 1_000 },
          { token: user.accessToken },
        ),
      );
    assert.deepEqual(await quote().then((q) => [q.markup, q.retail]), [10, 1_010]);

    await admin.goto(`${world.baseUrl}/admin/markups`);
    await admin.getByLabel('Price level', { exact: true }).selectOption({ label: 'A new level…' });
    const name = admin.getByLabel('New level name');
    await name.fill('Resellers');
    await admin.getByText('Lowercase letters, digits and hyphens, 1 to 32 characters').waitFor(TIMEOUT);
    await admin.getByLabel('Flat amount (₦)').fill('5');
    assert.ok(await admin.getByRole('button', { name: 'Save the markup' }).isDisabled());
    await name.fill('reseller');
    await admin.getByLabel('Service', { exact: true }).selectOption({ label: 'Cable TV' });
    const now = admin.getByTestId('markup-now');
    await now
      .filter({ hasText: 'at the reseller level has no markup of its own' })
      .filter({ hasText: '₦50.00 plus 1.5%' })
      .waitFor(TIMEOUT);
    await admin.getByRole('button', { name: 'Save the markup' }).click();
    await admin
      .getByText(/^Saved: Cable TV, every provider, reseller level: ₦5\.00 plus 0%/)
      .waitFor(TIMEOUT);
    // The level is chosen once the list of levels, read again after the save, offers it.
    await until(
      async () => (await admin.getByLabel('Price level', { exact: true }).inputValue()) === 'reseller',
      'the new level chosen',
    );
    await now.filter({ hasText: 'at the reseller level has a markup of ₦5.00 plus 0%' }).waitFor(TIMEOUT);
    // Nobody is on it yet: prices do not move until a user is put on the level.
    assert.deepEqual(await quote().then((q) => [q.markup, q.retail]), [10, 1_010]);

    // The user's level, sent from the keyboard: Tab from the level's select reaches the button.
    const levels = admin.getByRole('list', { name: 'Price levels' });
    await levels.getByText('Level reseller: 0 users').waitFor(TIMEOUT);
    await admin.getByLabel('User id').fill(user.userId);
    await admin.getByLabel('Their prices').selectOption({ label: 'Level reseller' });
    await screen(admin, '66-admin-price-levels');
    await admin.getByLabel('Their prices').focus();
    await admin.keyboard.press('Tab');
    assert.equal(
      await admin.locator(':focus').textContent(),
      "Set the user's prices",
      'Tab reaches the button',
    );
    await admin.keyboard.press('Enter');
    await admin.getByText(`Saved: user ${user.userId} now pays the reseller level.`).waitFor(TIMEOUT);
    await levels.getByText('Level reseller: 1 user').waitFor(TIMEOUT);
    // The level's markup for every provider wins over the default's for the bills provider.
    assert.deepEqual(await quote().then((q) => [q.provider, q.markup, q.retail]), ['bills', 5, 1_005]);
    assert.equal(
      ok(await get<{ priceLevel: string | null }>(world, 'getMe', {}, { token: user.accessToken }))
        .priceLevel,
      'reseller',
    );

    // Back to the default prices; an id that is no user's is refused in plain words.
    await admin.getByLabel('User id').fill(user.userId);
    await admin.getByLabel('Their prices').selectOption({ label: 'Default prices (no level)' });
    await admin.getByRole('button', { name: "Set the user's prices" }).click();
    await admin.getByText(`Saved: user ${user.userId} now pays the default prices.`).waitFor(TIMEOUT);
    assert.deepEqual(await quote().then((q) => [q.markup, q.retail]), [10, 1_010]);
    await admin.getByLabel('User id').fill('0192f3c4-0000-7000-8000-000000000000');
    await admin.getByRole('button', { name: "Set the user's prices" }).click();
    await admin.getByRole('alert').filter({ hasText: 'No user has this id.' }).waitFor(TIMEOUT);
  });

  it('reconciles a pending purchase and checks the ledger, both shown as fine', async () => {
    const customer = await buyer(world, 2_000);
    // The sandbox answers a number ending in 2 "pending", then success when asked again.
    const purchase = await bought(world, customer, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('2'),
      amount: 100,
    });
    assert.equal(purchase.status, 'processing');

    await admin.goto(`${world.baseUrl}/admin/ledger`);
    await admin.getByRole('button', { name: 'Reconcile now' }).click();
    const reconciled = admin.getByTestId('reconcile-result');
    await reconciled.waitFor(TIMEOUT);
    assert.match(
      (await reconciled.textContent()) ?? '',
      /Reconciliation finished: everything checked without a problem\./,
    );
    const purchases = reconciled.locator('div', {
      has: admin.getByRole('heading', { name: 'Purchases still processing' }),
    });
    assert.equal(
      await purchases.textContent(),
      'Purchases still processingChecked1Succeeded1',
      'the pending purchase was requeried and succeeded',
    );
    assert.match((await reconciled.textContent()) ?? '', /Top-upsNothing was waiting\./);
    assert.equal((await current(world, customer, purchase.id)).status, 'success');

    await admin.getByRole('button', { name: 'Check the ledger' }).click();
    const checked = admin.getByTestId('ledger-result');
    await checked.waitFor(TIMEOUT);
    assert.match(
      (await checked.textContent()) ?? '',
      /^The ledger balances: \d+ accounts and \d+ entries checked/,
    );
    await screen(admin, '64-admin-ledger');
  });

  it('shows an alert the service raised, in plain words with its details', async () => {
    const reference = `stuck-${Date.now()}`;
    await world.ctx.db.transaction().execute((trx) =>
      raiseAlert(
        trx,
        {
          kind: 'vtu_purchase_stuck',
          message: `Purchase ${reference} is still processing after 30 minutes`,
          details: { reference, minutes: 30 },
        },
        world.ctx.clock.now(),
        world.ctx.jobs,
      ),
    );
    await admin.goto(`${world.baseUrl}/admin`);
    await admin.getByRole('link', { name: /Alerts/ }).click();
    const alert = admin.getByRole('listitem').filter({ hasText: reference });
    await alert.first().waitFor(TIMEOUT);
    assert.equal(await alert.count(), 1);
    assert.match((await alert.textContent()) ?? '', /A purchase is stuck/);
    assert.match((await alert.textContent()) ?? '', /still processing after 30 minutes/);
    assert.equal(await alert.getByRole('definition').filter({ hasText: reference }).count(), 1);
    await screen(admin, '65-admin-alerts');
  });
});
