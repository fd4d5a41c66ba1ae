import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { lagosDate } from '../../src/lagos-time.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import {
  type CsvItem,
  csvHeader,
  reconciliationCsv,
  reconciliationFileName,
} from '../../web/src/reconciliation-csv.ts';
import { createIntent, creditPostings, payWithoutWebhook, verify } from '../funding/support.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { get, ok, post, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';
import {
  closeBrowserWorld,
  injectSession,
  openBrowserWorld,
  phonePage,
  screen,
  skipWithoutChromium,
} from './support.ts';

// The reconciliation screen of the web client (API.md 17.5) and its CSV file. In headless Chromium an
// admin starts a payments run for today over two top-ups the payment provider took whose webhooks were
// lost, sees it finish (its job run here, as a worker would), sees both under "Missing here" with
// our record and the provider's side by side, credits one with a reason (the person's wallet is
// credited once), is told in the service's words that the other was resolved meanwhile by another
// session, and downloads the run as a CSV file. The CSV builder's quoting, byte order mark and
// formula guard are tested first, without a browser.

const TIMEOUT = { timeout: 30_000 };
const ADMIN_PHONE = '08030000031';
const BOM = '\uFEFF';

/** RFC 4180's fields, as a spreadsheet reads them: quoted fields may hold commas, quotes and line breaks. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let fieldText = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        fieldText += '"';
        i++;
      } else if (c === '"') quoted = false;
      else fieldText += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(fieldText);
      fieldText = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(fieldText);
      rows.push(row);
      row = [];
      fieldText = '';
      i++;
    } else fieldText += c;
  }
  assert.equal(fieldText, '', 'the file ends with a line break');
  return rows;
}

describe('the reconciliation CSV', () => {
  const item: CsvItem = {
    bucket: 'missingHere',
    reference: 'top_1',
    ours: {
      status: 'pending',
      amount: 1234567.5,
      at: '2026-11-28T09:00:00.000Z',
      userId: 'u-1',
      kind: 'topup',
    },
    theirs: {
      status: 'success',
      amount: 1234567.5,
      at: '2026-11-28T09:01:00.000Z',
      userId: 'u-1',
      kind: 'card',
      providerReference: '4099',
      note: 'Approved, "by bank"\nsecond line',
    },
    resolution: {
      action: 'credit',
      reason: '=HYPERLINK("http://evil","click")',
      outcome: 'credited',
      by: 'a-1',
      at: '2026-11-29T08:00:00.000Z',
    },
  };

  it('opens with a byte order mark and the header, one CRLF line per item, RFC 4180 quoting', () => {
    const text = reconciliationCsv([item]);
    assert.ok(text.startsWith(BOM), 'a byte order mark, so Excel reads UTF-8');
    const lines = text.slice(1).split('\r\n');
    assert.equal(
      lines[0],
      'bucket,reference,our status,our amount,our date,our kind,user id,their status,their amount,their date,their kind,provider reference,recipient,note,resolution action,resolution reason,resolution outcome,resolved by,resolved at',
    );
    // The note holds a comma, quotes and a line break: quoted, its quotes doubled.
    assert.ok(text.includes('"Approved, ""by bank""\nsecond line"'));
    const rows = parseCsv(text.slice(1));
    assert.equal(rows.length, 2);
    assert.deepEqual(rows[0], [...csvHeader]);
    assert.deepEqual(rows[1], [
      'missingHere',
      'top_1',
      'pending',
      '1234567.50',
      '2026-11-28T09:00:00.000Z',
      'topup',
      'u-1',
      'success',
      '1234567.50',
      '2026-11-28T09:01:00.000Z',
      'card',
      '4099',
      '',
      'Approved, "by bank"\nsecond line',
      'credit',
      `'=HYPERLINK("http://evil","click")`,
      'credited',
      'a-1',
      '2026-11-29T08:00:00.000Z',
    ]);
  });

  it('guards every text field that a spreadsheet would run as a formula, never an amount', () => {
    const starts = ['=1+1', '+2348030000000', '-2', '@SUM(A1)', '\t=1', '\rx'];
    for (const start of starts) {
      const [, row] = parseCsv(
        reconciliationCsv([
          { bucket: 'matched', reference: start, ours: { status: 'credited', amount: -12.3, note: start } },
        ]).slice(1),
      );
      assert.equal(row![1], `'${start}`, `${JSON.stringify(start)} as a reference`);
      assert.equal(row![13], `'${start}`, `${JSON.stringify(start)} as a note`);
      assert.equal(row![3], '-12.30', 'a negative amount stays a number');
    }
    const [, plain] = parseCsv(reconciliationCsv([{ bucket: 'matched', reference: 'a-1=2' }]).slice(1));
    assert.equal(plain![1], 'a-1=2', 'a sign inside a field is left alone');
    assert.equal(plain![2], '', 'a side absent is empty');
  });

  it('writes both notes, each named, when both sides have one; names the file by source and Lagos day', () => {
    const [, row] = parseCsv(
      reconciliationCsv([
        {
          bucket: 'statusMismatch',
          reference: 'r',
          ours: { status: 'failed', note: 'refunded' },
          theirs: { status: 'success', note: 'delivered' },
        },
      ]).slice(1),
    );
    assert.equal(row![13], 'ours: refunded; theirs: delivered');
    // A Lagos day starts at 23:00 UTC the day before.
    assert.equal(
      reconciliationFileName({ source: 'payments', from: '2026-11-27T23:00:00.000Z' }),
      'reconciliation-payments-2026-11-28.csv',
    );
  });
});

type Item = { id: string; reference: string; resolution?: { outcome: string } };
type Run = { id: string; items: Item[] };

describe('the web client: reconciliation', { skip: skipWithoutChromium, timeout: 300_000 }, () => {
  let world: World;
  let browser: Browser;
  let admin: Page;
  /** An admin session of the API's own: the page's refreshes end the session it was given. */
  let adminApi: SignedIn;

  before(async () => {
    ({ world, browser } = await openBrowserWorld({ env: { ADMIN_PHONES: `+234${ADMIN_PHONE.slice(1)}` } }));
    admin = await phonePage(browser);
    await injectSession(admin, world.baseUrl, (await signIn(world, ADMIN_PHONE)).refreshToken);
    adminApi = await signInAgain(world, ADMIN_PHONE);
  });
  after(() => closeBrowserWorld({ world, browser }));

  it('runs a payments reconciliation, credits a lost top-up once, shows a refusal, and downloads the CSV', async () => {
    const person = await signIn(world);
    const lost = await createIntent(world, person, 1_500);
    await payWithoutWebhook(world, lost);
    const other = await createIntent(world, person, 2_000);
    await payWithoutWebhook(world, other);
    const today = lagosDate(world.ctx.clock.now());

    await admin.goto(`${world.baseUrl}/admin`);
    await admin
      .getByRole('navigation', { name: 'Admin screens' })
      .getByRole('link', { name: /^Reconciliation/ })
      .click();
    await admin.waitForURL(/\/admin\/reconciliation$/, TIMEOUT);
    await admin.getByText('No runs yet.').waitFor(TIMEOUT);
    // Yesterday by default, as the morning's run.
    const yesterday = lagosDate(new Date(Date.now() - 86_400_000));
    assert.equal(await admin.getByLabel('From (Lagos day)').inputValue(), yesterday);
    assert.equal(await admin.getByLabel('To (Lagos day, included)').inputValue(), yesterday);
    await admin.getByLabel('From (Lagos day)').fill(today);
    await admin.getByLabel('To (Lagos day, included)').fill(today);
    await screen(admin, 'rec-01-start');
    await admin.getByRole('button', { name: 'Start' }).click();

    await admin.waitForURL(/\/admin\/reconciliation\?run=/, TIMEOUT);
    const status = admin.getByTestId('run-status');
    await status.filter({ hasText: 'Running' }).waitFor(TIMEOUT);
    // The worker's part, done here: the page asks again until the run is done.
    const { done, failed } = await runQueuedJobs(world, reconciliationRunJob);
    assert.deepEqual(failed, []);
    assert.equal(done.length, 1);
    await status.filter({ hasText: 'Done' }).waitFor(TIMEOUT);
    assert.equal(await admin.getByTestId('count-missingHere').textContent(), '2');
    assert.equal(await admin.getByTestId('count-statusMismatch').textContent(), '0');

    const missingHere = admin.getByRole('region', { name: 'Missing here' });
    const item = missingHere.getByTestId('reconciliation-item').filter({ hasText: lost.reference });
    await item.waitFor(TIMEOUT);
    const sides = item.getByRole('table');
    const rowOf = async (label: string) =>
      (
        await sides
          .getByRole('row', { name: new RegExp(`^${label}`) })
          .getByRole('cell')
          .allTextContents()
      ).map((t) => t.trim());
    assert.deepEqual(await rowOf('Status'), ['pending', 'success']);
    assert.deepEqual(await rowOf('Amount'), ['₦1,500.00', '₦1,500.00']);
    assert.deepEqual(await rowOf('User'), [person.userId, person.userId]);
    assert.equal((await rowOf('Kind'))[0], 'topup');
    // A payment is credited or ignored, never requeried.
    assert.equal(await item.getByRole('button', { name: 'Requery' }).count(), 0);
    await screen(admin, 'rec-02-run');

    // Another session resolves the other item while the page shows it: the page's try is refused in
    // the service's words, and the item then shows what was done.
    const run = ok(
      await get<Run>(
        world,
        'adminGetReconciliation',
        { id: new URL(admin.url()).searchParams.get('run') },
        {
          token: adminApi.accessToken,
        },
      ),
    );
    const otherItem = run.items.find((i) => i.reference === other.reference)!;
    ok(
      await post(
        world,
        'adminResolveReconciliationItem',
        { id: otherItem.id, action: 'ignore', reason: 'refunded by the provider' },
        { token: adminApi.accessToken },
      ),
    );
    const second = missingHere.getByTestId('reconciliation-item').filter({ hasText: other.reference });
    await second.getByRole('button', { name: 'Ignore' }).click();
    await second.getByLabel('Reason to ignore').fill('duplicate');
    await second.getByRole('button', { name: 'Ignore now' }).click();
    await second
      .getByRole('alert')
      .filter({ hasText: 'Not done: this item is already resolved.' })
      .waitFor(TIMEOUT);
    await second.getByTestId('resolution').filter({ hasText: 'Ignored: ignored' }).waitFor(TIMEOUT);

    const reason = 'Paid at the provider, webhook "lost", checked';
    await item.getByRole('button', { name: 'Credit' }).click();
    await item.getByLabel('Reason to credit').fill(reason);
    await item.getByRole('button', { name: 'Credit now' }).click();
    await item.getByTestId('resolution').filter({ hasText: 'Credited: credited' }).waitFor(TIMEOUT);
    assert.equal(
      await item.getByRole('button', { name: 'Credit' }).count(),
      0,
      'resolved once: no action left',
    );
    await screen(admin, 'rec-03-credited');

    // Credited once: the wallet holds the one top-up; a second resolution is refused and the
    // person's own verify finds it credited already.
    const wallet = () => get<{ balance: number }>(world, 'getWallet', {}, { token: person.accessToken });
    assert.equal(ok(await wallet()).balance, 1_500);
    const lostItem = run.items.find((i) => i.reference === lost.reference)!;
    const again = await post(
      world,
      'adminResolveReconciliationItem',
      { id: lostItem.id, action: 'credit', reason: 'again' },
      { token: adminApi.accessToken },
    );
    assert.equal(expectError(again, 409, 'CONFLICT').details?.reason, 'already_resolved');
    assert.equal(ok(await verify(world, person, lost.reference)).credited, true);
    assert.equal(ok(await wallet()).balance, 1_500);
    assert.equal(await creditPostings(world, lost.reference), 1);

    const [download] = await Promise.all([
      admin.waitForEvent('download', TIMEOUT),
      admin.getByRole('button', { name: 'Download CSV' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), `reconciliation-payments-${today}.csv`);
    const bytes = await readFile(await download.path());
    assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 with a byte order mark');
    const rows = parseCsv(bytes.toString('utf8').slice(1));
    assert.deepEqual(rows[0], [...csvHeader]);
    assert.equal(rows.length, 3, 'the header and the two items');
    const column = (row: string[], name: (typeof csvHeader)[number]) => row[csvHeader.indexOf(name)];
    const credited = rows.find((r) => column(r, 'reference') === lost.reference)!;
    assert.deepEqual(
      ['bucket', 'our status', 'our amount', 'our kind', 'user id', 'their status', 'their amount'].map(
        (name) => column(credited, name as (typeof csvHeader)[number]),
      ),
      ['missingHere', 'pending', '1500.00', 'topup', person.userId, 'success', '1500.00'],
    );
    assert.deepEqual(
      ['resolution action', 'resolution reason', 'resolution outcome', 'resolved by'].map((name) =>
        column(credited, name as (typeof csvHeader)[number]),
      ),
      ['credit', reason, 'credited', adminApi.userId],
    );
    const ignored = rows.find((r) => column(r, 'reference') === other.reference)!;
    assert.equal(column(ignored, 'resolution outcome'), 'ignored');
  });
});
