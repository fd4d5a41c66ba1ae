import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ledgerCheckJob } from '../../src/admin/module.ts';
import { buildMetricsApp } from '../../src/app.ts';
import { figuresRefreshJob } from '../../src/figures/module.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { newId } from '../../src/ids.ts';
import { dailyReconciliationJob } from '../../src/reconciliation/module.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import { reconciliationSources } from '../../src/reconciliation/schemas.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import { createWorld, get, ok, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { advanceClock, bought, buyer, current, mtn } from '../vtu/purchase-support.ts';
import { countOf, type Sample, sampleValue, scrape } from './metrics-support.ts';

// What operators watch (docs/operations.md) moves with the money: purchases by their sandbox outcome
// (API.md section 8: last digit 1 fails, 2 is pending, others succeed), a provider's float set under
// its floor, a webhook left unprocessed, a purchase processing past the stuck window, the ledger
// check's run. Each figure is read from a live GET /metrics, as Prometheus reads it, after the job
// that refreshes the money's figures every 30 s has run (`refreshed`): a scrape alone reads the
// figures' snapshot and never calls a provider.

describe('GET /metrics: the money', () => {
  let world: World;
  const adminPhone = uniquePhone();
  /** A scrape after the figures' refresh job, as Prometheus sees it within 30 s of a change. */
  const refreshed = async (w: World): Promise<Sample[]> => {
    await w.ctx.jobs.runNow(figuresRefreshJob);
    return scrape(w);
  };
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(async () => {
    await world.close();
  });

  const purchases = (samples: Sample[], outcome: string) =>
    countOf(samples, 'billrail_vtu_purchases_total', { service: 'airtime', provider: 'bills', outcome });

  it('counts purchases by service, provider and outcome, and times the calls to the provider', async () => {
    const user = await buyer(world, 5_000);
    const before = await scrape(world);
    const calls = (samples: Sample[]) =>
      countOf(samples, 'billrail_provider_request_duration_seconds_count', {
        provider: 'bills',
        operation: 'purchase',
      });

    await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
    const failed = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('1'), amount: 100 });
    const pending = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('2'), amount: 100 });
    assert.equal(failed.status, 'failed');
    assert.equal(pending.status, 'processing');

    const bought3 = await scrape(world);
    assert.equal(purchases(bought3, 'accepted') - purchases(before, 'accepted'), 3);
    assert.equal(purchases(bought3, 'success') - purchases(before, 'success'), 1);
    assert.equal(purchases(bought3, 'failed') - purchases(before, 'failed'), 1);
    assert.equal(calls(bought3) - calls(before), 3, 'each purchase is one call to the provider, timed');
    assert.equal(
      sampleValue(bought3, 'billrail_provider_request_errors_total', {
        provider: 'bills',
        operation: 'purchase',
      }),
      0,
      'the sandbox answered every call: the error series is there, at zero',
    );
    assert.ok(
      countOf(await refreshed(world), 'billrail_vtu_purchases_processing') >= 1,
      'the pending one is processing',
    );

    // The requery on the sandbox clock finds the pending one delivered.
    await advanceClock(world, 61);
    assert.equal((await current(world, user, pending.id)).status, 'success');
    const requeried = await scrape(world);
    assert.equal(purchases(requeried, 'success') - purchases(before, 'success'), 2);
    assert.equal(
      purchases(requeried, 'accepted') - purchases(before, 'accepted'),
      3,
      'a requery accepts nothing',
    );
    assert.ok(
      countOf(requeried, 'billrail_provider_request_duration_seconds_count', {
        provider: 'bills',
        operation: 'requery',
      }) >= 1,
      'the requery call is timed under its own operation',
    );
  });

  it("shows a provider's float below its floor", async () => {
    const setBalance = async (provider: string, amount: number) => {
      const response = await fetch(`${world.baseUrl}/__sandbox/providers/${provider}/balance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount }),
      });
      assert.equal(response.status, 200, await response.text());
    };
    await setBalance('data', 1_234);
    const samples = await refreshed(world);
    const floor = sampleValue(samples, 'billrail_provider_float_floor_kobo', { provider: 'data' });
    assert.equal(floor, Number(world.ctx.config.vtu.floatFloorKobo));
    assert.equal(sampleValue(samples, 'billrail_provider_float_balance_kobo', { provider: 'data' }), 123_400);
    assert.ok(123_400 < floor!, 'the balance is under the floor, as the alert compares them');
    for (const provider of ['bills', 'social']) {
      const balance = sampleValue(samples, 'billrail_provider_float_balance_kobo', { provider });
      assert.ok(balance !== undefined && balance >= floor!, `${provider} is above its floor`);
    }
    await setBalance('data', 1_000_000);
    const restored = await refreshed(world);
    assert.equal(
      sampleValue(restored, 'billrail_provider_float_balance_kobo', { provider: 'data' }),
      100_000_000,
    );
  });

  it("shows the webhook inbox's backlog and the age of its oldest event, then empties", async () => {
    const empty = await refreshed(world);
    assert.equal(sampleValue(empty, 'billrail_payment_inbox_backlog'), 0);
    assert.equal(sampleValue(empty, 'billrail_payment_inbox_oldest_age_seconds'), 0);
    // An event stored and not processed, as a process that crashed between its commit and its drain
    // leaves it: an event the service does not act on, so that the sweep closes it without money.
    const body = JSON.stringify({ event: 'customeridentification.success', data: { id: newId() } });
    await world.ctx.db
      .insertInto('payment_events')
      .values({
        id: newId(),
        received_at: world.ctx.clock.now(),
        body,
        body_encoding: 'utf8',
        body_sha256: newId(),
        event: 'customeridentification.success',
        reference: null,
      })
      .execute();
    // Two minutes pass without the sweep (the clock moves, no job runs).
    world.ctx.sandboxClock!.advance(120);
    const waiting = await refreshed(world);
    assert.equal(sampleValue(waiting, 'billrail_payment_inbox_backlog'), 1);
    const age = sampleValue(waiting, 'billrail_payment_inbox_oldest_age_seconds');
    assert.ok(age !== undefined && age >= 120 && age < 180, `the oldest waited two minutes (${age} s)`);

    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
    const swept = await refreshed(world);
    assert.equal(sampleValue(swept, 'billrail_payment_inbox_backlog'), 0);
    assert.equal(sampleValue(swept, 'billrail_payment_inbox_oldest_age_seconds'), 0);
  });

  it('shows a purchase processing past the stuck window after the clock moves, until it settles', async () => {
    const user = await buyer(world, 1_000);
    const pending = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('2'), amount: 100 });
    assert.equal(pending.status, 'processing');
    const fresh = await refreshed(world);
    assert.equal(
      sampleValue(fresh, 'billrail_vtu_purchases_stuck'),
      0,
      'a purchase just accepted is not stuck',
    );
    assert.equal(sampleValue(fresh, 'billrail_vtu_purchases_processing'), 1);

    // 31 minutes pass without the requery (the clock moves, no job runs).
    world.ctx.sandboxClock!.advance(31 * 60);
    const later = await refreshed(world);
    assert.equal(sampleValue(later, 'billrail_vtu_purchases_stuck'), 1);
    assert.equal(sampleValue(later, 'billrail_vtu_purchases_processing'), 1);

    await advanceClock(world, 1);
    // Read from the record: the buyer's access token expired in those 31 minutes.
    const record = await world.ctx.db
      .selectFrom('vtu_transactions')
      .select('status')
      .where('id', '=', pending.id)
      .executeTakeFirstOrThrow();
    assert.equal(record.status, 'success');
    const settled = await refreshed(world);
    assert.equal(sampleValue(settled, 'billrail_vtu_purchases_stuck'), 0);
    assert.equal(sampleValue(settled, 'billrail_vtu_purchases_processing'), 0);
  });

  it("shows the ledger check's result and when it ran, once it has run as a job", async () => {
    const never = await refreshed(world);
    // Never run reads as long ago (the not-running alert fires), and not as an imbalance.
    assert.equal(sampleValue(never, 'billrail_ledger_check_last_run_timestamp_seconds'), 0);
    assert.equal(sampleValue(never, 'billrail_ledger_check_imbalances'), 0);
    const started = world.ctx.clock.now().getTime() / 1000;
    await world.ctx.jobs.runNow(ledgerCheckJob);
    const ended = world.ctx.clock.now().getTime() / 1000;
    const checked = await refreshed(world);
    assert.equal(sampleValue(checked, 'billrail_ledger_check_ok'), 1);
    assert.equal(sampleValue(checked, 'billrail_ledger_check_imbalances'), 0);
    const ranAt = sampleValue(checked, 'billrail_ledger_check_last_run_timestamp_seconds');
    assert.ok(
      ranAt !== undefined && ranAt >= started && ranAt <= ended,
      `the run is recorded at the service clock, when it ran (${ranAt} in ${started}..${ended})`,
    );
  });

  it('shows every job queue by state, and that the database answers', async () => {
    const samples = await refreshed(world);
    for (const state of ['queued', 'deferred', 'active', 'failed']) {
      const value = sampleValue(samples, 'billrail_job_queue_jobs', { queue: 'vtu.requery', state });
      assert.ok(value !== undefined && value >= 0, `vtu.requery ${state}`);
    }
    assert.ok(
      samples.some((s) => s.name === 'billrail_job_queue_jobs' && s.labels.queue === ledgerCheckJob.name),
      'the ledger check has its queue',
    );
    assert.equal(sampleValue(samples, 'billrail_ready'), 1);
  });

  it('calls no provider at a scrape: the refresh job asks each for its balance, once', async () => {
    /** Balance calls made by this process, by provider (every call to a party is timed). */
    const balanceCalls = (samples: Sample[]) =>
      Object.fromEntries(
        samples
          .filter(
            (s) =>
              s.name === 'billrail_provider_request_duration_seconds_count' &&
              s.labels.operation === 'balance',
          )
          .map((s) => [s.labels.provider, s.value]),
      );
    await world.ctx.jobs.runNow(figuresRefreshJob);
    const before = balanceCalls(await scrape(world));
    assert.deepEqual(Object.keys(before).sort(), ['bills', 'data', 'social']);
    for (let i = 0; i < 20; i++) await scrape(world);
    const scraped = balanceCalls(await scrape(world));
    assert.deepEqual(scraped, before, '21 scrapes, no balance call');
    await world.ctx.jobs.runNow(figuresRefreshJob);
    const after = balanceCalls(await scrape(world));
    for (const provider of Object.keys(before))
      assert.equal(after[provider], before[provider]! + 1, `one refresh, one balance call to ${provider}`);
    // Each refresh run here sent the half-minute's next; the queue (policy short) keeps one waiting.
    const { rows } = await sql<{ waiting: number }>`
      select count(*)::int as waiting from pgboss.job
      where name = ${figuresRefreshJob.name} and state = 'created'`.execute(world.ctx.db);
    assert.equal(rows[0]?.waiting, 1, 'one refresh waits, however many ran');
  });

  it("shows each source's latest reconciliation run by bucket once the morning's job has run", async () => {
    const never = await refreshed(world);
    for (const source of reconciliationSources) {
      assert.equal(
        sampleValue(never, 'billrail_reconciliation_last_run_timestamp_seconds', { source }),
        0,
        `${source} never ran: its last run reads as long ago`,
      );
    }
    assert.ok(!never.some((s) => s.name === 'billrail_reconciliation_items'), 'no counts before a run');

    // The morning's job starts yesterday's run of every source; a worker then runs each.
    await world.ctx.jobs.runNow(dailyReconciliationJob);
    const { done, failed } = await runQueuedJobs(world, reconciliationRunJob);
    assert.equal(failed.length, 0);
    assert.equal(done.length, reconciliationSources.length);
    const ran = await refreshed(world);
    // Signed in here: the clock moved past an earlier session's expiry in the tests above.
    const admin = await signIn(world, adminPhone);
    const runs = ok(
      await get<{ items: Array<{ source: string; counts: Record<string, number>; finishedAt: string }> }>(
        world,
        'adminListReconciliations',
        {},
        { token: admin.accessToken },
      ),
    ).items;
    assert.equal(runs.length, reconciliationSources.length);
    for (const run of runs) {
      for (const [bucket, count] of Object.entries(run.counts)) {
        assert.equal(
          sampleValue(ran, 'billrail_reconciliation_items', { source: run.source, bucket }),
          count,
          `${run.source} ${bucket}`,
        );
      }
      assert.equal(
        sampleValue(ran, 'billrail_reconciliation_last_run_timestamp_seconds', { source: run.source }),
        Date.parse(run.finishedAt) / 1000,
      );
    }
  });

  it('reads a snapshot stored before the reconciliation was in it (a rolling deploy)', async () => {
    await sql`update operator_figures set figures = figures - 'reconciliation'`.execute(world.ctx.db);
    const samples = await scrape(world);
    assert.equal(sampleValue(samples, 'billrail_ready'), 1, 'the snapshot is read');
    assert.equal(sampleValue(samples, 'billrail_ledger_check_ok'), 1, 'with every figure it has');
    assert.equal(
      sampleValue(samples, 'billrail_reconciliation_last_run_timestamp_seconds', { source: 'payments' }),
      undefined,
      'not read: left out, not 0',
    );
  });

  it('replaces a snapshot stamped ahead of the clock (a sandbox clock moved on, then restarted)', async () => {
    const ahead = new Date(world.ctx.clock.now().getTime() + 30 * 86_400_000);
    await world.ctx.db.updateTable('operator_figures').set({ refreshed_at: ahead }).execute();
    await world.ctx.jobs.runNow(figuresRefreshJob);
    const { refreshed_at } = await world.ctx.db
      .selectFrom('operator_figures')
      .select('refreshed_at')
      .executeTakeFirstOrThrow();
    assert.ok(refreshed_at.getTime() <= world.ctx.clock.now().getTime(), 'the refresh replaced it');
  });

  it("a worker-only process's own server (METRICS_PORT) serves the same registry and readiness", async () => {
    const metricsApp = await buildMetricsApp(world.ctx);
    try {
      const address = await metricsApp.listen({ port: 0, host: '127.0.0.1' });
      const samples = await scrape({ baseUrl: address });
      assert.equal(sampleValue(samples, 'billrail_ready'), 1);
      assert.ok(
        countOf(samples, 'billrail_vtu_purchases_total', {
          outcome: 'accepted',
          provider: 'bills',
          service: 'airtime',
        }) >= 4,
      );
      assert.equal((await fetch(`${address}/readyz`)).status, 200);
    } finally {
      await metricsApp.close();
    }
  });
});
