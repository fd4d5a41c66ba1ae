import type { Check } from '../common.ts';
import type { RequestRecord } from './client.ts';
import type { FaultReport } from './faults.ts';
import { type Figures, figuresTable } from './metrics.ts';
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
  metricsBefore: Figures;
  metricsAfter: Figures;
  checks: Check[];
  error: string | null;
};

function requestsTable(records: RequestRecord[]): string {
  const rows = new Map<string, number[]>();
  for (const r of records) {
    const key = `${r.op}|${r.status === 0 ? 'no answer' : `${r.status}${r.code === undefined ? '' : ` ${r.code}`}`}`;
    rows.set(key, [...(rows.get(key) ?? []), r.ms]);
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

function countsTable(model: Model): string {
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
  const faults = facts.faults.map(
    (f) =>
      `- **${f.name}** at ${f.atSeconds} s — ${f.ok ? 'ok' : '**not ok**'}\n${f.observations.map((o) => `  - ${o}`).join('\n')}`,
  );
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
    '## /metrics before and after (summed over the API processes; a restarted process starts from zero)',
    '',
    figuresTable(facts.metricsBefore, facts.metricsAfter),
    '',
  ].join('\n');
}
