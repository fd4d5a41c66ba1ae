import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { figuresRefreshJob } from '../../src/figures/module.ts';
import { paymentWebhookPath } from '../../src/http/payment-webhook-route.ts';
import { dailyReconciliationJob } from '../../src/reconciliation/module.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { metricNames, type Sample, scrape } from '../http/metrics-support.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The alert rules, the scrape configuration and the Grafana dashboard (ops/) against the service
// they watch: promtool checks the rules and proves each alert fires (ops/prometheus/alerts.test.yml),
// and every metric a rule or a panel names is one a live /metrics serves, so that a renamed metric
// cannot leave an alert that never fires. promtool is Debian's `prometheus` package (.ci/run
// installs it); without it those two checks are skipped, saying so, and the names are still checked.

const run = promisify(execFile);
const opsDir = path.resolve(import.meta.dirname, '..', '..', 'ops');
const prometheusDir = path.join(opsDir, 'prometheus');

/** Prometheus's own series, which no service serves. */
const prometheusOwn = new Set(['up']);

/** The metric names a PromQL expression reads: identifiers outside label matchers, strings and functions. */
function metricsIn(expr: string): string[] {
  const withoutMatchers = expr.replace(/\{[^}]*\}/g, ' ').replace(/"[^"]*"/g, ' ');
  const names = withoutMatchers.match(/\b(billrail_[a-z0-9_]+|process_[a-z0-9_]+|up)\b/g) ?? [];
  return [...new Set(names)];
}

type Matcher = { label: string; op: string; value: string };

/** The selectors of billrail's own metrics in a PromQL expression: `name{label="value", ...}`. */
function selectorsIn(expr: string): Array<{ name: string; matchers: Matcher[] }> {
  return [...expr.matchAll(/\b(billrail_[a-z0-9_]+)\{([^}]*)\}/g)].map((m) => ({
    name: m[1]!,
    matchers: [...m[2]!.matchAll(/(\w+)\s*(=~|!~|!=|=)\s*"([^"]*)"/g)].map((pair) => ({
      label: pair[1]!,
      op: pair[2]!,
      value: pair[3]!,
    })),
  }));
}

function matches(sample: Sample, { label, op, value }: Matcher): boolean {
  const actual = sample.labels[label] ?? '';
  const full = new RegExp(`^(?:${value})$`);
  if (op === '=') return actual === value;
  if (op === '!=') return actual !== value;
  if (op === '=~') return full.test(actual);
  return !full.test(actual);
}

async function promtool(): Promise<string | undefined> {
  try {
    await run('promtool', ['--version']);
    return 'promtool';
  } catch {
    return undefined;
  }
}

describe('ops/: Prometheus rules and the Grafana dashboard', () => {
  let world: World;
  let samples: Sample[];
  let served: Set<string>;
  before(async () => {
    world = await createWorld();
    // A purchase that succeeds and one that fails (the sandbox's last digit 1), so that the purchase
    // counters and the provider-call figures have their series with each outcome the alerts read.
    const user = await buyer(world, 1_000);
    await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
    await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 100 });
    // A payment webhook without a signature: refused, as every delivery is after a wrong key rotation.
    const refused = await fetch(`${world.baseUrl}${paymentWebhookPath}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"event":"charge.success","data":{}}',
    });
    assert.equal(refused.status, 401);
    // The morning's reconciliation, run once: its counts per source and bucket are served from then on.
    await world.ctx.jobs.runNow(dailyReconciliationJob);
    assert.equal((await runQueuedJobs(world, reconciliationRunJob)).failed.length, 0);
    // The money's gauges are a snapshot the refresh job takes every 30 s: taken once, as Prometheus
    // would find it.
    await world.ctx.jobs.runNow(figuresRefreshJob);
    samples = await scrape(world);
    served = metricNames(samples);
  });
  after(async () => {
    await world.close();
  });

  it('promtool checks the rules and the scrape configuration', async (t) => {
    const tool = await promtool();
    if (tool === undefined) {
      t.skip('promtool is not installed (apt-get install -y prometheus): the rules are not checked here');
      return;
    }
    const rules = await run(tool, ['check', 'rules', 'alerts.yml'], { cwd: prometheusDir });
    assert.match(rules.stdout, /SUCCESS: \d+ rules found/);
    // --syntax-only: the METRICS_TOKEN file the scrapes read (credentials_file) exists only where
    // Prometheus runs; promtool would otherwise refuse the configuration for its absence here.
    const config = await run(tool, ['check', 'config', '--syntax-only', 'prometheus.yml'], {
      cwd: prometheusDir,
    });
    assert.match(config.stdout, /SUCCESS/);
  });

  it('promtool test rules: every alert fires on the series that should fire it', async (t) => {
    const tool = await promtool();
    if (tool === undefined) {
      t.skip('promtool is not installed (apt-get install -y prometheus): the alerts are not proven here');
      return;
    }
    const tested = await run(tool, ['test', 'rules', 'alerts.test.yml'], { cwd: prometheusDir });
    assert.match(tested.stdout, /SUCCESS/);
  });

  it('every alert has a test and a runbook entry, and every metric it reads is served', async () => {
    const rules = await readFile(path.join(prometheusDir, 'alerts.yml'), 'utf8');
    const tests = await readFile(path.join(prometheusDir, 'alerts.test.yml'), 'utf8');
    const runbook = await readFile(path.join(opsDir, '..', 'docs', 'operations.md'), 'utf8');
    const alerts = [...rules.matchAll(/- alert: (\S+)/g)].map((m) => m[1]!);
    assert.ok(alerts.length >= 20, `the alerts are read (${alerts.length})`);
    for (const alert of alerts) {
      assert.ok(tests.includes(`alertname: ${alert}\n`), `${alert} is tested in alerts.test.yml`);
      assert.ok(runbook.includes(alert), `${alert} is in docs/operations.md`);
    }
    for (const anchor of rules.matchAll(/runbook: docs\/operations\.md#(\S+)/g)) {
      const heading = new RegExp(`^#+ .*\\{#${anchor[1]}\\}|^<a id="${anchor[1]}"></a>`, 'm');
      assert.match(runbook, heading, `docs/operations.md has the anchor ${anchor[1]}`);
    }
    const exprs = [...rules.matchAll(/expr: (>\n(?:\s{10}.*\n)+|.*\n)/g)].map((m) => m[1]!);
    assert.equal(exprs.length, alerts.length, 'one expression per alert');
    for (const expr of exprs) {
      for (const name of metricsIn(expr)) {
        if (prometheusOwn.has(name)) continue;
        assert.ok(served.has(name), `${name} (in ${expr.trim()}) is served by /metrics`);
      }
    }
  });

  it('every label a rule selects on is one the service serves, with the values it serves', () => {
    // A selector on a misspelt label, or on a value the service never gives (a route renamed, an
    // outcome called 'error'), selects nothing: its alert would never fire, and promtool's tests,
    // which make up their own series, cannot tell. The HTTP status is left out of the values: any
    // status is one the service may answer, and the test provokes only some.
    const rules = readFileSync(path.join(prometheusDir, 'alerts.yml'), 'utf8');
    const selectors = [...rules.matchAll(/expr: (>\n(?:\s{10}.*\n)+|.*\n)/g)].flatMap((m) =>
      selectorsIn(m[1]!),
    );
    assert.ok(selectors.length >= 5, `the selectors are read (${selectors.length})`);
    for (const { name, matchers } of selectors) {
      const family = samples.filter((sample) => sample.name.replace(/_(bucket|sum|count)$/, '') === name);
      for (const matcher of matchers) {
        assert.ok(
          family.some((sample) => matcher.label in sample.labels),
          `${name} has a label ${matcher.label}`,
        );
      }
      const checked = matchers.filter((matcher) => matcher.label !== 'status');
      assert.ok(
        family.some((sample) => checked.every((matcher) => matches(sample, matcher))),
        `${name}{${checked.map((m) => `${m.label}${m.op}"${m.value}"`).join(',')}} selects a served series`,
      );
    }
  });

  it('the Grafana dashboard is a dashboard whose every query reads served metrics', async () => {
    const dashboard = JSON.parse(await readFile(path.join(opsDir, 'grafana', 'billrail.json'), 'utf8')) as {
      title: string;
      uid: string;
      panels: Array<{ id: number; title: string; targets: Array<{ expr: string; refId: string }> }>;
    };
    assert.ok(dashboard.title.length > 0 && dashboard.uid.length > 0);
    assert.ok(dashboard.panels.length >= 10, 'the panels are read');
    assert.equal(
      new Set(dashboard.panels.map((p) => p.id)).size,
      dashboard.panels.length,
      'panel ids are unique',
    );
    for (const panel of dashboard.panels) {
      assert.ok(panel.targets.length > 0, `${panel.title} has a query`);
      for (const target of panel.targets) {
        const names = metricsIn(target.expr);
        assert.ok(names.length > 0, `${panel.title}: ${target.expr} reads a metric`);
        for (const name of names) {
          if (prometheusOwn.has(name)) continue;
          assert.ok(served.has(name), `${name} (panel ${panel.title}) is served by /metrics`);
        }
      }
    }
  });
});
