import type { Check } from '../common.ts';
import type { RequestRecord } from './client.ts';
import type { FaultReport } from './faults.ts';
import type { Model } from './model.ts';
import type { Window } from './peak-faults.ts';
import { type CalibrationStep, P99_BOUND_MS, type PeakPurchase, percentileOf } from './peak-load.ts';
import type { Quiet } from './quiet.ts';
import { countsTable, requestsTable } from './report.ts';

// The peak profile's report (bench/soak-peak-report.md): the rate sustained (purchases accepted and
// settled per second), buyAirtime's latency over the whole driving time and outside the faults, a
// timeline of the run, the calibration, each fault and what the clients saw, and the final checks.

/** One look at the run (peak.ts samples every few seconds). */
export type Sample = {
  atSeconds: number;
  /** Purchases the client saw accepted so far (calibration's included). */
  accepted: number;
  /** Purchases no longer processing in the database; null when it could not be read (restarting). */
  settled: number | null;
  processing: number | null;
  load1: number;
};

export type PeakFacts = {
  startedAt: string;
  command: string;
  machine: string;
  topology: string;
  database: string;
  buyers: number;
  drivingSeconds: number;
  calibration: CalibrationStep[];
  concurrency: number;
  concurrencyFrom: string;
  /** The driving time, in performance.now(). */
  window: Window | null;
  samples: Sample[];
  records: RequestRecord[];
  purchases: PeakPurchase[];
  faults: { report: FaultReport; window: Window }[];
  /** The pending purchases settled before the quiet (peak.ts drainProcessing). */
  drain: {
    processingBefore: number | null;
    calls: number;
    ms: number;
    processingAfter: number | null;
  } | null;
  quiet: Quiet | null;
  checks: Check[];
  error: string | null;
  loadAtEnd?: number[];
};

const ms = (n: number) => `${Math.round(n)} ms`;

/** buyAirtime requests answered 200 within [from, to), outside `excluded`. */
function buyLatencies(records: RequestRecord[], from: number, to: number, excluded: Window[] = []): number[] {
  return records
    .filter(
      (r) =>
        r.op === 'buyAirtime' &&
        r.status === 200 &&
        r.at >= from &&
        r.at < to &&
        !excluded.some((w) => r.at >= w.from && r.at <= w.to),
    )
    .map((r) => r.ms);
}

function latencyLine(what: string, values: number[]): string {
  return `| ${what} | ${values.length} | ${ms(percentileOf(values, 0.5))} | ${ms(percentileOf(values, 0.99))} | ${ms(values.reduce((max, v) => Math.max(max, v), 0))} |`;
}

function settledRate(samples: Sample[]): { perSecond: number; over: number } | null {
  const read = samples.filter((s) => s.settled !== null);
  const first = read[0];
  const last = read.at(-1);
  if (first === undefined || last === undefined || last.atSeconds <= first.atSeconds) return null;
  return {
    perSecond: ((last.settled as number) - (first.settled as number)) / (last.atSeconds - first.atSeconds),
    over: last.atSeconds - first.atSeconds,
  };
}

/** A row per tenth of the driving time: the rate, latency, answers other than 200 and the backlog. */
function timeline(facts: PeakFacts, window: Window): string[] {
  const slices = 10;
  const width = (window.to - window.from) / slices;
  const rows: string[] = [];
  for (let i = 0; i < slices; i++) {
    const from = window.from + i * width;
    const to = from + width;
    const accepted = facts.purchases.filter(
      (p) => p.outcome === 'accepted' && p.at >= from && p.at < to,
    ).length;
    const latencies = buyLatencies(facts.records, from, to);
    const other = facts.records.filter(
      (r) => r.op === 'buyAirtime' && r.status !== 200 && r.at >= from && r.at < to,
    );
    const byStatus = new Map<string, number>();
    for (const r of other) {
      const key = r.status === 0 ? 'no answer' : `${r.status}${r.code === undefined ? '' : ` ${r.code}`}`;
      byStatus.set(key, (byStatus.get(key) ?? 0) + 1);
    }
    const fromS = (from - window.from) / 1000;
    const toS = (to - window.from) / 1000;
    const inSlice = facts.samples.filter((s) => s.atSeconds >= fromS && s.atSeconds < toS);
    const settledRead = inSlice.filter((s) => s.settled !== null);
    const processing = settledRead.at(-1)?.processing;
    const load = inSlice.length === 0 ? '–' : Math.max(...inSlice.map((s) => s.load1)).toFixed(2);
    const faults = facts.faults
      .filter((f) => f.window.from < to && f.window.to >= from)
      .map((f) => f.report.name.split(' (')[0]);
    rows.push(
      `| ${Math.round(fromS)}–${Math.round(toS)} | ${(accepted / (width / 1000)).toFixed(1)} | ${ms(percentileOf(latencies, 0.5))} | ${ms(percentileOf(latencies, 0.99))} | ${[...byStatus].map(([k, n]) => `${k}: ${n}`).join(', ') || '–'} | ${processing ?? '–'} | ${load} | ${faults.join('; ') || ''} |`,
    );
  }
  return [
    '| seconds | accepted/s | buyAirtime p50 | p99 | answers other than 200 (retried) | processing at the slice’s last sample | load average (1 min, max) | fault |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
  ];
}

function figures(facts: PeakFacts, window: Window): string[] {
  const seconds = (window.to - window.from) / 1000;
  const inWindow = facts.purchases.filter((p) => p.at >= window.from && p.at < window.to);
  const accepted = inWindow.filter((p) => p.outcome === 'accepted');
  const settled = settledRate(facts.samples);
  const faultWindows = facts.faults.map((f) => f.window);
  const all = buyLatencies(facts.records, window.from, window.to);
  const calm = buyLatencies(facts.records, window.from, window.to, faultWindows);
  const endToEnd = accepted.map((p) => p.ms);
  const loads = facts.samples.map((s) => s.load1);
  const meanLoad = loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length);
  const during = (at: number) => faultWindows.some((w) => at >= w.from && at <= w.to);
  const faultSeconds = faultWindows.reduce(
    (sum, w) => sum + Math.max(0, Math.min(w.to, window.to) - Math.max(w.from, window.from)) / 1000,
    0,
  );
  const calmAccepted = accepted.filter((p) => !during(p.at)).length;
  return [
    `- **Sustained rate: ${(accepted.length / seconds).toFixed(1)} purchases/s accepted** (${accepted.length} buyAirtime accepted in ${seconds.toFixed(0)} s by ${facts.concurrency} callers, faults included; ${inWindow.filter((p) => p.outcome === 'refused').length} refused, ${inWindow.filter((p) => p.outcome === 'unresolved').length} without a definite answer within the client's 60 s of retries, each sent again after the quiet)${settled === null ? '' : `; **${settled.perSecond.toFixed(1)} purchases/s settled** (success or failed in the database, over ${settled.over.toFixed(0)} s of samples)`}.`,
    `- Outside the faults' windows (from each fault's start until every API process was ready again, ${faultSeconds.toFixed(0)} s in all): ${(calmAccepted / Math.max(1, seconds - faultSeconds)).toFixed(1)} purchases/s accepted.`,
    `- Load average (1 min) over the run: mean ${meanLoad.toFixed(2)}, max ${Math.max(0, ...loads).toFixed(2)}; at the end ${facts.loadAtEnd?.map((l) => l.toFixed(2)).join(', ') ?? '–'} (other work shares this machine).`,
    '',
    '| buyAirtime latency | requests | p50 | p99 | max |',
    '|---|---|---|---|---|',
    latencyLine('each request answered 200, the whole driving time', all),
    latencyLine('each request answered 200, outside the faults’ windows', calm),
    latencyLine('each purchase from its first try to its acceptance (retries included)', endToEnd),
  ];
}

function calibrationTable(facts: PeakFacts): string[] {
  if (facts.calibration.length === 0)
    return [`Concurrency ${facts.concurrency}, from ${facts.concurrencyFrom}: no calibration.`];
  return [
    `The closed loop at doubling concurrency until two steps in a row beat the best rate before them by under 10%, p99 passed ${P99_BOUND_MS} ms or a purchase was not accepted; chosen: the smallest within 10% of the best rate with p99 bounded, **${facts.concurrency} callers**.`,
    '',
    '| callers | accepted/s | p50 | p99 | not accepted |',
    '|---|---|---|---|---|',
    ...facts.calibration.map(
      (s) =>
        `| ${s.concurrency} | ${s.perSecond.toFixed(1)} | ${ms(s.p50Ms)} | ${ms(s.p99Ms)} | ${s.notAccepted} |`,
    ),
  ];
}

export function renderPeakReport(facts: PeakFacts, model: Model): string {
  const failed = facts.checks.filter((c) => !c.ok).length;
  const faultsFailed = facts.faults.filter((f) => !f.report.ok).length;
  const verdict =
    facts.error !== null
      ? 'ERROR'
      : failed + faultsFailed === 0
        ? 'PASS'
        : `FAIL (${failed} checks, ${faultsFailed} faults not ok)`;
  const faults = facts.faults.map(({ report: f }) =>
    [
      `- **${f.name}** at ${f.atSeconds} s — ${f.ok ? 'ok' : '**not ok**'}`,
      ...f.observations.map((o) => `  - ${o}`),
    ].join('\n'),
  );
  return [
    `# Soak report, peak profile: ${verdict}`,
    '',
    `\`${facts.command}\`, started ${facts.startedAt}; ${facts.topology}; ${facts.buyers} funded buyers; driven for ${facts.drivingSeconds} s (at least; until the last fault was over) on ${facts.database}. Machine: ${facts.machine}.`,
    facts.error === null ? '' : `\n**The run stopped on an error:** ${facts.error}\n`,
    facts.drain === null
      ? ''
      : `Drain: ${facts.drain.processingBefore ?? '?'} purchases were processing when the driving ended (pending ones, digits 2 and 3, wait for the requery job: 100 a minute); after the sandbox clock moved an hour, ${facts.drain.calls} adminReconcile calls (100 requeries each) left ${facts.drain.processingAfter ?? '?'} processing, in ${facts.drain.ms} ms.`,
    '',
    facts.quiet === null
      ? ''
      : `Quiet: the sandbox clock moved ${facts.quiet.clockMovedSeconds} s; settled in ${facts.quiet.settleMs} ms; still processing: ${facts.quiet.processingLeft}; answers never heard after the quiet: ${facts.quiet.unresolvedAfter.length}.`,
    '',
    '## Figures',
    '',
    ...(facts.window === null ? ['Not driven.'] : figures(facts, facts.window)),
    '',
    '## Final checks',
    '',
    '| result | check | detail |',
    '|---|---|---|',
    ...facts.checks.map((c) => `| ${c.ok ? 'ok' : '**FAIL**'} | ${c.name} | ${c.detail} |`),
    '',
    '## Faults',
    '',
    ...faults,
    '',
    '## Timeline (tenths of the driving time)',
    '',
    ...(facts.window === null ? ['Not driven.'] : timeline(facts, facts.window)),
    '',
    '## Calibration',
    '',
    ...calibrationTable(facts),
    '',
    '## Operations and outcomes (the driver’s view, calibration and quiet included)',
    '',
    countsTable(model),
    '',
    '## Requests (every HTTP request the client sent, retries included)',
    '',
    requestsTable(facts.records),
    '',
  ].join('\n');
}
