import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { figuresRefreshJob } from '../../src/figures/module.ts';
import { lagosDate, nextLagosMidnight } from '../../src/lagos-time.ts';
import { dailyReconciliationJob } from '../../src/reconciliation/module.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import {
  type Bucket,
  type ReconciliationItemView,
  type ReconciliationRunView,
  reconciliationSources,
} from '../../src/reconciliation/schemas.ts';
import {
  assertLedgerOk,
  BOUNDED,
  createIntent,
  intentRow,
  payWithoutWebhook,
  verify,
  walletKobo,
} from '../funding/support.ts';
import { onPostgres } from '../helpers/database.ts';
import { runQueuedJobs } from '../helpers/domain-events.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { sampleValue, scrape } from '../http/metrics-support.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The morning's reconciliation (API.md 17.5): every morning a worker runs yesterday's (Lagos)
// reconciliation of every source, once per source and day, and raises an operations alert when any
// bucket but matched is not empty; /metrics then shows the run's counts. The workers are not started:
// the test runs the daily job as its cron would at 06:00 Lagos, and each run's job as a worker would.
// The clock is moved without running the clock's jobs, so that funding's own reconciliation (which
// asks the provider about every pending top-up) does not credit the payment the morning should find.

type Run = ReconciliationRunView;
type Alert = { kind: string; message: string; details: Record<string, unknown> };

const unmatched: Bucket[] = ['missingHere', 'missingThere', 'amountMismatch', 'statusMismatch'];

describe(`the morning's reconciliation (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  /**
   * Moves the clock to 06:05 Lagos of the next day, running no job, and answers the Lagos day just
   * ended (the morning's "yesterday") with when it began.
   */
  function toNextMorning(): { day: string; from: string } {
    const now = world.ctx.clock.now();
    const day = lagosDate(now);
    const midnight = nextLagosMidnight(now);
    const from = new Date(midnight.getTime() - 86_400_000).toISOString();
    const morning = midnight.getTime() + (6 * 60 + 5) * 60_000;
    world.ctx.sandboxClock!.advance(Math.ceil((morning - now.getTime()) / 1000));
    return { day, from };
  }

  /** The daily job, as its cron runs it, then every run's job it enqueued; answers the runs started. */
  async function morning(): Promise<number> {
    await world.ctx.jobs.runNow(dailyReconciliationJob);
    const { done, failed } = await runQueuedJobs(world, reconciliationRunJob);
    assert.deepEqual(failed, []);
    return done.length;
  }

  async function runsOf(admin: SignedIn, from: string): Promise<Run[]> {
    const { items } = ok(
      await get<{ items: Run[] }>(
        world,
        'adminListReconciliations',
        { limit: 100 },
        { token: admin.accessToken },
      ),
    );
    return items.filter((run) => run.from === from);
  }

  async function mismatchAlerts(admin: SignedIn): Promise<Alert[]> {
    const { items } = ok(
      await get<{ items: Alert[] }>(world, 'adminListAlerts', { limit: 100 }, { token: admin.accessToken }),
    );
    return items.filter((alert) => alert.kind === 'reconciliation_mismatch');
  }

  it('a day where every record agrees: four runs, everything matched, no alert', BOUNDED, async () => {
    // A top-up whose webhook was lost, credited when the person came back to verify it, and an
    // airtime purchase the provider delivered.
    const user = await signIn(world);
    const intent = await createIntent(world, user, 500);
    await payWithoutWebhook(world, intent);
    assert.equal(ok(await verify(world, user, intent.reference)).credited, true);
    const purchaser = await buyer(world, 1_000);
    const purchase = await bought(world, purchaser, 'buyAirtime', {
      network: 'mtn',
      phone: mtn('5'),
      amount: 100,
    });
    assert.equal(purchase.status, 'success');

    const { from } = toNextMorning();
    assert.equal(await morning(), reconciliationSources.length, 'one run per source');
    const admin = await signIn(world, adminPhone);
    const runs = await runsOf(admin, from);
    assert.deepEqual(runs.map((run) => run.source).sort(), [...reconciliationSources].sort());
    for (const run of runs) {
      assert.equal(run.status, 'done', `${run.source}: ${run.error ?? ''}`);
      for (const bucket of unmatched) assert.equal(run.counts[bucket], 0, `${run.source} ${bucket}`);
    }
    assert.equal(runs.find((run) => run.source === 'payments')?.counts.matched, 1, 'the top-up');
    assert.equal(runs.find((run) => run.source === 'bills')?.counts.matched, 1, 'the airtime');
    assert.deepEqual(await mismatchAlerts(admin), []);
  });

  it(
    'a payment the provider took and we never credited: found the next morning, alerted once, shown on /metrics',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 700);
      await payWithoutWebhook(world, intent);
      assert.equal(await walletKobo(world, user.userId), 0n, 'no webhook, no credit');

      const { day, from } = toNextMorning();
      const started = world.ctx.clock.now().getTime() / 1000;
      assert.equal(await morning(), reconciliationSources.length);
      const ended = world.ctx.clock.now().getTime() / 1000;
      const admin = await signIn(world, adminPhone);
      const runs = await runsOf(admin, from);
      assert.equal(runs.length, reconciliationSources.length, 'four runs of that day, one per source');
      const payments = runs.find((run) => run.source === 'payments');
      assert.ok(payments);
      assert.equal(payments.status, 'done', payments.error);
      assert.deepEqual(payments.counts, {
        matched: 0,
        missingHere: 1,
        missingThere: 0,
        amountMismatch: 0,
        statusMismatch: 0,
      });
      const { items } = ok(
        await get<{ items: ReconciliationItemView[] }>(
          world,
          'adminGetReconciliation',
          { id: payments.id },
          { token: admin.accessToken },
        ),
      );
      assert.deepEqual(
        items.map((item) => [item.bucket, item.reference]),
        [['missingHere', intent.reference]],
      );

      // One alert, for the payments of that day, naming its counts; the agreeing sources raise none.
      const alerts = await mismatchAlerts(admin);
      assert.equal(alerts.length, 1);
      const [alert] = alerts;
      assert.match(
        alert!.message,
        new RegExp(`^payments reconciliation of ${day}: 1 missing here, 0 missing there`),
      );
      assert.deepEqual(alert!.details, {
        runId: payments.id,
        source: 'payments',
        missingHere: 1,
        missingThere: 0,
        amountMismatch: 0,
        statusMismatch: 0,
      });

      // What Prometheus reads once the figures are refreshed, and alerts on (BillrailReconciliationMismatch).
      await world.ctx.jobs.runNow(figuresRefreshJob);
      const samples = await scrape(world);
      const itemsOf = (source: string, bucket: string) =>
        sampleValue(samples, 'billrail_reconciliation_items', { source, bucket });
      assert.equal(itemsOf('payments', 'missingHere'), 1);
      assert.equal(itemsOf('payments', 'matched'), 0);
      assert.equal(itemsOf('bills', 'missingHere'), 0);
      const finished = sampleValue(samples, 'billrail_reconciliation_last_run_timestamp_seconds', {
        source: 'payments',
      });
      assert.ok(
        finished !== undefined && finished >= started && finished <= ended,
        `finished by the service clock, when it ran (${finished} in ${started}..${ended})`,
      );

      // The job again (a second worker, a retry, a later hour of the same morning): nothing more.
      world.ctx.sandboxClock!.advance(3_600);
      assert.equal(await morning(), 0, 'no second run');
      // Signed in again: the admin's access token did not outlive the hour.
      const later = await signIn(world, adminPhone);
      assert.equal((await runsOf(later, from)).length, reconciliationSources.length);
      assert.equal((await mismatchAlerts(later)).length, 1, 'no second alert');
      // Nothing is credited by the morning's run itself: an operator resolves the item.
      assert.equal(await walletKobo(world, user.userId), 0n);
      assert.equal((await intentRow(world, intent.reference))?.status, 'pending');

      // Once the operators have resolved it, the gauge (and Prometheus's alert) stops counting it.
      ok(
        await post(
          world,
          'adminResolveReconciliationItem',
          { id: items[0]!.id, action: 'credit', reason: 'paid at the provider, webhook lost' },
          { token: later.accessToken },
        ),
      );
      await world.ctx.jobs.runNow(figuresRefreshJob);
      const resolved = await scrape(world);
      assert.equal(
        sampleValue(resolved, 'billrail_reconciliation_items', { source: 'payments', bucket: 'missingHere' }),
        0,
      );
      assert.equal(await walletKobo(world, user.userId), BigInt(intent.amount) * 100n);
    },
  );
});
