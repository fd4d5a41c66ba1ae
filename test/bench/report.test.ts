import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { ScenarioResult } from '../../bench/common.ts';
import { anchorOf, figure, type ReportInput, renderReport, writeReport } from '../../bench/report.ts';

// bench/RESULTS.md is what a reader takes from the bench: a wrong ratio or a CPU figure divided by
// the wrong count would mislead every capacity estimate made from it. The report is fed a results
// object of known figures here and its tables are read back cell by cell.

function scenario(overrides: Partial<ScenarioResult> & Pick<ScenarioResult, 'scenario'>): ScenarioResult {
  return {
    database: 'postgres',
    measures: 'POST, 50 conns, 10s',
    requestsPerSecond: 1000,
    latencyP50Ms: 40,
    latencyP99Ms: 120,
    requests: 10_000,
    errors: 0,
    non2xx: 0,
    serverPeakRssMb: 300,
    usage: {
      serverPeakRssMb: 300,
      serverSampledPeakRssMb: 290,
      serviceCpuMs: 5_000,
      postgresCpuMs: 3_000,
      postgresDatabaseCpuMs: 2_000,
    },
    ...overrides,
  };
}

function input(overrides: Partial<ReportInput> = {}): ReportInput {
  return {
    startedAt: '2026-11-26T07:00:00.000Z',
    finishedAt: '2026-11-26T07:20:00.000Z',
    commit: 'abc123',
    uncommittedChanges: false,
    node: 'v24.1.0',
    machine: {
      cpus: 2,
      cpuModel: 'AMD EPYC',
      memoryMb: 7_900,
      loadAverage1mBefore: 0.5,
      loadAverage1mAfter: 1.5,
    },
    selection: {
      scenarios: ['getWallet', 'webhook'],
      allScenarios: ['getWallet', 'webhook'],
      durationSeconds: null,
    },
    fastifyAnchor: scenario({
      database: 'none',
      scenario: 'bare Fastify route',
      measures: 'GET one JSON route, no database, 50 conns, 10s',
      requestsPerSecond: 8_000,
      latencyP50Ms: 5,
      latencyP99Ms: 20,
      requests: 80_000,
      serverPeakRssMb: 80,
      usage: {
        serverPeakRssMb: 80,
        serverSampledPeakRssMb: 78,
        serviceCpuMs: 4_000,
        postgresCpuMs: null,
        postgresDatabaseCpuMs: null,
      },
    }),
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
        database: 'pglite',
        startupMs: 900,
        scenarios: [scenario({ database: 'pglite', scenario: 'getWallet', requestsPerSecond: 2_000 })],
        checks: [],
      },
      {
        database: 'postgres',
        startupMs: 1_100,
        scenarios: [
          scenario({ scenario: 'getWallet', requestsPerSecond: 4_000 }),
          scenario({ scenario: 'webhook', requestsPerSecond: 1_400, non2xx: 3, errors: 2 }),
        ],
        checks: [{ name: 'adminLedgerCheck', ok: true, detail: 'ok true, 10 accounts' }],
      },
    ],
    skipped: [],
    ...overrides,
  };
}

/** The cells of the table row whose first cells are `first`, from the rendered report. */
function row(report: string, ...first: string[]): string[] {
  const rows = report
    .split('\n')
    .filter((l) => l.startsWith('| '))
    .map((l) =>
      l
        .slice(2, -2)
        .split(' | ')
        .map((c) => c.trim()),
    );
  const found = rows.find((cells) => first.every((f, i) => cells[i] === f));
  assert.ok(found, `no row starting ${first.join(' | ')} in:\n${report}`);
  return found;
}

/** The cell under `column` of that row. */
function cell(report: string, column: string, ...first: string[]): string {
  const headerLine = report.split('\n').find((l) => l.startsWith('| database |'));
  assert.ok(headerLine !== undefined, 'no scenarios table');
  const header = headerLine
    .slice(2, -2)
    .split(' | ')
    .map((c) => c.trim());
  const index = header.indexOf(column);
  assert.notEqual(index, -1, `no column ${column} in ${header.join(', ')}`);
  return row(report, ...first)[index] as string;
}

describe('renderReport', () => {
  const report = renderReport(input());

  it('holds each HTTP-bound scenario against the Fastify anchor and each database-bound one against pgbench', () => {
    assert.equal(cell(report, 'anchor', 'postgres', 'getWallet'), 'Fastify');
    assert.equal(cell(report, '÷ anchor', 'postgres', 'getWallet'), '0.50'); // 4,000 ÷ 8,000
    assert.equal(cell(report, 'anchor', 'postgres', 'webhook'), 'pgbench -N');
    assert.equal(cell(report, '÷ anchor', 'postgres', 'webhook'), '0.70'); // 1,400 ÷ 2,000
    assert.equal(cell(report, '÷ anchor', 'pglite', 'getWallet'), '0.25'); // 2,000 ÷ 8,000
  });

  it('divides the service and PostgreSQL CPU by the scenario’s requests', () => {
    assert.equal(cell(report, 'service CPU ms/req', 'postgres', 'webhook'), '0.500'); // 5,000 ms ÷ 10,000
    assert.equal(cell(report, 'PostgreSQL CPU ms/req (own db)', 'postgres', 'webhook'), '0.300 (db 0.200)');
  });

  it('says what the pgbouncer row is only when the run has one, its PostgreSQL CPU counted as direct', () => {
    assert.doesNotMatch(report, /PgBouncer/);
    const pooled = renderReport(
      input({
        runs: [
          ...input().runs,
          {
            database: 'pgbouncer',
            startupMs: 1_000,
            scenarios: [
              scenario({ database: 'pgbouncer', scenario: 'buyAirtime', requestsPerSecond: 1_000 }),
            ],
            checks: [],
          },
        ],
      }),
    );
    assert.match(
      pooled,
      /^- pgbouncer: buyAirtime alone, .*PgBouncer 1\.18 in transaction pooling.*DATABASE_PREPARED_STATEMENTS=0/m,
    );
    assert.equal(cell(pooled, 'anchor', 'pgbouncer', 'buyAirtime'), 'pgbench -N');
    assert.equal(cell(pooled, '÷ anchor', 'pgbouncer', 'buyAirtime'), '0.50'); // 1,000 ÷ 2,000
    assert.equal(
      cell(pooled, 'PostgreSQL CPU ms/req (own db)', 'pgbouncer', 'buyAirtime'),
      '0.300 (db 0.200)',
    );
  });

  it('says that on PGlite the database’s CPU is inside the service', () => {
    assert.equal(cell(report, 'PostgreSQL CPU ms/req (own db)', 'pglite', 'getWallet'), 'in service');
  });

  it('gives peak and sampled RSS, the rates, latencies and failures', () => {
    assert.equal(cell(report, 'peak RSS MB', 'postgres', 'webhook'), '300');
    assert.equal(cell(report, 'sampled RSS MB', 'postgres', 'webhook'), '290');
    assert.equal(cell(report, 'req/s', 'postgres', 'webhook'), '1400');
    assert.equal(cell(report, 'p50 ms', 'postgres', 'webhook'), '40');
    assert.equal(cell(report, 'p99 ms', 'postgres', 'webhook'), '120');
    assert.equal(cell(report, 'non-2xx + errors', 'postgres', 'webhook'), '5');
  });

  it('lists both anchors with their own costs', () => {
    const fastify = report.split('\n').find((l) => l.startsWith('| bare Fastify route'));
    assert.ok(fastify?.includes('| 8000 req/s |'), fastify);
    assert.ok(fastify?.includes('| 0.0500 |'), fastify); // 4,000 ms ÷ 80,000 requests
    const pgbench = report.split('\n').find((l) => l.startsWith('| pgbench -N'));
    assert.ok(pgbench?.includes('| 2000 tps |'), pgbench);
    assert.ok(pgbench?.includes('| 0.500 (db 0.450) |'), pgbench); // 10,000 and 9,000 ms ÷ 20,000 tx
  });

  it('names the machine, Node, the commit and the date, and the checks', () => {
    assert.match(report, /- Machine: 2 cores, AMD EPYC, 7900 MiB/);
    assert.match(report, /- Node: v24\.1\.0/);
    assert.match(report, /- Commit: abc123\n/);
    assert.match(
      renderReport(input({ uncommittedChanges: true })),
      /- Commit: abc123 with uncommitted changes\n/,
    );
    assert.match(report, /- Date: 2026-11-26T07:00:00\.000Z to 2026-11-26T07:20:00\.000Z/);
    assert.match(report, /- postgres: ok: adminLedgerCheck: ok true, 10 accounts/);
    assert.doesNotMatch(report, /Partial run/);
    assert.doesNotMatch(report, /The machine was busy/);
  });

  it('warns when the load average exceeded the cores, since every figure is then depressed', () => {
    const busy = renderReport(
      input({
        machine: {
          cpus: 2,
          cpuModel: 'AMD EPYC',
          memoryMb: 7_900,
          loadAverage1mBefore: 1.5,
          loadAverage1mAfter: 15.25,
        },
      }),
    );
    assert.match(busy, /\*\*The machine was busy:\*\* load average \(1 min\) up to 15\.3 on 2 cores/);
  });

  it('says when the run was partial: scenarios left out, a shortened duration, a skipped database', () => {
    const partial = renderReport(
      input({
        selection: { scenarios: ['webhook'], allScenarios: ['getWallet', 'webhook'], durationSeconds: 3 },
        skipped: ['postgres: BENCH_POSTGRES=0'],
      }),
    );
    assert.match(partial, /\*\*Partial run\.\*\* Scenarios asked for: webhook\. Not run: getWallet\./);
    assert.match(partial, /BENCH_DURATION=3 s/);
    assert.match(partial, /Skipped: postgres: BENCH_POSTGRES=0\./);
  });

  it('answers n/a where an anchor or a measure is missing, rather than a wrong figure', () => {
    const { usage: _, ...unmeasured } = scenario({ scenario: 'getWallet' });
    const bare = renderReport(
      input({
        fastifyAnchor: null,
        pgbench: null,
        runs: [
          {
            database: 'postgres',
            startupMs: 1_000,
            scenarios: [unmeasured],
            checks: [],
          },
        ],
      }),
    );
    assert.equal(cell(bare, '÷ anchor', 'postgres', 'getWallet'), 'n/a');
    assert.equal(cell(bare, 'service CPU ms/req', 'postgres', 'getWallet'), 'n/a');
    assert.equal(cell(bare, 'PostgreSQL CPU ms/req (own db)', 'postgres', 'getWallet'), 'n/a');
    assert.match(bare, /No anchor was measured in this run\./);
  });
});

describe('anchorOf and figure', () => {
  it('treats a round with several runners as its scenario, and the broadcast as anchorless', () => {
    assert.equal(anchorOf('savingsMaturity ×2'), 'pgbench');
    assert.equal(anchorOf('listNotifications'), 'fastify');
    assert.equal(anchorOf('broadcastPush'), 'none');
  });

  it('keeps three significant figures', () => {
    assert.equal(figure(1234.5), '1235');
    assert.equal(figure(0.012345), '0.0123');
    assert.equal(figure(12.5), '12.5');
    assert.equal(figure(40), '40');
    assert.equal(figure(null), 'n/a');
  });
});

describe('writeReport', () => {
  it('writes the rendered report to the file', (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-report-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, 'RESULTS.md');
    writeReport(file, input());
    assert.equal(fs.readFileSync(file, 'utf8'), renderReport(input()));
    assert.deepEqual(fs.readdirSync(dir), ['RESULTS.md']);
  });
});
