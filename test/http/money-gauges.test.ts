import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { type FigureReads, type Figures, readFigures } from '../../src/figures/snapshot.ts';
import { type MoneyReads, registerMoneyGauges } from '../../src/http/money-metrics.ts';

// The money gauges over the figures' snapshot (decision 0028): the refresh stores a read that hangs
// or fails as missing, and the gauge then says so (absent, or NaN: never 0, which an alert reads as
// all clear); a scrape that cannot read the snapshot (a database in a partition) answers in time
// with every figure missing and the process not ready; the snapshot's age is served, +Inf before
// the first refresh, so that an alert sees the refresh stop.

const never = <T>() => new Promise<T>(() => undefined);
const now = new Date('2026-11-26T09:00:00Z');
const clock = { now: () => now };

function readsWith(overrides: Partial<FigureReads>): FigureReads {
  return {
    floatBalances: async () => [{ provider: 'data', balanceKobo: 5_000_000n, floorKobo: 1_000_000n }],
    processingPurchases: async () => ({ processing: 3, stuck: 1 }),
    paymentInbox: async () => ({ backlog: 2, oldestReceivedAt: new Date('2026-11-26T08:59:00Z') }),
    queueCounts: async () => [{ name: 'domain-event', queued: 4, deferred: 0, active: 1, failed: 0 }],
    lastLedgerCheck: async () => ({ checkedAt: new Date('2026-11-26T08:00:00Z'), ok: true, imbalances: 0 }),
    // Only the payments have finished a run: the other sources have none yet.
    latestRuns: async () => [
      {
        id: '019ac6a0-0000-7000-8000-000000000001',
        source: 'payments',
        from: '2026-11-24T23:00:00.000Z',
        to: '2026-11-25T23:00:00.000Z',
        status: 'done',
        counts: { matched: 40, missingHere: 1, missingThere: 0, amountMismatch: 0, statusMismatch: 2 },
        providerList: true,
        createdAt: '2026-11-26T05:00:00.000Z',
        finishedAt: '2026-11-26T05:00:30.000Z',
      },
    ],
    ...overrides,
  };
}

/** The value of one series in Prometheus text, or undefined when the series is absent. */
function seriesValue(text: string, series: string): string | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line?.slice(series.length + 1);
}

/** prom-client writes NaN as `Nan`, which Prometheus's parser (Go's ParseFloat) reads as NaN. */
const isNaNValue = (value: string | undefined) => value !== undefined && /^nan$/i.test(value);

/** The figures a refresh stores from these reads, and the figures it said it could not read. */
async function refreshed(reads: FigureReads): Promise<{ figures: Figures; failed: string[] }> {
  const failed: string[] = [];
  const figures = await readFigures(reads, (_error, figure) => failed.push(figure), 50);
  return { figures, failed };
}

async function scrape(
  latestFigures: MoneyReads['latestFigures'],
): Promise<{ text: string; failed: string[] }> {
  const registry = new Registry();
  const failed: string[] = [];
  registerMoneyGauges(registry, { clock, latestFigures }, (_error, figure) => failed.push(figure));
  return { text: await registry.metrics(), failed };
}

/** A scrape of the snapshot a refresh stored `ageSeconds` ago. */
async function scrapeOf(figures: Figures, ageSeconds = 10) {
  return scrape(async () => ({ refreshedAt: new Date(now.getTime() - ageSeconds * 1000), figures }));
}

describe('the money gauges', () => {
  it('serve what the refresh read through the owning modules, and how old it is', async () => {
    const { figures, failed } = await refreshed(readsWith({}));
    assert.deepEqual(failed, []);
    const { text } = await scrapeOf(figures, 12);
    assert.equal(seriesValue(text, 'billrail_provider_float_balance_kobo{provider="data"}'), '5000000');
    assert.equal(seriesValue(text, 'billrail_provider_float_floor_kobo{provider="data"}'), '1000000');
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_processing'), '3');
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_stuck'), '1');
    assert.equal(seriesValue(text, 'billrail_payment_inbox_backlog'), '2');
    // Measured at the scrape from when the oldest arrived, not when the refresh ran.
    assert.equal(seriesValue(text, 'billrail_payment_inbox_oldest_age_seconds'), '60');
    assert.equal(seriesValue(text, 'billrail_job_queue_jobs{queue="domain-event",state="queued"}'), '4');
    assert.equal(seriesValue(text, 'billrail_ledger_check_ok'), '1');
    assert.equal(seriesValue(text, 'billrail_ready'), '1');
    assert.equal(seriesValue(text, 'billrail_figures_age_seconds'), '12');
  });

  it('store the reads that hang as missing, and serve them left out or NaN', async () => {
    const { figures, failed } = await refreshed(
      readsWith({ floatBalances: never, processingPurchases: never, queueCounts: never }),
    );
    assert.deepEqual(failed.sort(), ['floats', 'purchases', 'queues']);
    const { text } = await scrapeOf(figures);
    assert.equal(seriesValue(text, 'billrail_provider_float_balance_kobo{provider="data"}'), undefined);
    assert.equal(seriesValue(text, 'billrail_provider_float_floor_kobo{provider="data"}'), undefined);
    assert.ok(isNaNValue(seriesValue(text, 'billrail_vtu_purchases_processing')), 'processing');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_vtu_purchases_stuck')), 'stuck');
    assert.equal(
      seriesValue(text, 'billrail_job_queue_jobs{queue="domain-event",state="queued"}'),
      undefined,
    );
    // What did answer is still served, and the snapshot itself was read.
    assert.equal(seriesValue(text, 'billrail_payment_inbox_backlog'), '2');
    assert.equal(seriesValue(text, 'billrail_ready'), '1');
  });

  it('say NaN, not 0, for a figure whose read failed', async () => {
    const down = async () => {
      throw new Error('Connection terminated unexpectedly');
    };
    const { figures } = await refreshed(readsWith({ paymentInbox: down, lastLedgerCheck: down }));
    const { text } = await scrapeOf(figures);
    assert.ok(isNaNValue(seriesValue(text, 'billrail_payment_inbox_backlog')), 'backlog');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_payment_inbox_oldest_age_seconds')), 'oldest');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_ledger_check_ok')), 'ledger check');
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_processing'), '3');
  });

  it('read a ledger never checked as 0, its last run long ago, not as failed', async () => {
    const { figures, failed } = await refreshed(readsWith({ lastLedgerCheck: async () => null }));
    assert.deepEqual(failed, []);
    const { text } = await scrapeOf(figures);
    assert.equal(seriesValue(text, 'billrail_ledger_check_last_run_timestamp_seconds'), '0');
    assert.equal(seriesValue(text, 'billrail_ledger_check_imbalances'), '0');
  });

  it('answer in time when the snapshot cannot be read: every figure missing, not ready, age NaN', async () => {
    const { text, failed } = await scrape(never);
    assert.deepEqual(failed, ['operator_figures'], 'told once for the scrape');
    assert.equal(seriesValue(text, 'billrail_ready'), '0');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_figures_age_seconds')), 'age');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_vtu_purchases_processing')), 'processing');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_ledger_check_ok')), 'ledger check');
    assert.equal(seriesValue(text, 'billrail_provider_float_balance_kobo{provider="data"}'), undefined);
  });

  it("serve each source's latest reconciliation run by bucket, and a source never run as long ago", async () => {
    const { figures, failed } = await refreshed(readsWith({}));
    assert.deepEqual(failed, []);
    const { text } = await scrapeOf(figures);
    const items = (bucket: string, source = 'payments') =>
      seriesValue(text, `billrail_reconciliation_items{source="${source}",bucket="${bucket}"}`);
    assert.equal(items('matched'), '40');
    assert.equal(items('missingHere'), '1');
    assert.equal(items('missingThere'), '0');
    assert.equal(items('statusMismatch'), '2');
    assert.equal(
      seriesValue(text, 'billrail_reconciliation_last_run_timestamp_seconds{source="payments"}'),
      String(Date.parse('2026-11-26T05:00:30Z') / 1000),
    );
    // No run of data yet: no counts to show, and its last run reads as never (0), which the staleness
    // alert sees, rather than no series, which it could not.
    assert.equal(items('matched', 'data'), undefined);
    assert.equal(seriesValue(text, 'billrail_reconciliation_last_run_timestamp_seconds{source="data"}'), '0');
  });

  it('leave the reconciliation out when its read failed, never 0', async () => {
    const down = async () => {
      throw new Error('Connection terminated unexpectedly');
    };
    const { figures, failed } = await refreshed(readsWith({ latestRuns: down }));
    assert.deepEqual(failed, ['reconciliation']);
    const { text } = await scrapeOf(figures);
    assert.equal(
      seriesValue(text, 'billrail_reconciliation_last_run_timestamp_seconds{source="data"}'),
      undefined,
      'not 0: a failed read is not a source that never ran',
    );
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_processing'), '3');
  });

  it('say +Inf for the age before the first refresh, so that an alert on the age fires', async () => {
    const { text, failed } = await scrape(async () => null);
    assert.deepEqual(failed, []);
    assert.equal(seriesValue(text, 'billrail_figures_age_seconds'), '+Inf');
    assert.equal(seriesValue(text, 'billrail_ready'), '1');
    assert.ok(isNaNValue(seriesValue(text, 'billrail_payment_inbox_backlog')), 'backlog unknown');
  });
});
