// What /metrics says while the soak runs: every process that serves it (the API processes, the
// workers on METRICS_PORT) is scraped before the run, before each fault, at the fault's worst moment,
// after its recovery and at the end. A snapshot keeps each process's exposition apart; combining it
// follows what each figure is (src/http/metrics.ts): a counter is what one process did, so the
// processes' counters are summed; a gauge is read from the database at each scrape, the same from
// every process, so it is taken once (the max, a process that could not read it serving nothing);
// a gauge of the process itself (its start time, whether it reaches the database) is kept per process.

/** One line of an exposition: the metric's name, its labels in the order served, its value. */
export type Sample = { name: string; labels: [string, string][]; value: number };
export type Exposition = { samples: Sample[]; types: Map<string, string> };

/**
 * What every process answered at one moment: null for a process that did not answer (dead, or not
 * within the bound); `ms`, how long each took to answer or to fail.
 */
export type Snapshot = { label: string; processes: Map<string, Exposition | null>; ms?: Map<string, number> };

/** Series key (name{label="value",...}) → value, after combining the processes. */
export type Figures = Map<string, number>;

export type MetricsTarget = { name: string; url: string };

/** Figures of the process itself, not of the database: kept per process, under a process label. */
const PER_PROCESS = new Set(['billrail_ready', 'process_start_time_seconds']);

/** Gauges a reader of the report wants whether they moved or not: the money's state at rest. */
export const MONEY_GAUGES = [
  'billrail_provider_float_balance_kobo',
  'billrail_provider_float_floor_kobo',
  'billrail_vtu_purchases_processing',
  'billrail_vtu_purchases_stuck',
  'billrail_payment_inbox_backlog',
  'billrail_payment_inbox_oldest_age_seconds',
  'billrail_ledger_check_ok',
  'billrail_ledger_check_imbalances',
];

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/**
 * The Prometheus text format, as far as the soak reads it: samples of billrail_* and the process's
 * start time, # TYPE lines for what each family is; histogram buckets and HTTP request durations
 * (a row per route and bucket) left out.
 */
export function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice('# TYPE '.length).split(/\s+/);
      if (name !== undefined && type !== undefined) types.set(name, type);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) continue;
    const [, name = '', labelText = '', valueText = ''] = match;
    if (!name.startsWith('billrail_') && name !== 'process_start_time_seconds') continue;
    if (name.endsWith('_bucket') || name.startsWith('billrail_http_request_duration_seconds')) continue;
    const value = Number(valueText);
    if (!Number.isFinite(value)) continue;
    const labels = [...labelText.matchAll(LABEL)].map((m): [string, string] => [m[1] ?? '', m[2] ?? '']);
    samples.push({ name, labels, value });
  }
  return { samples, types };
}

/** The family a sample belongs to (a histogram's _sum and _count are its own) and what it is. */
export function typeOf(exposition: Exposition, name: string): string {
  const direct = exposition.types.get(name);
  if (direct !== undefined) return direct;
  const family = name.replace(/_(sum|count|total)$/, '');
  return exposition.types.get(family) ?? 'untyped';
}

export function seriesKey(name: string, labels: [string, string][]): string {
  return labels.length === 0 ? name : `${name}{${labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
}

export function parseSeriesKey(key: string): { name: string; labels: Map<string, string> } {
  const brace = key.indexOf('{');
  if (brace < 0) return { name: key, labels: new Map() };
  const labels = new Map([...key.slice(brace).matchAll(LABEL)].map((m) => [m[1] ?? '', m[2] ?? '']));
  return { name: key.slice(0, brace), labels };
}

/**
 * One set of figures from the processes' expositions: counters (and histograms' sums and counts)
 * summed, database gauges the max of the processes that served them, per-process gauges labelled
 * with the process's name.
 */
export function combine(snapshot: Snapshot): Figures {
  const figures: Figures = new Map();
  for (const [process, exposition] of snapshot.processes) {
    if (exposition === null) continue;
    for (const sample of exposition.samples) {
      if (PER_PROCESS.has(sample.name)) {
        figures.set(seriesKey(sample.name, [['process', process], ...sample.labels]), sample.value);
        continue;
      }
      const key = seriesKey(sample.name, sample.labels);
      const known = figures.get(key);
      const isGauge = typeOf(exposition, sample.name) === 'gauge';
      figures.set(
        key,
        known === undefined ? sample.value : isGauge ? Math.max(known, sample.value) : known + sample.value,
      );
    }
  }
  return figures;
}

/**
 * Which processes answered /metrics in a snapshot and how fast, e.g. "api-1 (12 ms), api-2 (did not
 * answer: 9000 ms)": a scrape slower than Prometheus's scrape_timeout loses every figure at once.
 */
export function answeredOf(snapshot: Snapshot): string {
  return [...snapshot.processes]
    .map(([name, e]) => {
      const ms = snapshot.ms?.get(name);
      const took = ms === undefined ? '' : `${Math.round(ms)} ms`;
      if (e !== null) return took === '' ? name : `${name} (${took})`;
      return `${name} (did not answer${took === '' ? '' : `: ${took}`})`;
    })
    .join(', ');
}

/** Scrapes every target at once; a process that does not answer within `boundMs` is null. */
export async function takeSnapshot(
  label: string,
  targets: MetricsTarget[],
  boundMs = 10_000,
): Promise<Snapshot> {
  const answers = await Promise.all(
    targets.map(async (target): Promise<[string, Exposition | null, number]> => {
      const started = performance.now();
      try {
        // The money gauges read the database and the providers at scrape time: a fault makes it slow.
        const response = await fetch(`${target.url}/metrics`, { signal: AbortSignal.timeout(boundMs) });
        const text = await response.text();
        const exposition = response.status === 200 ? parseExposition(text) : null;
        return [target.name, exposition, performance.now() - started];
      } catch {
        return [target.name, null, performance.now() - started];
      }
    }),
  );
  return {
    label,
    processes: new Map(answers.map(([name, e]) => [name, e])),
    ms: new Map(answers.map(([name, , ms]) => [name, ms])),
  };
}

/**
 * A row of a fault's table: the series `name` (its samples matching `where`), summed within one
 * set of figures per combination of the `by` labels (e.g. provider errors over every operation).
 */
export type RowSpec = { name: string; by?: string[]; where?: Record<string, string[]> };

export type FaultKind = 'kill' | 'database' | 'providers' | 'webhooks';

/** The providers faults.ts makes time out and fail. */
export const FAULTED_PROVIDERS = { provider: ['bills', 'data'] };

/** The series each fault should move (issue 29: the money metrics moving under the soak's faults). */
export const FAULT_SERIES: Record<FaultKind, RowSpec[]> = {
  kill: [
    { name: 'process_start_time_seconds', by: ['process'] },
    { name: 'billrail_ready', by: ['process'] },
    { name: 'billrail_job_queue_jobs', by: ['state'] },
    { name: 'billrail_vtu_purchases_processing' },
  ],
  database: [
    { name: 'billrail_http_requests_total', by: ['status'] },
    { name: 'billrail_ready', by: ['process'] },
    { name: 'billrail_vtu_purchases_processing' },
    { name: 'billrail_job_queue_jobs', by: ['state'] },
  ],
  providers: [
    { name: 'billrail_provider_request_errors_total', by: ['provider'], where: FAULTED_PROVIDERS },
    { name: 'billrail_provider_request_duration_seconds_count', by: ['provider'], where: FAULTED_PROVIDERS },
    { name: 'billrail_vtu_purchases_total', by: ['provider', 'outcome'] },
    { name: 'billrail_vtu_purchases_processing' },
    { name: 'billrail_vtu_purchases_stuck' },
  ],
  webhooks: [
    { name: 'billrail_payment_inbox_backlog' },
    { name: 'billrail_payment_inbox_oldest_age_seconds' },
    {
      name: 'billrail_provider_request_duration_seconds_count',
      by: ['provider', 'operation'],
      where: { provider: ['paystack'] },
    },
    { name: 'billrail_http_requests_total', by: ['status'] },
  ],
};

/** The rows a spec makes of one set of figures: row name → value. */
export function pickRows(figures: Figures, spec: RowSpec): Map<string, number> {
  const rows = new Map<string, number>();
  for (const [key, value] of figures) {
    const { name, labels } = parseSeriesKey(key);
    if (name !== spec.name) continue;
    if (Object.entries(spec.where ?? {}).some(([k, v]) => !v.includes(labels.get(k) ?? ''))) continue;
    const by = (spec.by ?? []).map((k): [string, string] => [k, labels.get(k) ?? '']);
    const row = seriesKey(name, by);
    rows.set(row, (rows.get(row) ?? 0) + value);
  }
  return rows;
}

/**
 * The mean seconds per provider call between consecutive snapshots (Δsum / Δcount of the duration
 * histogram), per provider: how slow the calls made in that interval were. Null where no call ended.
 */
export function meanLatencyBetween(
  earlier: Figures,
  later: Figures,
  where: Record<string, string[]> = {},
): Map<string, number | null> {
  const sums = (f: Figures) =>
    pickRows(f, { name: 'billrail_provider_request_duration_seconds_sum', by: ['provider'], where });
  const counts = (f: Figures) =>
    pickRows(f, { name: 'billrail_provider_request_duration_seconds_count', by: ['provider'], where });
  const [s0, s1, c0, c1] = [sums(earlier), sums(later), counts(earlier), counts(later)];
  const out = new Map<string, number | null>();
  for (const [row, count] of c1) {
    const provider = parseSeriesKey(row).labels.get('provider') ?? '';
    const calls = count - (c0.get(row) ?? 0);
    const seconds =
      (s1.get(row.replace('_count', '_sum')) ?? 0) - (s0.get(row.replace('_count', '_sum')) ?? 0);
    out.set(provider, calls > 0 ? seconds / calls : null);
  }
  return out;
}

/**
 * The end-of-run table's series: those that moved between the two sets of figures (absent counts as
 * 0, so a counter first served at 0 is left out) and the money gauges whatever they are.
 */
export function seriesWorthShowing(before: Figures, after: Figures): string[] {
  const keys = [...new Set([...before.keys(), ...after.keys()])].sort();
  return keys.filter(
    (key) =>
      MONEY_GAUGES.includes(parseSeriesKey(key).name) || (before.get(key) ?? 0) !== (after.get(key) ?? 0),
  );
}

/** For the end-of-run table: HTTP requests per status (not per route and method), the rest as served. */
export function foldHttpByStatus(figures: Figures): Figures {
  const out: Figures = new Map();
  for (const [key, value] of figures) {
    const { name, labels } = parseSeriesKey(key);
    const folded =
      name === 'billrail_http_requests_total'
        ? seriesKey(name, [['status', labels.get('status') ?? '']])
        : key;
    out.set(folded, (out.get(folded) ?? 0) + value);
  }
  return out;
}
