import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { koboToNaira } from '../../src/money.ts';
import { reconciliationRunJob } from '../../src/reconciliation/runs.ts';
import type {
  ReconciliationItemView,
  ReconciliationWithItemsView,
} from '../../src/reconciliation/schemas.ts';
import {
  assertLedgerOk,
  BOUNDED,
  createIntent,
  creditPostings,
  type Intent,
  intentRow,
  payWithoutWebhook,
  processed,
  providerChargeSuccess,
  sendWebhook,
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
import { expectError } from '../kyc/kyc-support.ts';
import { checkout, deliveryOf, sandboxPayments } from '../payments/helpers.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// Reconciliation with the providers' own records (API.md 17.5): a run sorts every record of the
// period into its bucket, by what the provider says and what we hold; an operator resolves an item
// once, and a credit goes through the verified top-up's once-only path. The workers are not started:
// the run's job is run by the test, as a worker would.

type Run = ReconciliationWithItemsView;

describe(`reconciliation with the providers' records (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  /** A period of its own for each test: the clock a day on, the period from there to an hour later. */
  async function freshPeriod(): Promise<{ from: string; to: string }> {
    world.ctx.sandboxClock!.advance(86_400);
    admin = await signIn(world, adminPhone);
    const from = world.ctx.clock.now();
    return { from: from.toISOString(), to: new Date(from.getTime() + 3_600_000).toISOString() };
  }

  async function reconcile(source: string, period: { from: string; to: string }): Promise<Run> {
    const started = ok(
      await post<Run>(world, 'adminRunReconciliation', { source, ...period }, { token: admin.accessToken }),
    );
    assert.equal(started.status, 'running', 'a run is a job: the request only starts it');
    const { failed } = await runQueuedJobs(world, reconciliationRunJob);
    assert.deepEqual(failed, []);
    return ok(
      await get<Run>(world, 'adminGetReconciliation', { id: started.id }, { token: admin.accessToken }),
    );
  }

  const itemOf = (run: Run, reference: string) => {
    const item = run.items.find((i) => i.reference === reference);
    assert.ok(item, `an item for ${reference}`);
    return item;
  };

  const resolve = (id: string, action: string, reason = 'checked against the provider dashboard') =>
    post<ReconciliationItemView>(
      world,
      'adminResolveReconciliationItem',
      { id, action, reason },
      { token: admin.accessToken },
    );

  async function paidTopup(user: SignedIn, naira: number): Promise<Intent> {
    const intent = await createIntent(world, user, naira);
    await checkout(intent.checkoutUrl, 'pay');
    // The sandbox's webhook, stored, then processed as the sweep would.
    await deliveryOf(world, 'charge.success', intent.reference).settled;
    await world.ctx.jobs.runNow(paymentWebhookSweepJob);
    assert.equal((await intentRow(world, intent.reference))?.status, 'success');
    return intent;
  }

  it(
    'sorts the payments of a period into the five buckets, each with our record and theirs',
    BOUNDED,
    async () => {
      const period = await freshPeriod();
      const user = await signIn(world);
      const credited = await paidTopup(user, 500);
      const lostWebhook = await createIntent(world, user, 600);
      await payWithoutWebhook(world, lostWebhook);
      const unpaid = await createIntent(world, user, 700);
      const paidOther = await paidTopup(user, 800);
      sandboxPayments(world).transactions.get(paidOther.reference)!.amountKobo = 80_100n;
      const reversed = await paidTopup(user, 900);
      sandboxPayments(world).transactions.get(reversed.reference)!.status = 'failed';
      const unknownThere = await paidTopup(user, 1_000);
      sandboxPayments(world).transactions.delete(unknownThere.reference);
      // Paid at the provider, its intent lost here (as after a restore to an earlier backup).
      const lostIntent = await createIntent(world, user, 1_100);
      await payWithoutWebhook(world, lostIntent);
      await world.ctx.db.deleteFrom('topup_intents').where('reference', '=', lostIntent.reference).execute();

      const run = await reconcile('payments', period);
      assert.equal(run.status, 'done');
      const buckets = Object.fromEntries(run.items.map((i) => [i.reference, i.bucket]));
      assert.deepEqual(buckets, {
        [credited.reference]: 'matched',
        [lostWebhook.reference]: 'missingHere',
        [unpaid.reference]: 'matched',
        [paidOther.reference]: 'amountMismatch',
        [reversed.reference]: 'statusMismatch',
        [unknownThere.reference]: 'missingThere',
        [lostIntent.reference]: 'missingHere',
      });
      assert.deepEqual(run.counts, {
        matched: 2,
        missingHere: 2,
        missingThere: 1,
        amountMismatch: 1,
        statusMismatch: 1,
      });
      assert.equal(run.items[0]!.bucket, 'statusMismatch', 'the worst first');
      const mismatch = itemOf(run, paidOther.reference);
      assert.deepEqual([mismatch.ours?.amount, mismatch.theirs?.amount], [800, 801]);
      const lost = itemOf(run, lostIntent.reference);
      assert.equal(lost.ours, undefined, 'we hold nothing of it');
      assert.deepEqual(
        [lost.theirs?.status, lost.theirs?.amount, lost.theirs?.userId],
        ['success', 1_100, user.userId],
      );
      assert.equal(itemOf(run, unknownThere.reference).theirs, undefined);
    },
  );

  it(
    'credits a missingHere payment once: a second resolution, a late webhook and verifyTopup change nothing',
    BOUNDED,
    async () => {
      const period = await freshPeriod();
      const user = await signIn(world);
      const lostWebhook = await createIntent(world, user, 600);
      await payWithoutWebhook(world, lostWebhook);
      const lostIntent = await createIntent(world, user, 1_100);
      await payWithoutWebhook(world, lostIntent);
      await world.ctx.db.deleteFrom('topup_intents').where('reference', '=', lostIntent.reference).execute();
      const matched = await paidTopup(user, 500);
      const run = await reconcile('payments', period);
      assert.equal(await walletKobo(world, user.userId), 50_000n, 'a run credits nothing by itself');

      // What each item takes is said with it, by the rule the resolution refuses by.
      assert.deepEqual(itemOf(run, matched.reference).actions, ['ignore']);
      assert.deepEqual(itemOf(run, lostIntent.reference).actions, ['credit', 'ignore']);
      expectError(await resolve(itemOf(run, matched.reference).id, 'credit'), 409, 'CONFLICT');
      for (const intent of [lostWebhook, lostIntent]) {
        const item = itemOf(run, intent.reference);
        const resolved = ok(await resolve(item.id, 'credit'));
        assert.deepEqual(resolved.actions, [], 'nothing more once resolved');
        assert.equal(resolved.resolution?.action, 'credit');
        assert.equal(resolved.resolution?.outcome, 'credited');
        assert.equal(resolved.resolution?.by, admin.userId);
        const again = await resolve(item.id, 'credit');
        assert.equal(expectError(again, 409, 'CONFLICT').details?.reason, 'already_resolved');
        // The provider's webhook arrives late, and the person asks: nothing more.
        const late = await sendWebhook(world, await providerChargeSuccess(world, intent.reference));
        assert.equal(late.status, 200);
        await processed(world, await providerChargeSuccess(world, intent.reference));
        const verified = ok(await verify(world, user, intent.reference));
        assert.equal(verified.credited, true);
        assert.equal(await creditPostings(world, intent.reference), 1);
      }
      assert.equal(await walletKobo(world, user.userId), 50_000n + 60_000n + 110_000n);
      const after = ok(
        await get<Run>(
          world,
          'adminGetReconciliation',
          { id: run.id, bucket: 'missingHere' },
          { token: admin.accessToken },
        ),
      );
      assert.equal(after.itemCount, 2);
      assert.ok(after.items.every((i) => i.resolution?.outcome === 'credited'));
      // Reconciled again, the same period agrees.
      const again = await reconcile('payments', period);
      assert.deepEqual(again.counts, {
        matched: 3,
        missingHere: 0,
        missingThere: 0,
        amountMismatch: 0,
        statusMismatch: 0,
      });
    },
  );

  it(
    'ignore records the reason and changes nothing; requery is for purchases; bad input is 4xx',
    BOUNDED,
    async () => {
      const period = await freshPeriod();
      const user = await signIn(world);
      const lostWebhook = await createIntent(world, user, 600);
      await payWithoutWebhook(world, lostWebhook);
      const run = await reconcile('payments', period);
      const item = itemOf(run, lostWebhook.reference);
      const refused = await resolve(item.id, 'requery');
      assert.equal(expectError(refused, 409, 'CONFLICT').details?.reason, 'not_a_purchase');
      const ignored = ok(await resolve(item.id, 'ignore', 'refunded to the card by the provider'));
      assert.deepEqual(
        [ignored.resolution?.outcome, ignored.resolution?.reason],
        ['ignored', 'refunded to the card by the provider'],
      );
      assert.equal(await walletKobo(world, user.userId), 0n);
      expectError(await resolve(item.id, 'credit'), 409, 'CONFLICT');
      expectError(await resolve('019a0000-0000-7000-8000-000000000000', 'ignore'), 404, 'NOT_FOUND');
      expectError(await resolve(item.id, 'refund'), 400, 'VALIDATION_ERROR');
      expectError(await resolve(item.id, 'ignore', '  '), 400, 'VALIDATION_ERROR');
      const badRange = await post(
        world,
        'adminRunReconciliation',
        { source: 'payments', from: period.to, to: period.from },
        { token: admin.accessToken },
      );
      expectError(badRange, 400, 'VALIDATION_ERROR');
      const tooLong = await post(
        world,
        'adminRunReconciliation',
        { source: 'payments', from: '2026-01-01', to: '2026-03-01' },
        { token: admin.accessToken },
      );
      expectError(tooLong, 400, 'VALIDATION_ERROR');
      expectError(
        await post(
          world,
          'adminRunReconciliation',
          { source: 'cards', ...period },
          { token: admin.accessToken },
        ),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await post(
          world,
          'adminRunReconciliation',
          { source: 'payments', ...period },
          { token: user.accessToken },
        ),
        403,
        'FORBIDDEN',
      );
      const listed = ok(
        await get<{ items: Run[]; total: number }>(
          world,
          'adminListReconciliations',
          { source: 'payments' },
          { token: admin.accessToken },
        ),
      );
      assert.equal(listed.items[0]!.id, run.id, 'newest first');
    },
  );

  it(
    'requeries each purchase of the bills provider: a refund of what it delivered is a statusMismatch',
    BOUNDED,
    async () => {
      const period = await freshPeriod();
      const user = await buyer(world, 10_000);
      const delivered = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('5'),
        amount: 100,
      });
      const refused = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('1'),
        amount: 200,
      });
      const pending = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('3'),
        amount: 300,
      });
      const wronglyFailed = await bought(world, user, 'buyAirtime', {
        network: 'mtn',
        phone: mtn('6'),
        amount: 400,
      });
      assert.deepEqual(
        [delivered.status, refused.status, pending.status],
        ['success', 'failed', 'processing'],
      );
      // As if we had refunded a purchase the provider delivered.
      await world.ctx.db
        .updateTable('vtu_transactions')
        .set({ status: 'failed' })
        .where('id', '=', wronglyFailed.id)
        .execute();

      const run = await reconcile('bills', period);
      assert.equal(run.providerList, false, 'VTpass keeps no list: only what we know is compared');
      const bucketOf = (reference: string) => itemOf(run, reference).bucket;
      assert.equal(bucketOf(delivered.reference), 'matched');
      assert.equal(bucketOf(refused.reference), 'matched');
      // Still processing here, failed there: the requery job had not come to it yet.
      assert.equal(bucketOf(pending.reference), 'statusMismatch');
      assert.equal(bucketOf(wronglyFailed.reference), 'statusMismatch');
      const item = itemOf(run, wronglyFailed.reference);
      assert.deepEqual(
        [item.ours?.status, item.theirs?.status, item.ours?.amount],
        ['failed', 'success', 400],
      );

      assert.deepEqual(item.actions, ['requery', 'ignore'], 'a purchase is requeried, never credited');
      const requeried = ok(await resolve(item.id, 'requery'));
      assert.equal(requeried.resolution?.outcome, 'provider: success; ours: failed');
      expectError(await resolve(item.id, 'credit'), 409, 'CONFLICT');
      // One still processing is settled by the purchases' own requery, asked once: refunded.
      const settled = ok(await resolve(itemOf(run, pending.reference).id, 'requery'));
      assert.equal(settled.resolution?.outcome, 'provider: failed; ours: failed');
      const after = ok(
        await post<{ status: string }>(
          world,
          'getMyVtuTransaction',
          { id: pending.id },
          { token: user.accessToken },
        ),
      );
      assert.equal(after.status, 'failed');
      assert.equal(await walletKobo(world, user.userId), 1_000_000n - 10_000n - 40_000n, 'refunded once');
    },
  );

  it(
    "reads the data vendor's own order list: an order it took that we hold no record of is missingHere",
    BOUNDED,
    async () => {
      const period = await freshPeriod();
      const user = await buyer(world, 10_000);
      const plan = (await world.ctx.vtuProviders.data.dataPlans('mtn'))[0]!;
      const order = { network: 'mtn', plan_id: plan.planId, amount: koboToNaira(plan.wholesaleKobo) };
      const kept = await bought(world, user, 'buyData', { ...order, phone: mtn('5') });
      const lostPhone = mtn('7');
      const lost = await bought(world, user, 'buyData', { ...order, phone: lostPhone });
      assert.deepEqual([kept.status, lost.status], ['success', 'success']);
      // Gone here, as after a restore to a backup taken before it.
      await world.ctx.db.deleteFrom('vtu_transactions').where('id', '=', lost.id).execute();

      const run = await reconcile('data', period);
      assert.equal(run.providerList, true);
      assert.equal(itemOf(run, kept.reference).bucket, 'matched');
      const missing = itemOf(run, lost.reference);
      assert.equal(missing.bucket, 'missingHere');
      assert.equal(missing.ours, undefined);
      assert.deepEqual(
        [missing.theirs?.status, missing.theirs?.amount, missing.theirs?.recipient],
        ['success', koboToNaira(plan.wholesaleKobo), lostPhone],
        'whose it was is found from the number it was for',
      );
      assert.deepEqual(run.counts, {
        matched: 1,
        missingHere: 1,
        missingThere: 0,
        amountMismatch: 0,
        statusMismatch: 0,
      });
    },
  );
});
