import fs from 'node:fs';
import path from 'node:path';
import type { Check, ScenarioResult } from './common.ts';
import type { LedgerCheckRun } from './ledger-check.ts';
import type { LedgerPostingsRun, WaitSamples } from './ledger-postings.ts';
import type { PgbenchResult } from './pgbench.ts';
import type { ClusterRound } from './purchases-cluster.ts';

// bench/RESULTS.md: the bench's results as a reader wants them, every scenario on each database
// beside the anchors measured in the same run (a bare Fastify route on the same Node, `pgbench -N`
// on the same PostgreSQL), with what each request cost the service and PostgreSQL in CPU. The
// figures come from the results object bench/run.ts also writes as JSON; this module only lays
// them out, so that a test can feed it a results object and read the tables.

/** Issue 43's scenarios (bench/run.ts's benchScaling), each null or empty when it did not run. */
export type ScalingResults = {
  ledgerPostings: LedgerPostingsRun | null;
  buyAirtimeCluster: ClusterRound[];
  ledgerCheck: LedgerCheckRun | null;
  /** LEDGER_SHARDS of the single-process buyAirtime (the caller's environment); null: the default. */
  singleProcessLedgerShards: string | null;
};

/** What the report needs of bench/run.ts's results object (bench/results/latest.json). */
export type ReportInput = {
  startedAt: string;
  finishedAt: string;
  commit: string | null;
  /** Whether tracked files differed from the commit when the bench ran (null: unknown). */
  uncommittedChanges: boolean | null;
  node: string;
  machine: {
    cpus: number;
    cpuModel: string | null;
    memoryMb: number;
    loadAverage1mBefore: number | null;
    loadAverage1mAfter: number | null;
  };
  selection: {
    /** The scenarios this run was asked for, and every scenario the bench has. */
    scenarios: string[];
    allScenarios: string[];
    /** BENCH_DURATION, when it replaced the scenarios' own durations. */
    durationSeconds: number | null;
  };
  fastifyAnchor: ScenarioResult | null;
  pgbench: PgbenchResult | null;
  runs: { database: string; startupMs: number; scenarios: ScenarioResult[]; checks: Check[] }[];
  /** Absent in results written before the scaling scenarios existed. */
  scaling?: ScalingResults | null;
  skipped: string[];
};

export type AnchorKind = 'fastify' | 'pgbench' | 'none';

/**
 * Which anchor a scenario is held against. HTTP-bound ones (reads, the duplicate webhook, the OTP
 * request, whole sign-ins) against the bare Fastify route: what is left of the machine's HTTP
 * capacity after the service's own work. Database-bound ones (each request commits write
 * transactions: a user, a posting, a stored event; or no HTTP at all) against `pgbench -N`'s tps,
 * a simple write transaction on the same PostgreSQL. The broadcast's pushes are outbound, encrypted
 * HTTPS from a worker: neither anchor measures that.
 */
const ANCHORS: Record<string, AnchorKind> = {
  getWallet: 'fastify',
  requestOtp: 'fastify',
  'full sign-in': 'fastify',
  'webhook dup': 'fastify',
  listNotifications: 'fastify',
  verifyOtp: 'pgbench',
  webhook: 'pgbench',
  buyAirtime: 'pgbench',
  createSavingsLock: 'pgbench',
  transferToUser: 'pgbench',
  createBulkOrder: 'pgbench',
  savingsMaturity: 'pgbench',
  scheduledRuns: 'pgbench',
  ledgerPostings: 'pgbench',
  broadcastPush: 'none',
};

/**
 * The anchor of a scenario by its name: "savingsMaturity ×2" is a savingsMaturity, "buyAirtime ×2 K=8"
 * a buyAirtime, "ledgerPostings K=1" a ledgerPostings.
 */
export function anchorOf(scenario: string): AnchorKind {
  return ANCHORS[scenario.replace(/( ×\d+)?( K=\d+)?$/, '')] ?? 'none';
}

const ANCHOR_LABEL: Record<AnchorKind, string> = { fastify: 'Fastify', pgbench: 'pgbench -N', none: '—' };

/** A figure to `digits` significant places, for cells (1234.5 → "1235", 0.01234 → "0.0123", 40 → "40"). */
export function figure(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return 'n/a';
  // Whole figures (counts, autocannon's millisecond latencies) stay whole.
  if (Number.isInteger(value)) return String(value);
  const magnitude = Math.floor(Math.log10(Math.abs(value)));
  const decimals = Math.max(0, digits - 1 - magnitude);
  return value.toFixed(decimals);
}

/** CPU ms per request, or null when the CPU or the requests are not known. */
export function perRequest(cpuMs: number | null | undefined, requests: number): number | null {
  if (cpuMs === null || cpuMs === undefined || requests <= 0) return null;
  return cpuMs / requests;
}

function markdownTable(header: string[], rows: string[][], textColumns: number): string[] {
  // A '|' inside a cell (a scenario's description) would split it.
  const line = (cells: string[]) => `| ${cells.map((c) => c.replaceAll('|', '\\|')).join(' | ')} |`;
  const rule = `|${header.map((_, i) => (i < textColumns ? '---' : '--:')).join('|')}|`;
  return [line(header), rule, ...rows.map(line)];
}

function postgresCell(database: string, s: ScenarioResult): string {
  if (database === 'pglite') return 'in service';
  const all = perRequest(s.usage?.postgresCpuMs, s.requests);
  const own = perRequest(s.usage?.postgresDatabaseCpuMs, s.requests);
  if (all === null) return 'n/a';
  return `${figure(all)} (db ${figure(own)})`;
}

function ratioCell(s: ScenarioResult, input: ReportInput): string {
  const kind = anchorOf(s.scenario);
  const rate =
    kind === 'fastify'
      ? (input.fastifyAnchor?.requestsPerSecond ?? null)
      : kind === 'pgbench'
        ? (input.pgbench?.tps ?? null)
        : null;
  if (rate === null || rate <= 0) return 'n/a';
  return figure(s.requestsPerSecond / rate, 2);
}

/** The scenarios table: one row per scenario per database. */
export function scenarioTable(input: ReportInput): string[] {
  const header = [
    'database',
    'scenario',
    'anchor',
    'req/s',
    '÷ anchor',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'sampled RSS MB',
    'service CPU ms/req',
    'PostgreSQL CPU ms/req (own db)',
    'requests',
    'non-2xx + errors',
  ];
  const rows = input.runs.flatMap((run) =>
    run.scenarios.map((s) => [
      run.database,
      s.scenario,
      ANCHOR_LABEL[anchorOf(s.scenario)],
      figure(s.requestsPerSecond),
      ratioCell(s, input),
      figure(s.latencyP50Ms),
      figure(s.latencyP99Ms),
      s.serverPeakRssMb === null ? 'n/a' : String(s.serverPeakRssMb),
      s.usage?.serverSampledPeakRssMb == null ? 'n/a' : String(s.usage.serverSampledPeakRssMb),
      figure(perRequest(s.usage?.serviceCpuMs, s.requests)),
      postgresCell(run.database, s),
      String(s.requests),
      String(s.non2xx + s.errors),
    ]),
  );
  return markdownTable(header, rows, 3);
}

/** The anchors table: the bare Fastify route and `pgbench -N`, measured in the same run. */
export function anchorTable(input: ReportInput): string[] {
  const header = [
    'anchor',
    'rate',
    'p50 ms',
    'p99 ms',
    'peak RSS MB',
    'process CPU ms/req',
    'PostgreSQL CPU ms/tx (own db)',
  ];
  const rows: string[][] = [];
  const fastify = input.fastifyAnchor;
  if (fastify !== null) {
    rows.push([
      `bare Fastify route, same Node (${fastify.measures})`,
      `${figure(fastify.requestsPerSecond)} req/s`,
      figure(fastify.latencyP50Ms),
      figure(fastify.latencyP99Ms),
      fastify.serverPeakRssMb === null ? 'n/a' : String(fastify.serverPeakRssMb),
      figure(perRequest(fastify.usage?.serviceCpuMs, fastify.requests)),
      '—',
    ]);
  }
  const pgbench = input.pgbench;
  if (pgbench !== null) {
    const transactions = pgbench.transactions ?? pgbench.tps * pgbench.durationSeconds;
    const all = perRequest(pgbench.postgresCpuMs, transactions);
    rows.push([
      `pgbench -N, same PostgreSQL (${pgbench.clients} clients, ${pgbench.threads} threads, scale ${pgbench.scale}, ${pgbench.durationSeconds}s)`,
      `${figure(pgbench.tps)} tps`,
      `avg ${figure(pgbench.latencyAverageMs)}`,
      'n/a',
      '—',
      '—',
      all === null
        ? 'n/a'
        : `${figure(all)} (db ${figure(perRequest(pgbench.postgresDatabaseCpuMs, transactions))})`,
    ]);
  }
  if (rows.length === 0) return ['No anchor was measured in this run.'];
  return markdownTable(header, rows, 1);
}

function headerLines(input: ReportInput): string[] {
  const { machine, selection } = input;
  const subset =
    selection.scenarios.length < selection.allScenarios.length ||
    selection.durationSeconds !== null ||
    input.skipped.length > 0;
  const notRun = selection.allScenarios.filter((s) => !selection.scenarios.includes(s));
  const load = (n: number | null) => (n === null ? 'n/a' : n.toFixed(2));
  const lines = [
    '# Bench results',
    '',
    'Written by `npm run bench` (bench/run.ts, laid out by bench/report.ts; `node bench/render-results.ts` lays out a results JSON again); do not edit by hand.',
    '',
  ];
  if (subset) {
    lines.push(
      `**Partial run.** Scenarios asked for: ${selection.scenarios.join(', ')}.` +
        (notRun.length > 0 ? ` Not run: ${notRun.join(', ')}.` : '') +
        (selection.durationSeconds !== null
          ? ` Every load lasted BENCH_DURATION=${selection.durationSeconds} s instead of its own duration.`
          : '') +
        (input.skipped.length > 0 ? ` Skipped: ${input.skipped.join('; ')}.` : ''),
      '',
    );
  }
  const loads = [machine.loadAverage1mBefore, machine.loadAverage1mAfter].filter((n) => n !== null);
  if (loads.some((n) => n > machine.cpus)) {
    lines.push(
      `**The machine was busy:** load average (1 min) up to ${Math.max(...loads).toFixed(1)} on ${machine.cpus} cores, so other work competed with the service and the load generator: the rates are low, the latencies long and the ratios noisy (a scenario and its anchor ran minutes apart), by amounts not known. CPU per request is the least disturbed figure.`,
      '',
    );
  }
  lines.push(
    `- Date: ${input.startedAt} to ${input.finishedAt}`,
    `- Commit: ${input.commit ?? 'unknown'}${input.uncommittedChanges === true ? ' with uncommitted changes' : ''}`,
    `- Node: ${input.node}`,
    `- Machine: ${machine.cpus} cores, ${machine.cpuModel ?? 'unknown model'}, ${machine.memoryMb} MiB; load average (1 min) before ${load(machine.loadAverage1mBefore)}, after ${load(machine.loadAverage1mAfter)}`,
    `- Databases: ${input.runs.map((r) => `${r.database} (service ready in ${r.startupMs} ms)`).join(', ') || 'none'}`,
    '',
  );
  return lines;
}

const NOTES = [
  'The load generator (autocannon, in the bench process) runs on the same machine as the service and competes for its cores; the figures compare runs on one machine, they are not a capacity plan.',
  '÷ anchor: the scenario’s req/s divided by its anchor’s rate: the bare Fastify route’s req/s for HTTP-bound scenarios (reads, the duplicate webhook, the OTP request, whole sign-ins), `pgbench -N` tps for database-bound ones (each request commits write transactions, or no HTTP at all); on PGlite too, against pgbench on PostgreSQL, for scale. broadcastPush (outbound encrypted pushes from a worker) has no anchor.',
  'peak RSS MB: VmHWM of the service process, reset before each scenario (clear_refs) where Linux allows, else the peak since it started; sampled RSS MB: the largest VmRSS read every 100 ms during the scenario.',
  'service CPU ms/req: utime + stime of the service process (/proc/<pid>/stat) over the scenario ÷ its requests. broadcastPush: the worker process’s CPU ÷ pushes.',
  'PostgreSQL CPU ms/req: utime + stime of every process whose comm is postgres (plus the postmaster’s reaped children, so backends that ended count) over the scenario ÷ requests; in brackets the part spent by the backends of the service’s own database (PostgreSQL is shared with other work on this machine, so the whole may include it). On PGlite the database runs inside the service process: its CPU is in the service column.',
  'full sign-in: req/s and CPU are per completed sign-in (requestOtp, the SMS read, verifyOtp), p50/p99 the whole sign-in. createBulkOrder: per order of 100 lines (its ratio too). savingsMaturity, scheduledRuns and reconciliation run in the bench process after the service stopped: no service CPU or RSS. reconciliation: req/s is items compared and written per second, p50/p99 the one run from adminRunReconciliation to done; its counts per bucket are in its check.',
];

/** Said only when the run measured buyAirtime through PgBouncer. */
const PGBOUNCER_NOTE =
  'pgbouncer: buyAirtime alone, on a fresh database of the same PostgreSQL that the service (its pool and pg-boss’s) reaches through PgBouncer 1.18 in transaction pooling (`bash .ci/pgbouncer`: default_pool_size 40), with DATABASE_PREPARED_STATEMENTS=0, right after the direct run; its PostgreSQL columns count the server’s processes, not PgBouncer’s own CPU (decision 0027).';

/** The default of src/config.ts's LEDGER_SHARDS, which the single-process buyAirtime runs with unless told. */
const LEDGER_SHARDS_DEFAULT = 8;

/**
 * Issue 43's figures beside `pgbench -N` on the same PostgreSQL: the posting microbench at each K,
 * buyAirtime through one process against two API processes and a worker at each K (RSS per process),
 * and the ledger checks on a bulk-loaded ledger. Empty when none of them ran.
 */
export function scalingSection(input: ReportInput): string[] {
  const scaling = input.scaling;
  if (scaling === null || scaling === undefined) return [];
  const { ledgerPostings, buyAirtimeCluster, ledgerCheck } = scaling;
  if (ledgerPostings === null && buyAirtimeCluster.length === 0 && ledgerCheck === null) return [];
  const tps = input.pgbench?.tps ?? null;
  const ratio = (rate: number) => (tps === null || tps <= 0 ? 'n/a' : figure(rate / tps, 2));
  const lines = ['## Scaling (issue 43), beside pgbench -N', ''];
  const pgbench = input.pgbench;
  lines.push(
    pgbench === null
      ? '`pgbench -N` was not measured in this run: no ratios.'
      : `\`pgbench -N\` on the same PostgreSQL: ${figure(pgbench.tps)} tps (${pgbench.clients} clients, ${pgbench.threads} threads, scale ${pgbench.scale}, ${pgbench.durationSeconds} s).`,
    '',
  );
  if (ledgerPostings !== null) {
    lines.push(
      `### Posting microbench (bench/ledger-postings.ts): ${ledgerPostings.clients} clients, ${ledgerPostings.batch} postings a transaction`,
      '',
      ...markdownTable(
        [
          'K (LEDGER_SHARDS)',
          'postings/s',
          'purchases/s',
          'postings/s ÷ pgbench tps',
          'transaction p50 ms',
          'transaction p99 ms',
          'backends: row lock / WAL / running (mean active)',
        ],
        ledgerPostings.rounds.map((r) => [
          String(r.shards),
          figure(r.postingsPerSecond),
          figure(r.purchasesPerSecond),
          ratio(r.postingsPerSecond),
          figure(r.transactionP50Ms),
          figure(r.transactionP99Ms),
          waitShares(r.waits),
        ]),
        1,
      ),
      '',
    );
  }
  const single = input.runs
    .find((r) => r.database === 'postgres')
    ?.scenarios.find((s) => s.scenario === 'buyAirtime');
  if (buyAirtimeCluster.length > 0) {
    const rows: string[][] = [];
    if (single !== undefined)
      rows.push([
        '1 (API and workers in one)',
        scaling.singleProcessLedgerShards ?? `${LEDGER_SHARDS_DEFAULT} (default)`,
        figure(single.requestsPerSecond),
        ratio(single.requestsPerSecond),
        figure(single.latencyP50Ms),
        figure(single.latencyP99Ms),
        single.serverPeakRssMb === null ? 'n/a' : `service ${single.serverPeakRssMb}`,
        figure(perRequest(single.usage?.serviceCpuMs, single.requests)),
      ]);
    for (const round of buyAirtimeCluster) {
      const r = round.result;
      rows.push([
        `${round.apis} API + ${round.workers} worker`,
        String(round.shards),
        figure(r.requestsPerSecond),
        ratio(r.requestsPerSecond),
        figure(r.latencyP50Ms),
        figure(r.latencyP99Ms),
        round.processes.map((p) => `${p.name} ${p.peakRssMb ?? 'n/a'}`).join(', '),
        figure(perRequest(r.usage?.serviceCpuMs, r.requests)),
      ]);
    }
    lines.push(
      '### buyAirtime: one process against two API processes and one worker, on one PostgreSQL',
      '',
      ...markdownTable(
        [
          'processes',
          'K (LEDGER_SHARDS)',
          'req/s',
          '÷ pgbench -N',
          'p50 ms',
          'p99 ms',
          'peak RSS MB per process',
          'service CPU ms/req (all processes)',
        ],
        rows,
        2,
      ),
      '',
    );
  }
  if (ledgerCheck !== null) {
    const c = ledgerCheck;
    lines.push(
      '### Ledger checks (bench/ledger-check.ts)',
      '',
      ...markdownTable(
        [
          'entries',
          'new after the checkpoint',
          'wallets',
          'incremental s',
          'full s',
          'full ÷ incremental',
          'loaded in s',
        ],
        [
          [
            String(c.entries + c.added),
            String(c.added),
            String(c.users),
            figure(c.incrementalSeconds),
            figure(c.fullSeconds),
            figure(c.incrementalSeconds > 0 ? c.fullSeconds / c.incrementalSeconds : null),
            figure(c.loadSeconds),
          ],
        ],
        0,
      ),
      '',
    );
  }
  return lines;
}

/** The backends' samples as shares: row lock / WAL / running (mean active backends). */
export function waitShares(w: WaitSamples): string {
  const share = (part: number) => `${w.busy === 0 ? 0 : Math.round((100 * part) / w.busy)}%`;
  return `${share(w.rowLock)} / ${share(w.wal)} / ${share(w.running)} (${(w.busy / Math.max(1, w.samples)).toFixed(1)})`;
}

/** Said only when the run has the scaling scenarios. */
const SCALING_NOTE =
  'scaling: issue 43’s scenarios, on PostgreSQL only, each on scratch databases of its own. ledgerPostings runs the ledger’s postBatch in the bench process (no HTTP, no service process): req/s is postings/s, two a purchase, each transaction carrying the batch’s postings, so its ratio to pgbench’s one-row transactions is for scale only. buyAirtime ×2 is the buyAirtime scenario through two API processes (WORKER=0) and one worker (--worker-only) with the standalone sandbox, the 50 connections split between the APIs, on a fresh database per K: its service CPU is the three processes’ sum, its peak RSS the largest of them (each one in the scaling section). ledgerCheck loads its ledger in bulk with SQL, takes a checkpoint, adds the new entries, then times one incremental run and one full check.';

function checkLines(input: ReportInput): string[] {
  const checks = input.runs.flatMap((run) =>
    run.checks.map((c) => `- ${run.database}: ${c.ok ? 'ok' : '**FAILED**'}: ${c.name}: ${c.detail}`),
  );
  return checks.length === 0 ? ['No checks ran.'] : checks;
}

function measureLines(input: ReportInput): string[] {
  return input.runs.flatMap((run) =>
    run.scenarios.map((s) => `- ${run.database} ${s.scenario}: ${s.measures}`),
  );
}

/** The whole RESULTS.md. */
export function renderReport(input: ReportInput): string {
  return [
    ...headerLines(input),
    '## Anchors',
    '',
    ...anchorTable(input),
    '',
    '## Scenarios',
    '',
    ...scenarioTable(input),
    '',
    ...scalingSection(input),
    '## Checks',
    '',
    ...checkLines(input),
    '',
    '## What each scenario measures',
    '',
    ...measureLines(input),
    '',
    '## Notes',
    '',
    ...[
      ...NOTES,
      ...(input.runs.some((r) => r.database === 'pgbouncer') ? [PGBOUNCER_NOTE] : []),
      ...(input.runs.some((r) => r.database === 'scaling') ? [SCALING_NOTE] : []),
    ].map((n) => `- ${n}`),
    '',
  ].join('\n');
}

/** Writes the report beside and renames it, so that an interrupted run never leaves half a file. */
export function writeReport(file: string, input: ReportInput): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.tmp`;
  fs.writeFileSync(temporary, renderReport(input));
  fs.renameSync(temporary, file);
}
