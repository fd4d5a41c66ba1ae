import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { RequestRecord } from '../../bench/soak/client.ts';
import { newModel } from '../../bench/soak/model.ts';
import {
  type CalibrationStep,
  calibrated,
  chooseConcurrency,
  type PeakLoad,
  percentileOf,
  stepFigures,
} from '../../bench/soak/peak-load.ts';
import { type PeakFacts, renderPeakReport } from '../../bench/soak/peak-report.ts';

// The peak profile's figures are what the run is for: a wrong rule for the concurrency it settles
// on, or for the rate and percentiles it reports, would publish a figure the machine never showed.
// Pinned here on made-up runs whose answers are known.

const step = (concurrency: number, perSecond: number, p99Ms = 300, notAccepted = 0): CalibrationStep => ({
  concurrency,
  perSecond,
  p50Ms: 100,
  p99Ms,
  notAccepted,
});

describe('the peak profile', () => {
  it('takes the nearest-rank percentile', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    assert.equal(percentileOf(values, 0.5), 50);
    assert.equal(percentileOf(values, 0.99), 99);
    assert.equal(percentileOf([7], 0.99), 7);
    assert.equal(percentileOf([], 0.99), 0);
  });

  it('calibrates until two steps in a row beat the best rate by under 10%, p99 passes its bound or a purchase is not accepted', () => {
    assert.equal(calibrated([step(4, 40)]), false);
    assert.equal(calibrated([step(4, 40), step(8, 80)]), false);
    // One flat step may be the machine's other work: the next one decides.
    assert.equal(calibrated([step(4, 40), step(8, 43)]), false);
    assert.equal(calibrated([step(4, 40), step(8, 43), step(16, 90)]), false);
    assert.equal(calibrated([step(4, 40), step(8, 43), step(16, 43.9)]), true);
    assert.equal(calibrated([step(4, 40), step(8, 80), step(16, 70), step(32, 87)]), true);
    assert.equal(calibrated([step(4, 40), step(8, 80, 2_500)]), true);
    assert.equal(calibrated([step(4, 40), step(8, 80, 300, 1)]), true);
  });

  it('chooses the smallest concurrency within 10% of the best bounded rate', () => {
    assert.equal(chooseConcurrency([step(4, 40), step(8, 80), step(16, 150), step(32, 160)]), 16);
    // The fastest step's p99 was past the bound: the best bounded one is taken.
    assert.equal(chooseConcurrency([step(4, 40), step(8, 80), step(16, 200, 2_500)]), 8);
    assert.equal(chooseConcurrency([step(4, 40, 3_000)]), 4);
  });

  it('counts a step’s purchases by the moment they were sent, accepted apart from the rest', () => {
    const load: PeakLoad = {
      soak: undefined as unknown as PeakLoad['soak'],
      charged: new Map(),
      toppingUp: new Set(),
      next: { value: 0 },
      purchases: [
        { at: 999, ms: 5, outcome: 'accepted' },
        { at: 1_000, ms: 10, outcome: 'accepted' },
        { at: 1_500, ms: 30, outcome: 'accepted' },
        { at: 1_600, ms: 60_000, outcome: 'unresolved' },
        { at: 1_700, ms: 20, outcome: 'refused' },
        { at: 2_000, ms: 40, outcome: 'accepted' },
      ],
    };
    assert.deepEqual(stepFigures(load, 1_000, 2_000), { accepted: 2, notAccepted: 2, p50Ms: 10, p99Ms: 30 });
  });

  it('reports the rate accepted over the driving time and the rate settled over the samples', () => {
    // As many requests as a full peak run records: no figure may spread them into one call's arguments.
    const n = 200_000;
    const records: RequestRecord[] = Array.from({ length: n }, (_, i) => ({
      op: 'buyAirtime',
      api: i % 2,
      at: 10_000 + (i * 10_000) / n,
      ms: i < n / 2 ? 100 : 300,
      status: 200,
      code: undefined,
    }));
    const facts: PeakFacts = {
      startedAt: '2026-11-29T00:00:00.000Z',
      command: 'SOAK_SECONDS=10 npm run soak -- --peak',
      machine: '2 CPUs',
      topology: 'made up',
      database: 'none',
      buyers: 2,
      drivingSeconds: 10,
      calibration: [],
      concurrency: 4,
      concurrencyFrom: 'SOAK_PEAK_CONCURRENCY',
      window: { from: 10_000, to: 20_000 },
      samples: [
        { atSeconds: 0, accepted: 0, settled: 10, processing: 0, load1: 1 },
        { atSeconds: 5, accepted: 100, settled: null, processing: null, load1: 3 },
        { atSeconds: 10, accepted: 200, settled: 160, processing: 50, load1: 2 },
      ],
      records,
      purchases: records.map((r) => ({ at: r.at, ms: r.ms, outcome: 'accepted' as const })),
      faults: [],
      drain: null,
      quiet: null,
      checks: [],
      error: null,
      loadAtEnd: [2, 1, 0.5],
    };
    const report = renderPeakReport(facts, newModel());
    assert.match(
      report,
      /\*\*Sustained rate: 20000\.0 purchases\/s accepted\*\* \(200000 buyAirtime accepted in 10 s/,
    );
    assert.match(report, /\*\*15\.0 purchases\/s settled\*\*/);
    assert.match(report, /mean 2\.00, max 3\.00/);
    assert.match(
      report,
      /\| each request answered 200, the whole driving time \| 200000 \| 100 ms \| 300 ms \| 300 ms \|/,
    );
    assert.match(report, /^# Soak report, peak profile: PASS$/m);
  });
});
