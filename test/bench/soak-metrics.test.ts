import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FaultReport } from '../../bench/soak/faults.ts';
import {
  combine,
  type Exposition,
  FAULT_SERIES,
  foldHttpByStatus,
  meanLatencyBetween,
  parseExposition,
  pickRows,
  type Snapshot,
  seriesWorthShowing,
} from '../../bench/soak/metrics.ts';
import { faultFiguresTable, figuresTable, formatValue } from '../../bench/soak/report.ts';

// The soak's report is how an operator sees the money metrics move under each fault; a sum where a
// max belongs would show twice the purchases processing, a lost label would merge two providers'
// errors. Pinned here on expositions as prom-client serves them: the parsing, counters summed over
// processes and database gauges taken once, the rows each fault shows, and the end table's filter.

function exposition(opts: {
  http200: number;
  http503: number;
  processing: number;
  queued: number;
  billsErrors: number;
  billsCalls: number;
  billsSeconds: number;
  ready: number;
  started: number;
}): string {
  return `# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds ${opts.started}
# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.
# TYPE nodejs_heap_size_total_bytes gauge
nodejs_heap_size_total_bytes 12345678
# HELP billrail_http_requests_total HTTP requests by route and status
# TYPE billrail_http_requests_total counter
billrail_http_requests_total{route="/v1/wallet",method="GET",status="200"} ${opts.http200}
billrail_http_requests_total{route="/v1/vtu/airtime",method="POST",status="503"} ${opts.http503}
billrail_http_requests_total{route="/v1/wallet",method="GET",status="503"} 1
# HELP billrail_http_request_duration_seconds HTTP request duration by route
# TYPE billrail_http_request_duration_seconds histogram
billrail_http_request_duration_seconds_bucket{le="0.005",route="/v1/wallet",method="GET"} 3
billrail_http_request_duration_seconds_sum{route="/v1/wallet",method="GET"} 0.5
billrail_http_request_duration_seconds_count{route="/v1/wallet",method="GET"} 3
# HELP billrail_provider_request_duration_seconds Calls to outside parties
# TYPE billrail_provider_request_duration_seconds histogram
billrail_provider_request_duration_seconds_bucket{le="0.05",provider="bills",operation="purchase"} 1
billrail_provider_request_duration_seconds_sum{provider="bills",operation="purchase"} ${opts.billsSeconds}
billrail_provider_request_duration_seconds_count{provider="bills",operation="purchase"} ${opts.billsCalls}
billrail_provider_request_duration_seconds_sum{provider="bills",operation="requery"} 0
billrail_provider_request_duration_seconds_count{provider="bills",operation="requery"} 0
# HELP billrail_provider_request_errors_total Calls without a usable answer
# TYPE billrail_provider_request_errors_total counter
billrail_provider_request_errors_total{provider="bills",operation="purchase"} ${opts.billsErrors}
billrail_provider_request_errors_total{provider="bills",operation="requery"} 2
billrail_provider_request_errors_total{provider="data",operation="data purchase"} 0
# HELP billrail_vtu_purchases_processing Purchases still processing (pending or unknown)
# TYPE billrail_vtu_purchases_processing gauge
billrail_vtu_purchases_processing ${opts.processing}
# HELP billrail_job_queue_jobs Jobs per pg-boss queue and state
# TYPE billrail_job_queue_jobs gauge
billrail_job_queue_jobs{queue="vtu.dispatch",state="queued"} ${opts.queued}
billrail_job_queue_jobs{queue="vtu.requery",state="queued"} 1
billrail_job_queue_jobs{queue="vtu.dispatch",state="failed"} 0
# HELP billrail_payment_inbox_backlog Stored payment webhooks not processed yet
# TYPE billrail_payment_inbox_backlog gauge
billrail_payment_inbox_backlog 0
# HELP billrail_ready 1 when this process reaches its database
# TYPE billrail_ready gauge
billrail_ready ${opts.ready}
`;
}

const base = {
  http200: 10,
  http503: 0,
  processing: 4,
  queued: 3,
  billsErrors: 0,
  billsCalls: 10,
  billsSeconds: 1,
  ready: 1,
  started: 1_790_000_000,
};

function snapshot(label: string, processes: Record<string, Exposition | null>): Snapshot {
  return { label, processes: new Map(Object.entries(processes)) };
}

describe('the soak’s /metrics figures', () => {
  it('parses samples with their labels and types, leaving out buckets, route durations and other runtimes', () => {
    const parsed = parseExposition(exposition(base));
    const names = new Set(parsed.samples.map((s) => s.name));
    assert.ok(names.has('process_start_time_seconds'));
    assert.ok(names.has('billrail_provider_request_duration_seconds_sum'));
    assert.ok(!names.has('nodejs_heap_size_total_bytes'));
    assert.ok(![...names].some((n) => n.endsWith('_bucket')));
    assert.ok(![...names].some((n) => n.startsWith('billrail_http_request_duration_seconds')));
    const errors = parsed.samples.find(
      (s) => s.name === 'billrail_provider_request_errors_total' && s.labels[1]?.[1] === 'requery',
    );
    assert.deepEqual(errors?.labels, [
      ['provider', 'bills'],
      ['operation', 'requery'],
    ]);
    assert.equal(errors?.value, 2);
    assert.equal(parsed.types.get('billrail_job_queue_jobs'), 'gauge');
    assert.equal(parsed.types.get('billrail_http_requests_total'), 'counter');
  });

  it('sums counters over the processes, takes database gauges once, keeps a process’s own gauges apart', () => {
    const figures = combine(
      snapshot('x', {
        'api-1': parseExposition(exposition({ ...base, http200: 10, processing: 4, queued: 3 })),
        'api-2': parseExposition(exposition({ ...base, http200: 7, processing: 4, queued: 5, ready: 0 })),
        'worker-1': null,
      }),
    );
    assert.equal(
      figures.get('billrail_http_requests_total{route="/v1/wallet",method="GET",status="200"}'),
      17,
    );
    assert.equal(
      figures.get('billrail_provider_request_duration_seconds_count{provider="bills",operation="purchase"}'),
      20,
    );
    // The same database read by both: 4 purchases processing, not 8; the larger of two reads.
    assert.equal(figures.get('billrail_vtu_purchases_processing'), 4);
    assert.equal(figures.get('billrail_job_queue_jobs{queue="vtu.dispatch",state="queued"}'), 5);
    assert.equal(figures.get('billrail_ready{process="api-1"}'), 1);
    assert.equal(figures.get('billrail_ready{process="api-2"}'), 0);
    assert.equal(figures.get('billrail_ready'), undefined);
    assert.equal(figures.get('process_start_time_seconds{process="api-2"}'), base.started);
    assert.equal(figures.get('billrail_ready{process="worker-1"}'), undefined);
  });

  it('picks each fault’s rows, summing over the labels it does not show', () => {
    const figures = combine(
      snapshot('x', { 'api-1': parseExposition(exposition({ ...base, billsErrors: 5, http503: 3 })) }),
    );
    const byStatus = pickRows(figures, { name: 'billrail_http_requests_total', by: ['status'] });
    assert.deepEqual(
      [...byStatus],
      [
        ['billrail_http_requests_total{status="200"}', 10],
        ['billrail_http_requests_total{status="503"}', 4],
      ],
    );
    const errors = pickRows(figures, { name: 'billrail_provider_request_errors_total', by: ['provider'] });
    assert.equal(errors.get('billrail_provider_request_errors_total{provider="bills"}'), 7);
    assert.equal(errors.get('billrail_provider_request_errors_total{provider="data"}'), 0);
    const dataOnly = pickRows(figures, {
      name: 'billrail_provider_request_errors_total',
      where: { provider: ['data'] },
      by: ['operation'],
    });
    assert.deepEqual(
      [...dataOnly],
      [['billrail_provider_request_errors_total{operation="data purchase"}', 0]],
    );
    // Queued jobs over every queue: 3 + 1 (gauges taken once per process, then summed over queues).
    const jobs = pickRows(figures, { name: 'billrail_job_queue_jobs', by: ['state'] });
    assert.equal(jobs.get('billrail_job_queue_jobs{state="queued"}'), 4);
    assert.ok(FAULT_SERIES.database.some((s) => s.name === 'billrail_http_requests_total'));
    assert.ok(FAULT_SERIES.providers.some((s) => s.name === 'billrail_provider_request_errors_total'));
    assert.ok(FAULT_SERIES.webhooks.some((s) => s.name === 'billrail_payment_inbox_backlog'));
    assert.ok(FAULT_SERIES.kill.some((s) => s.name === 'process_start_time_seconds'));
  });

  it('gives the mean seconds per provider call of the interval, not of the whole run', () => {
    const earlier = combine(snapshot('a', { 'api-1': parseExposition(exposition(base)) }));
    const later = combine(
      snapshot('b', { 'api-1': parseExposition(exposition({ ...base, billsCalls: 14, billsSeconds: 41 })) }),
    );
    assert.equal(meanLatencyBetween(earlier, later).get('bills'), 10);
    assert.equal(meanLatencyBetween(later, later).get('bills'), null);
  });

  it('shows at the end only the series that moved and the money gauges', () => {
    const before = foldHttpByStatus(combine(snapshot('a', { 'api-1': parseExposition(exposition(base)) })));
    const after = foldHttpByStatus(
      combine(snapshot('b', { 'api-1': parseExposition(exposition({ ...base, http200: 12 })) })),
    );
    const shown = seriesWorthShowing(before, after);
    assert.ok(shown.includes('billrail_http_requests_total{status="200"}'));
    assert.ok(!shown.includes('billrail_http_requests_total{status="503"}'));
    assert.ok(!shown.some((s) => s.startsWith('billrail_job_queue_jobs')));
    assert.ok(!shown.some((s) => s.startsWith('billrail_provider_request_errors_total')));
    assert.ok(shown.includes('billrail_vtu_purchases_processing'));
    assert.ok(shown.includes('billrail_payment_inbox_backlog'));
    assert.equal(before.get('billrail_http_requests_total{status="503"}'), 1);
  });

  it('renders a fault’s table with a column per snapshot and the dead process as no answer', () => {
    const fault: FaultReport = {
      name: 'SIGKILL worker-1',
      atSeconds: 9,
      ok: true,
      observations: [],
      kind: 'kill',
      snapshots: [
        snapshot('before', {
          'api-1': parseExposition(exposition(base)),
          'worker-1': parseExposition(exposition(base)),
        }),
        snapshot('killed', { 'api-1': parseExposition(exposition(base)), 'worker-1': null }),
        snapshot('started again', {
          'api-1': parseExposition(exposition(base)),
          'worker-1': parseExposition(exposition({ ...base, started: base.started + 60 })),
        }),
      ],
    };
    const lines = faultFiguresTable(fault).split('\n');
    assert.equal(lines[0], '| series | before | killed | started again |');
    const started = lines.find((l) => l.includes('process_start_time_seconds{process="worker-1"}'));
    assert.equal(started, '| `process_start_time_seconds{process="worker-1"}` | 14:13:20 | – | 14:14:20 |');
    assert.ok(lines.some((l) => l.includes('worker-1 (did not answer')));
    // The process the fault did not touch is left out of its table.
    assert.ok(!lines.some((l) => l.includes('process="api-1"')));
    const end = figuresTable(fault.snapshots?.[0] ?? null, fault.snapshots?.[2] ?? null);
    assert.match(end, /process_start_time_seconds\{process="worker-1"\}` \| 14:13:20 \| 14:14:20 \|/);
    assert.equal(formatValue('billrail_vtu_purchases_processing', 0.12345), '0.123');
  });

  it('measures a provider’s latency over the interval since the last column that answered', () => {
    const fault: FaultReport = {
      name: 'providers',
      atSeconds: 60,
      ok: true,
      observations: [],
      kind: 'providers',
      snapshots: [
        snapshot('before', { 'api-1': parseExposition(exposition(base)) }),
        snapshot('timing out', { 'api-1': null }),
        snapshot('answering 5xx', {
          'api-1': parseExposition(exposition({ ...base, billsErrors: 6, billsCalls: 16, billsSeconds: 25 })),
        }),
      ],
    };
    const lines = faultFiguresTable(fault).split('\n');
    assert.ok(
      lines.includes('| mean s per bills call since the column before | – | – | 4.000 |'),
      lines.join('\n'),
    );
    assert.ok(lines.includes('| `billrail_provider_request_errors_total{provider="bills"}` | 2 | – | 8 |'));
    assert.ok(!lines.some((l) => l.includes('provider="sms"')));
  });
});
