import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { DB } from '../../src/db/schema.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { newId } from '../../src/ids.ts';
import { checkAndRecordLedger } from '../../src/ledger/check-runs.ts';
import { retentionPurgeJob } from '../../src/retention/module.ts';
import { purgeInBatches } from '../../src/retention/purge.ts';
import { assertLedgerOk, BOUNDED, createIntent } from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runDomainEvents } from '../helpers/domain-events.ts';
import { createWorld, type SignedIn, signIn, signInAgain, type World } from '../helpers/world.ts';
import { checkout, deliveryOf } from '../payments/helpers.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// Retention (decision 0054): retention.purge deletes the rows of the growing tables past their period,
// through each owner's api, a small batch at a time, and never a money or KYC record. The clock is the
// sandbox's, moved by the test without running the other clock-driven jobs; the purge job is run as its
// cron would run it.

const DAY_SECONDS = 86_400;

/** The periods the world runs with: short, so that the soak's 60 days see every table reach its bound. */
const periods = {
  RETENTION_NOTIFICATIONS_READ_DAYS: '7',
  RETENTION_NOTIFICATIONS_DAYS: '14',
  RETENTION_PAYMENT_EVENTS_DAYS: '35',
  RETENTION_LEDGER_CHECKS_DAYS: '30',
  RETENTION_BATCH_SIZE: '1000',
};

/** The tables retention.purge deletes from, and those it must never touch. */
const purgedTables = ['idempotency_keys', 'otp_codes', 'notifications', 'payment_events'] as const;
const keptTables = [
  'ledger_transactions',
  'ledger_entries',
  'vtu_transactions',
  'topup_intents',
  'wallet_transfers',
  'disputes',
  'adjustments',
  'audit_log',
  'kyc_submissions',
  'kyc_documents',
  'users',
] as const;

type Counts = Record<string, number>;

async function countRows(world: World, tables: readonly (keyof DB)[]): Promise<Counts> {
  const counts: Counts = {};
  for (const table of tables) {
    const row = await world.ctx.db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

function assertRefused(env: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
      assert.match(error.message, new RegExp(`\\b${variable}\\b`), error.message);
      return true;
    },
  );
}

describe("docs/privacy.md's retention table", () => {
  it('gives every table of the schema a period', async () => {
    const root = path.resolve(import.meta.dirname, '..', '..');
    const schema = await readFile(path.join(root, 'src', 'db', 'schema.ts'), 'utf8');
    const db = schema.slice(schema.indexOf('export type DB = {'));
    const tables = [...db.slice(0, db.indexOf('\n};')).matchAll(/^ {2}([a-z_]+):/gm)].map((m) => m[1]!);
    assert.ok(tables.length >= 40, `${tables.length} tables in type DB`);
    const doc = await readFile(path.join(root, 'docs', 'privacy.md'), 'utf8');
    const start = doc.indexOf('## How long each table is kept');
    assert.ok(start >= 0, 'docs/privacy.md has the section');
    const section = doc.slice(start, doc.indexOf('\n## ', start + 1));
    const missing = tables.filter((table) => !section.includes(`\`${table}\``));
    assert.deepEqual(missing, [], 'every table is in the retention table');
  });
});

describe('retention configuration', () => {
  it('keeps the documented defaults, and the money and KYC records five years (1826 days) at the least', () => {
    const { retention } = loadConfig({});
    assert.deepEqual(retention, {
      moneyRecordsDays: 1827,
      paymentEventsDays: 90,
      notificationsReadDays: 90,
      notificationsDays: 365,
      dataExportsDays: 30,
      ledgerChecksDays: 90,
      reconciliationMatchedDays: 90,
      ussdSessionsDays: 90,
      jobsDays: 7,
      batchSize: 1000,
      timeBudgetSeconds: 120,
    });
    assert.ok(retention.moneyRecordsDays >= 1826);
  });

  it('refuses a money and KYC retention below five years', () => {
    assertRefused({ RETENTION_YEARS: '4' }, 'RETENTION_YEARS');
    assertRefused({ RETENTION_YEARS: '0' }, 'RETENTION_YEARS');
    assert.equal(loadConfig({ RETENTION_YEARS: '5' }).retention.moneyRecordsDays, 1827);
  });

  it('refuses a webhook inbox kept shorter than a month of reconciliation or the disputes window', () => {
    assertRefused({ RETENTION_PAYMENT_EVENTS_DAYS: '34' }, 'RETENTION_PAYMENT_EVENTS_DAYS');
    assertRefused(
      { RETENTION_PAYMENT_EVENTS_DAYS: '59', DISPUTE_WINDOW_DAYS: '60' },
      'RETENTION_PAYMENT_EVENTS_DAYS',
    );
    assert.equal(loadConfig({ RETENTION_PAYMENT_EVENTS_DAYS: '35' }).retention.paymentEventsDays, 35);
    assert.equal(
      loadConfig({ RETENTION_PAYMENT_EVENTS_DAYS: '60', DISPUTE_WINDOW_DAYS: '60' }).retention
        .paymentEventsDays,
      60,
    );
  });

  it('refuses unread notifications kept shorter than read ones, and batches or budgets out of bounds', () => {
    assertRefused(
      { RETENTION_NOTIFICATIONS_READ_DAYS: '30', RETENTION_NOTIFICATIONS_DAYS: '29' },
      'RETENTION_NOTIFICATIONS_DAYS',
    );
    assertRefused({ RETENTION_BATCH_SIZE: '0' }, 'RETENTION_BATCH_SIZE');
    assertRefused({ RETENTION_BATCH_SIZE: '10001' }, 'RETENTION_BATCH_SIZE');
    assertRefused({ RETENTION_TIME_BUDGET_SECONDS: '0' }, 'RETENTION_TIME_BUDGET_SECONDS');
  });
});

describe(`retention.purge (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;

  before(async () => {
    world = await createWorld({ env: periods });
  });
  after(() => world.close());

  const clock = () => world.ctx.sandboxClock!;
  const purgeNow = () => world.ctx.jobs.runNow(retentionPurgeJob);
  const daysAgo = (days: number) => new Date(clock().now().getTime() - days * DAY_SECONDS * 1000);

  /** `n` notifications of the user made `age` days ago, read or not, written as the inbox would hold them. */
  async function oldNotifications(userId: string, n: number, age: number, read: boolean): Promise<void> {
    const at = daysAgo(age);
    const rows = Array.from({ length: n }, (_, i) => ({
      id: newId(),
      user_id: userId,
      kind: 'test',
      title: 'Old news',
      body: 'A notification of long ago.',
      data: JSON.stringify({}),
      source: `retention-test:${newId()}:${i}`,
      read_at: read ? at : null,
      created_at: at,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await world.ctx.db
        .insertInto('notifications')
        .values(rows.slice(i, i + 500))
        .execute();
    }
  }

  async function notificationsOf(userId: string): Promise<number> {
    const row = await world.ctx.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  it(
    'purges 2,500 rows past their period in 3 batches of at most 1,000, keeping the younger ones',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      await oldNotifications(user.userId, 2_500, 8, true);
      await oldNotifications(user.userId, 3, 6, true);
      await oldNotifications(user.userId, 2, 8, false);
      assert.equal(await notificationsOf(user.userId), 2_505);

      const report = await world.ctx.modules.retention.api.purge();
      assert.equal(report.complete, true);
      assert.deepEqual(report.purged.notifications, { rows: 2_500, batches: 3 });
      // Read ones younger than 7 days, and unread ones younger than 14, stay.
      assert.equal(await notificationsOf(user.userId), 5);
    },
  );

  it('stops at its time budget between batches, and the next run carries on', BOUNDED, async () => {
    const user = await signIn(world);
    await oldNotifications(user.userId, 2_500, 20, false);
    const rule = {
      name: 'notifications',
      purgeBatch: (batchMax: number) =>
        world.ctx.modules.notifications.api.purgeOldNotifications(
          { readBefore: daysAgo(7), before: daysAgo(14) },
          batchMax,
        ),
    };
    // A run's time: 0 ms when it starts and before its first batch, its budget spent before the second.
    const readings = [0, 0, 50];
    const first = await purgeInBatches([rule], {
      batchMax: 1_000,
      budgetMs: 50,
      elapsedMs: () => readings.shift() ?? 50,
    });
    assert.equal(first.complete, false);
    assert.deepEqual(first.purged.notifications, { rows: 1_000, batches: 1 });
    assert.equal(await notificationsOf(user.userId), 1_500);

    const next = await purgeInBatches([rule], { batchMax: 1_000, budgetMs: 60_000 });
    assert.equal(next.complete, true);
    assert.deepEqual(next.purged.notifications, { rows: 1_500, batches: 2 });
    assert.equal(await notificationsOf(user.userId), 0);
  });

  it('deletes each table past its own period and keeps every money and KYC record', {
    timeout: 120_000,
  }, async () => {
    const person = await buyer(world, 2_000);
    const purchase = await bought(world, person, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 100,
    });
    assert.equal(purchase.status, 'success');
    await paidTopup(world, person, 500);
    await runDomainEvents(world);
    await checkAndRecordLedger(world.ctx.db, () => clock().now());
    const kept = await countRows(world, keptTables);
    const start = await countRows(world, [...purgedTables, 'ledger_checks']);
    assert.ok(start.payment_events! >= 1 && start.notifications! >= 1 && start.idempotency_keys! >= 1);

    // At once: nothing has passed its period, so nothing goes.
    await purgeNow();
    assert.deepEqual(await countRows(world, [...purgedTables, 'ledger_checks']), start);

    // 2 days on: the idempotency keys (24 h) and the sign-in codes (expired, their day over) are gone.
    clock().advance(2 * DAY_SECONDS);
    await checkAndRecordLedger(world.ctx.db, () => clock().now());
    await purgeNow();
    let now = await countRows(world, [...purgedTables, 'ledger_checks']);
    assert.equal(now.idempotency_keys, 0);
    assert.equal(now.otp_codes, 0);
    assert.equal(now.payment_events, start.payment_events);
    assert.equal(now.ledger_checks, start.ledger_checks! + 1);

    // 15 days on: the unread notifications (14 days) too; the webhook inbox (35 days) stays.
    clock().advance(13 * DAY_SECONDS);
    await purgeNow();
    now = await countRows(world, [...purgedTables, 'ledger_checks']);
    assert.equal(now.notifications, 0);
    assert.equal(now.payment_events, start.payment_events);

    // 40 days on: the processed webhooks (35 days) and the older ledger checks (30 days), but the
    // latest check, which /metrics reads, whatever its age.
    clock().advance(25 * DAY_SECONDS);
    await purgeNow();
    now = await countRows(world, [...purgedTables, 'ledger_checks']);
    assert.equal(now.payment_events, 0);
    assert.equal(now.ledger_checks, 1);

    // Every money and KYC record is where it was.
    assert.deepEqual(await countRows(world, keptTables), kept);
    await assertLedgerOk(world);
  });

  it('keeps the purged tables bounded over a 60-day soak while the money tables keep everything', {
    timeout: 600_000,
  }, async () => {
    const person = await buyer(world, 10_000);
    let session: SignedIn = person;
    const before = await countRows(world, [...purgedTables, ...keptTables]);
    const days = 60;
    const daily: Counts[] = [];
    /** What each day's activity added to every table, counted before that night's purge. */
    const added: Counts[] = [];
    let previous = before;
    for (let day = 1; day <= days; day += 1) {
      // A day's activity: a newcomer signs in, the person signs in again (yesterday's token has
      // expired), buys airtime and tops up with a card (a webhook), each purchase and top-up
      // telling them in the inbox; every POST carries its Idempotency-Key.
      await signIn(world);
      session = { ...(await signInAgain(world, person.phone)), userId: person.userId };
      const purchase = await bought(world, session, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 100,
      });
      assert.equal(purchase.status, 'success');
      await paidTopup(world, session, 100);
      await runDomainEvents(world);
      const active = await countRows(world, [...purgedTables, ...keptTables]);
      added.push(
        Object.fromEntries(Object.entries(active).map(([table, n]) => [table, n - previous[table]!])),
      );
      // The day ends; the night's purge runs.
      clock().advance(DAY_SECONDS);
      await purgeNow();
      previous = await countRows(world, [...purgedTables, ...keptTables]);
      daily.push(previous);
    }
    const last = daily[days - 1]!;
    const grown = (table: string, day: number) => daily[day - 1]![table]! - before[table]!;

    // Money: one purchase and one top-up a day, every one of them kept.
    assert.equal(grown('vtu_transactions', days), days);
    assert.equal(grown('topup_intents', days), days);
    for (let day = 2; day <= days; day += 1) {
      assert.ok(
        grown('ledger_transactions', day) > grown('ledger_transactions', day - 1),
        `ledger grows on day ${day}`,
      );
    }
    assert.ok(last.ledger_entries! > before.ledger_entries!);

    // The most one day's activity added to each purged table.
    const perDay = (table: string) => Math.max(...added.map((counts) => counts[table]!));
    // The purged tables stop growing at about their period's days of rows: idempotency keys and
    // sign-in codes at a day or two, unread notifications at 14 days, processed webhooks at 35.
    const bound = { idempotency_keys: 1, otp_codes: 2, notifications: 16, payment_events: 36 };
    for (const [table, periodDays] of Object.entries(bound)) {
      assert.ok(perDay(table) >= 1, `${table} gains rows every day`);
      const most = Math.max(...daily.map((counts) => counts[table]!));
      assert.ok(
        most <= periodDays * perDay(table),
        `${table}: at most ${periodDays} days of ${perDay(table)} rows, saw ${most}`,
      );
      // Flat over the last two weeks (every table's period is over by day 37): the table is bounded.
      assert.ok(
        last[table]! <= daily[45]![table]! + perDay(table),
        `${table} still growing: ${daily[45]![table]} on day 46, ${last[table]} on day 60`,
      );
    }
    // Not vacuous: the webhook inbox did reach its 35 days before levelling out.
    assert.ok(last.payment_events! - before.payment_events! >= 30, `payment_events: ${last.payment_events}`);
    assert.ok(last.payment_events! - before.payment_events! < days);
    await assertLedgerOk(world);
  });
});

/** A card top-up paid at the sandbox's checkout: its webhook stored, then processed as the sweep would. */
async function paidTopup(world: World, user: SignedIn, naira: number): Promise<void> {
  const intent = await createIntent(world, user, naira);
  await checkout(intent.checkoutUrl, 'pay');
  await deliveryOf(world, 'charge.success', intent.reference).settled;
  await world.ctx.jobs.runNow(paymentWebhookSweepJob);
}
