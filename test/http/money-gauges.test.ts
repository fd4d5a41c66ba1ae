import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { type MoneyReads, registerMoneyGauges } from '../../src/http/money-metrics.ts';

// The money gauges when what they read does not answer: a provider that hangs on its balance or a
// database in a partition must not hold /metrics (Prometheus would lose the whole scrape, counters
// and all), and a gauge that could not be read must not say 0, which an alert reads as all clear.

const never = <T>() => new Promise<T>(() => undefined);

function readsWith(overrides: Partial<MoneyReads>): MoneyReads {
  return {
    clock: { now: () => new Date('2026-11-26T09:00:00Z') },
    floatBalances: async () => [{ provider: 'data', balanceKobo: 5_000_000n, floorKobo: 1_000_000n }],
    processingPurchases: async () => ({ processing: 3, stuck: 1 }),
    paymentInbox: async () => ({ backlog: 2, oldestReceivedAt: new Date('2026-11-26T08:59:00Z') }),
    queueCounts: async () => [{ name: 'domain-event', queued: 4, deferred: 0, active: 1, failed: 0 }],
    lastLedgerCheck: async () => ({ checkedAt: new Date('2026-11-26T08:00:00Z'), ok: true, imbalances: 0 }),
    ready: async () => true,
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

async function scrape(reads: MoneyReads): Promise<{ text: string; failed: string[] }> {
  const registry = new Registry();
  const failed: string[] = [];
  registerMoneyGauges(registry, reads, (_error, figure) => failed.push(figure));
  return { text: await registry.metrics(), failed };
}

describe('the money gauges', () => {
  it('serve what the owning modules read', async () => {
    const { text, failed } = await scrape(readsWith({}));
    assert.deepEqual(failed, []);
    assert.equal(seriesValue(text, 'billrail_provider_float_balance_kobo{provider="data"}'), '5000000');
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_processing'), '3');
    assert.equal(seriesValue(text, 'billrail_payment_inbox_oldest_age_seconds'), '60');
    assert.equal(seriesValue(text, 'billrail_job_queue_jobs{queue="domain-event",state="queued"}'), '4');
    assert.equal(seriesValue(text, 'billrail_ready'), '1');
  });

  it('answer without the reads that hang, leaving those out or NaN, and tell which failed', async () => {
    const { text, failed } = await scrape(
      readsWith({
        floatBalances: never,
        processingPurchases: never,
        queueCounts: never,
        ready: never,
      }),
    );
    assert.equal(seriesValue(text, 'billrail_provider_float_balance_kobo{provider="data"}'), undefined);
    assert.ok(
      isNaNValue(seriesValue(text, 'billrail_vtu_purchases_processing')),
      'billrail_vtu_purchases_processing',
    );
    assert.ok(isNaNValue(seriesValue(text, 'billrail_vtu_purchases_stuck')), 'billrail_vtu_purchases_stuck');
    assert.equal(
      seriesValue(text, 'billrail_job_queue_jobs{queue="domain-event",state="queued"}'),
      undefined,
    );
    // A database too slow to answer is not ready.
    assert.equal(seriesValue(text, 'billrail_ready'), '0');
    // What did answer is still served.
    assert.equal(seriesValue(text, 'billrail_payment_inbox_backlog'), '2');
    assert.deepEqual(
      failed.sort(),
      [
        'billrail_job_queue_jobs',
        'billrail_provider_float_balance_kobo',
        'billrail_provider_float_floor_kobo',
        'billrail_vtu_purchases_processing',
        'billrail_vtu_purchases_stuck',
      ].sort(),
    );
  });

  it('say NaN, not 0, for a figure whose read failed', async () => {
    const down = async () => {
      throw new Error('Connection terminated unexpectedly');
    };
    const { text } = await scrape(readsWith({ paymentInbox: down, lastLedgerCheck: down }));
    assert.ok(
      isNaNValue(seriesValue(text, 'billrail_payment_inbox_backlog')),
      'billrail_payment_inbox_backlog',
    );
    assert.ok(
      isNaNValue(seriesValue(text, 'billrail_payment_inbox_oldest_age_seconds')),
      'billrail_payment_inbox_oldest_age_seconds',
    );
    assert.ok(isNaNValue(seriesValue(text, 'billrail_ledger_check_ok')), 'billrail_ledger_check_ok');
    assert.equal(seriesValue(text, 'billrail_vtu_purchases_processing'), '3');
  });
});
