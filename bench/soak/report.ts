import type { Check } from '../common.ts';
import type { RequestRecord } from './client.ts';
import type { FaultReport } from './faults.ts';
import {
  answeredOf,
  combine,
  FAULT_SERIES,
  FAULTED_PROVIDERS,
  type FaultKind,
  type Figures,
  foldHttpByStatus,
  meanLatencyBetween,
  pickRows,
  type Snapshot,
  seriesWorthShowing,
} from './metrics.ts';
import type { Model } from './model.ts';
import type { Quiet } from './quiet.ts';

// The soak's report, in markdown: the run, counts per operation and outcome, each fault and what
// it showed, /metrics before and after, and the final checks.

export type RunFacts = {
  startedAt: string;
  topology: string;
  drivingSeconds: number;
  database: string;
  people: number;
  records: RequestRecord[];
  faults: FaultReport[];
  quiet: Quiet | null;
  metricsBefore: Snapshot | null;
  metricsAfter: Snapshot | null;
  checks: Check[];
  error: string | null;
};

export function requestsTable(records: RequestRecord[]): string {
  const rows = new Map<string, number[]>();
  for (const r of records) {
    const key = `${r.op}|${r.status === 0 ? 'no answer' : `${r.status}${r.code === undefined ? '' : ` ${r.code}`}`}`;
    // Pushed, not copied: a peak run records a few hundred thousand requests.
    const latencies = rows.get(key) ?? [];
    latencies.push(r.ms);
    rows.set(key, latencies);
  }
  const lines = [...rows]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, ms]) => {
      const [op, status] = key.split('|');
      const sorted = ms.sort((x, y) => x - y);
      const p99 = sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? 0;
      return `| ${op} | ${status} | ${ms.length} | ${Math.round(p99)} | ${Math.round(sorted.at(-1) ?? 0)} |`;
    });
  return ['| operation | HTTP | requests | p99 ms | max ms |', '|---|---|---|---|---|', ...lines].join('\n');
}

/** A figure as a reader takes it: a Unix time as a time of day, a fraction to three places. */
export function formatValue(series: string, value: number | null | undefined): string {
  if (value === undefined || value === null) return '–';
  if (/_timestamp_seconds|start_time_seconds/.test(series) && value > 0)
    return new Date(value * 1000).toISOString().slice(11, 19);
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}

/** Rows of a fault's table, per spec in FAULT_SERIES's order; a process's row left out if unmoved. */
function faultRows(kind: FaultKind, figures: Figures[]): string[] {
  const rows: string[] = [];
  for (const spec of FAULT_SERIES[kind]) {
    const picked = figures.map((f) => pickRows(f, spec));
    for (const row of [...new Set(picked.flatMap((p) => [...p.keys()]))].sort()) {
      const values = picked.map((p) => p.get(row));
      // A process the fault did not touch: its start time and readiness stay as they were.
      const untouched = row.includes('{process=') && values.every((v) => v === values[0]);
      if (!untouched) rows.push(`| \`${row}\` | ${values.map((v) => formatValue(row, v)).join(' | ')} |`);
    }
  }
  return rows;
}

/** The mean seconds per call of each faulted provider, over each interval between columns that answered. */
function latencyRows(figures: Figures[]): string[] {
  const means = figures.map((f, i) => {
    const earlier = figures.slice(0, i).findLast((e) => e.size > 0);
    return earlier === undefined || f.size === 0 ? null : meanLatencyBetween(earlier, f, FAULTED_PROVIDERS);
  });
  const providers = [...new Set(means.flatMap((m) => [...(m?.keys() ?? [])]))].sort();
  return providers.map(
    (p) =>
      `| mean s per ${p} call since the column before | ${means.map((m) => m?.get(p)?.toFixed(3) ?? '–').join(' | ')} |`,
  );
}

/**
 * A fault's figures: one column per snapshot (before, during, after recovery), one row per series
 * the fault should move (FAULT_SERIES); for provider faults, the mean seconds per call too.
 */
export function faultFiguresTable(fault: FaultReport): string {
  if (fault.kind === undefined || fault.snapshots === undefined || fault.snapshots.length === 0) return '';
  const figures = fault.snapshots.map(combine);
  const lines = [
    ...faultRows(fault.kind, figures),
    ...(fault.kind === 'providers' ? latencyRows(figures) : []),
  ];
  const answered = fault.snapshots.map((s) => `${s.label}: ${answeredOf(s)}`).join('; ');
  return [
    `| series | ${fault.snapshots.map((s) => s.label).join(' | ')} |`,
    `|---|${fault.snapshots.map(() => '---|').join('')}`,
    ...lines,
    '',
    `/metrics answered (– where none did): ${answered}.`,
  ].join('\n');
}

/** The end-of-run table: the series that moved and the money gauges (HTTP folded per status). */
export function figuresTable(before: Snapshot | null, after: Snapshot | null): string {
  const empty: Snapshot = { label: '', processes: new Map() };
  const b = foldHttpByStatus(combine(before ?? empty));
  const a = foldHttpByStatus(combine(after ?? empty));
  const rows = seriesWorthShowing(b, a).map(
    (n) => `| \`${n}\` | ${formatValue(n, b.get(n))} | ${formatValue(n, a.get(n))} |`,
  );
  return ['| series | before | after |', '|---|---|---|', ...rows].join('\n');
}

export function countsTable(model: Model): string {
  const lines = [...model.counts].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `| ${k} | ${n} |`);
  return ['| operation → outcome | count |', '|---|---|', ...lines].join('\n');
}

export function renderReport(facts: RunFacts, model: Model): string {
  const failed = facts.checks.filter((c) => !c.ok).length;
  const faultsFailed = facts.faults.filter((f) => !f.ok).length;
  const verdict =
    facts.error !== null
      ? 'ERROR'
      : failed + faultsFailed === 0
        ? 'PASS'
        : `FAIL (${failed} checks, ${faultsFailed} faults not ok)`;
  const faults = facts.faults.map((f) => {
    const table = faultFiguresTable(f);
    return [
      `- **${f.name}** at ${f.atSeconds} s — ${f.ok ? 'ok' : '**not ok**'}`,
      ...f.observations.map((o) => `  - ${o}`),
      ...(table === '' ? [] : ['', table.replace(/^/gm, '  ').replace(/^ +$/gm, ''), '']),
    ].join('\n');
  });
  const checks = facts.checks.map((c) => `| ${c.ok ? 'ok' : '**FAIL**'} | ${c.name} | ${c.detail} |`);
  return [
    `# Soak report: ${verdict}`,
    '',
    `Started ${facts.startedAt}; ${facts.topology}; driven for ${facts.drivingSeconds} s (at least; until the last fault was over) with ${facts.people} people on ${facts.database}.`,
    facts.error === null ? '' : `\n**The run stopped on an error:** ${facts.error}\n`,
    facts.quiet === null
      ? ''
      : `Quiet: the sandbox clock moved ${facts.quiet.clockMovedSeconds} s; settled in ${facts.quiet.settleMs} ms; still processing: ${facts.quiet.processingLeft}; answers never heard after the quiet: ${facts.quiet.unresolvedAfter.length}.`,
    '',
    '## Final checks',
    '',
    '| result | check | detail |',
    '|---|---|---|',
    ...checks,
    '',
    '## Faults',
    '',
    ...faults,
    '',
    '## Operations and outcomes (the driver’s view)',
    '',
    countsTable(model),
    '',
    '## Requests (every HTTP request the client sent, retries included)',
    '',
    requestsTable(facts.records),
    '',
    '## /metrics before and after',
    '',
    `Every process serving /metrics (the API processes, the workers on METRICS_PORT): counters summed over the processes (a restarted process starts again from zero), gauges read from the database taken once (max), a process's own gauges (start time, ready) per process. Only the series that moved and the money gauges. Answered before: ${facts.metricsBefore === null ? 'not taken' : answeredOf(facts.metricsBefore)}; after: ${facts.metricsAfter === null ? 'not taken' : answeredOf(facts.metricsAfter)}.`,
    '',
    figuresTable(facts.metricsBefore, facts.metricsAfter),
    '',
  ].join('\n');
}
