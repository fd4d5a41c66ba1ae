import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { Check, ScenarioResult } from '../../bench/common.ts';
import type { LedgerCheckRun } from '../../bench/ledger-check.ts';
import type { LedgerPostingsRun } from '../../bench/ledger-postings.ts';
import type { ClusterRound } from '../../bench/purchases-cluster.ts';
import { anchorOf, type ReportInput, renderReport, type ScalingResults } from '../../bench/report.ts';
import { onPostgres } from '../helpers/database.ts';

// Issue 43's figures (bench/RESULTS.md's scaling section) decide whether LEDGER_SHARDS and a second
// API process are worth it: a ratio taken against the wrong rate, or a process's RSS put on another's
// name, would mislead that decision. The section is fed known figures here and read back; then, on
// PostgreSQL, `npm run bench` runs the three scenarios in a tiny mode (1 s loads, a ledger of 2,000
// entries) and must finish with every check ok and each figure present.

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

function result(scenario: string, overrides: Partial<ScenarioResult> = {}): ScenarioResult {
  return {
    database: 'scaling',
    scenario,
    measures: 'POST, 50 conns, 10s',
    requestsPerSecond: 500,
    latencyP50Ms: 80,
    latencyP99Ms: 200,
    requests: 5_000,
    errors: 0,
    non2xx: 0,
    serverPeakRssMb: 250,
    usage: {
      serverPeakRssMb: 250,
      serverSampledPeakRssMb: 240,
      serviceCpuMs: 10_000,
      postgresCpuMs: 4_000,
      postgresDatabaseCpuMs: 3_000,
    },
    ...overrides,
  };
}

const waits = { samples: 100, busy: 400, rowLock: 300, wal: 60, running: 40 };

const ledgerPostings: LedgerPostingsRun = {
  clients: 16,
  batch: 20,
  rounds: [1, 8].map((shards) => ({
    shards,
    seconds: 8,
    postings: shards * 8_000,
    postingsPerSecond: shards * 1_000,
    purchasesPerSecond: shards * 500,
    transactions: 100,
    transactionP50Ms: 30,
    transactionP99Ms: 90,
    waits,
  })),
  check: { ok: true, entries: 200_000, imbalances: 0, vtuInFlightKobo: '0' },
};

const round = (shards: number, requestsPerSecond: number): ClusterRound => ({
  shards,
  apis: 2,
  workers: 1,
  startupMs: 3_000,
  result: result(`buyAirtime ×2 K=${shards}`, { requestsPerSecond }),
  acceptedToSuccess: { purchases: 5_000, p50Ms: 40, p99Ms: 150, maxMs: 400 },
  processes: [
    { name: 'api-1', peakRssMb: 210, sampledPeakRssMb: 200, cpuMs: 4_000 },
    { name: 'api-2', peakRssMb: 220, sampledPeakRssMb: 205, cpuMs: 4_000 },
    { name: 'worker', peakRssMb: 150, sampledPeakRssMb: 140, cpuMs: 2_000 },
  ],
});

const ledgerCheck: LedgerCheckRun = {
  entries: 10_000_000,
  added: 100_000,
  users: 250_000,
  loadSeconds: 120,
  firstRunSeconds: 30,
  incrementalSeconds: 0.5,
  fullSeconds: 40,
};

const scaling: ScalingResults = {
  ledgerPostings,
  buyAirtimeCluster: [round(1, 600), round(8, 800)],
  ledgerCheck,
  singleProcessLedgerShards: null,
};

function input(overrides: Partial<ReportInput> = {}): ReportInput {
  return {
    startedAt: '2026-11-29T07:00:00.000Z',
    finishedAt: '2026-11-29T07:20:00.000Z',
    commit: 'abc123',
    uncommittedChanges: false,
    node: 'v24.1.0',
    machine: {
      cpus: 2,
      cpuModel: 'AMD EPYC',
      memoryMb: 7_900,
      loadAverage1mBefore: 0.5,
      loadAverage1mAfter: 1,
    },
    selection: { scenarios: ['buyAirtime'], allScenarios: ['buyAirtime'], durationSeconds: null },
    fastifyAnchor: null,
    pgbench: {
      clients: 50,
      threads: 2,
      scale: 10,
      durationSeconds: 10,
      tps: 2_000,
      latencyAverageMs: 25,
      transactions: 20_000,
      postgresCpuMs: 10_000,
      postgresDatabaseCpuMs: 9_000,
    },
    runs: [
      {
        database: 'postgres',
        startupMs: 1_000,
        scenarios: [result('buyAirtime', { database: 'postgres', requestsPerSecond: 400 })],
        checks: [],
      },
      {
        database: 'scaling',
        startupMs: 3_000,
        scenarios: [
          ...ledgerPostings.rounds.map((r) => result(`ledgerPostings K=${r.shards}`)),
          ...scaling.buyAirtimeCluster.map((r) => r.result),
        ],
        checks: [],
      },
    ],
    scaling,
    skipped: [],
    ...overrides,
  };
}

/** The cells of the row whose first cells are `first`, in the scaling section only. */
function scalingRow(report: string, ...first: string[]): string[] {
  const section = report.slice(report.indexOf('## Scaling'), report.indexOf('## Checks'));
  const rows = section
    .split('\n')
    .filter((l) => l.startsWith('| '))
    .map((l) =>
      l
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim()),
    );
  const found = rows.find((cells) => first.every((f, i) => cells[i] === f));
  assert.ok(found, `no row starting ${first.join(' | ')} in:\n${section}`);
  return found;
}

describe('the scaling section of RESULTS.md', () => {
  const report = renderReport(input());

  it('sets the posting microbench at each K against pgbench -N, with what the backends waited on', () => {
    assert.match(report, /`pgbench -N` on the same PostgreSQL: 2000 tps \(50 clients/);
    // K, postings/s, purchases/s, ÷ tps, p50, p99, waits.
    assert.deepEqual(scalingRow(report, '1'), [
      '1',
      '1000',
      '500',
      '0.50',
      '30',
      '90',
      '75% / 15% / 10% (4.0)',
    ]);
    assert.deepEqual(scalingRow(report, '8').slice(0, 4), ['8', '8000', '4000', '4']);
  });

  it('sets buyAirtime through one process beside two APIs and a worker at each K, with each process’s RSS', () => {
    const single = scalingRow(report, '1 (API and workers in one)');
    assert.deepEqual(single.slice(0, 4), ['1 (API and workers in one)', '8 (default)', '400', '0.20']);
    const k1 = scalingRow(report, '2 API + 1 worker', '1');
    assert.deepEqual(k1, [
      '2 API + 1 worker',
      '1',
      '600',
      '0.30', // 600 ÷ 2,000
      '80',
      '200',
      'api-1 210, api-2 220, worker 150',
      '2', // 10,000 ms ÷ 5,000 requests
    ]);
    assert.equal(scalingRow(report, '2 API + 1 worker', '8')[3], '0.40');
    const told = renderReport(input({ scaling: { ...scaling, singleProcessLedgerShards: '4' } }));
    assert.equal(scalingRow(told, '1 (API and workers in one)')[1], '4');
  });

  it('gives the incremental and the full check’s times on the loaded ledger', () => {
    assert.deepEqual(scalingRow(report, '10100000'), [
      '10100000',
      '100000',
      '250000',
      '0.500',
      '40',
      '80',
      '120',
    ]);
  });

  it('holds the new rows against pgbench in the scenarios table', () => {
    assert.equal(anchorOf('ledgerPostings K=8'), 'pgbench');
    assert.equal(anchorOf('buyAirtime ×2 K=1'), 'pgbench');
    assert.equal(anchorOf('savingsMaturity ×2'), 'pgbench');
  });

  it('is left out when no scaling scenario ran, and says so when pgbench did not run', () => {
    assert.doesNotMatch(renderReport(input({ scaling: null })), /## Scaling/);
    // Results written before the scaling scenarios existed have no such field.
    const { scaling: _, ...older } = input();
    assert.doesNotMatch(renderReport(older), /## Scaling/);
    const unanchored = renderReport(input({ pgbench: null }));
    assert.match(unanchored, /`pgbench -N` was not measured in this run: no ratios\./);
    assert.equal(scalingRow(unanchored, '2 API + 1 worker', '1')[3], 'n/a');
  });
});

type Results = ReportInput & {
  scaling: ScalingResults;
  runs: (ReportInput['runs'][number] & { checks: Check[] })[];
};

/** `npm run bench` with only the scaling scenarios, tiny; its exit code and output. */
function runBench(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bench/run.ts'], {
      cwd: repoRoot,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('npm run bench with the scaling scenarios alone, tiny (PostgreSQL)', { skip: !onPostgres() }, () => {
  it('measures each K, each process and both checks, and every check passes', {
    timeout: 600_000,
  }, async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-scaling-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const resultsFile = path.join(dir, 'latest.json');
    const reportFile = path.join(dir, 'RESULTS.md');
    const { code, output } = await runBench({
      BENCH_POSTGRES_URL: process.env.DATABASE_URL as string,
      BENCH_SCENARIOS: 'scaling',
      BENCH_DURATION: '1',
      BENCH_LEDGER_ENTRIES: '2000',
      BENCH_LEDGER_NEW_ENTRIES: '200',
      BENCH_PGBOUNCER: '0',
      BENCH_RESULTS_FILE: resultsFile,
      BENCH_REPORT_FILE: reportFile,
    });
    assert.equal(code, 0, output);
    const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8')) as Results;
    // No service ran on PGlite or PostgreSQL for the other scenarios: only the scaling run.
    assert.deepEqual(
      results.runs.map((r) => r.database),
      ['scaling'],
    );
    const run = results.runs[0]!;
    assert.deepEqual(
      run.scenarios.map((s) => s.scenario),
      ['ledgerPostings K=1', 'ledgerPostings K=8', 'buyAirtime ×2 K=1', 'buyAirtime ×2 K=8'],
    );
    for (const s of run.scenarios) assert.ok(s.requests > 0, `${s.scenario} made no requests`);
    assert.deepEqual(
      run.checks.filter((c) => !c.ok),
      [],
    );
    assert.equal(run.checks.length, 8);

    const { ledgerPostings: postings, buyAirtimeCluster, ledgerCheck: check } = results.scaling;
    assert.deepEqual(
      postings?.rounds.map((r) => r.shards),
      [1, 8],
    );
    assert.deepEqual(
      buyAirtimeCluster.map((r) => [r.shards, r.processes.map((p) => p.name)]),
      [
        [1, ['api-1', 'api-2', 'worker']],
        [8, ['api-1', 'api-2', 'worker']],
      ],
    );
    if (process.platform === 'linux')
      for (const p of buyAirtimeCluster.flatMap((r) => r.processes))
        assert.ok((p.peakRssMb ?? 0) > 0, `${p.name} has no peak RSS`);
    assert.equal(check?.entries, 2_000);
    assert.equal(check?.added, 200);
    assert.match(fs.readFileSync(reportFile, 'utf8'), /## Scaling \(issue 43\), beside pgbench -N/);
  });
});
