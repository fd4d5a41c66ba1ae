import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, it } from 'node:test';
import { type ReconcileCounts, reconcileDefaults, reconcileTopups } from '../../src/funding/reconcile.ts';
import type { FundingDeps } from '../../src/funding/service.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, ok, post, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { checkout, deliveryOf, sandboxPayments } from '../payments/helpers.ts';
import {
  assertLedgerOk,
  BOUNDED,
  createIntent,
  creditedEvents,
  creditPostings,
  fundingDeps,
  intentRow,
  payWithoutWebhook,
  processed,
  providerChargeSuccess,
  sendWebhook,
  walletKobo,
} from './support.ts';

// Reconciliation of top-ups (SPEC.md item 14, Events rule 5, API.md section 11 adminReconcile): a
// payment whose webhook was lost is found by asking the provider, and credited exactly once. The
// workers are not started, so nothing but the calls in these tests reconciles anything.

const TOPUP = 500;
const TOPUP_KOBO = 50_000n;

/** A port nothing listens on: bound once by the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((e) => (e ? reject(e) : resolve())));
  return port;
}

describe(`reconciliation of top-ups (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  const deps = (): FundingDeps => fundingDeps(world);
  /** Moves the clock past the one-minute grace without running the clock's jobs. */
  const passGrace = () => world.ctx.sandboxClock!.advance(reconcileDefaults.olderThanSeconds + 1);

  async function adminReconcile(token: string) {
    return post<ReconcileCounts>(world, 'adminReconcile', {}, { token });
  }

  it(
    'a lost webhook: nothing credited, adminReconcile credits it once, the late webhook changes nothing',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      const admin = await signIn(world, adminPhone);
      const intent = await createIntent(world, user, TOPUP);
      await payWithoutWebhook(world, intent);
      assert.equal(await walletKobo(world, user.userId), 0n, 'no webhook, no credit');
      assert.equal((await intentRow(world, intent.reference))?.status, 'pending');

      // Within the first minute the user may still be at the checkout: not asked about yet.
      const early = ok(await adminReconcile(admin.accessToken));
      assert.equal(early.topups.credited, 0);
      assert.equal(await walletKobo(world, user.userId), 0n);

      passGrace();
      const counts = ok(await adminReconcile(admin.accessToken));
      assert.equal(counts.topups.credited, 1);
      assert.equal(counts.topups.errors, 0);
      assert.ok(counts.topups.checked >= 1);
      assert.equal(await walletKobo(world, user.userId), TOPUP_KOBO);
      assert.equal(await creditPostings(world, intent.reference), 1);
      const row = await intentRow(world, intent.reference);
      assert.deepEqual([row?.status, row?.credited_amount], ['success', TOPUP_KOBO]);
      assert.equal((await creditedEvents(world, intent.reference)).length, 1);

      // The provider's webhook finally arrives, signed: accepted, and it changes nothing.
      const late = await providerChargeSuccess(world, intent.reference);
      assert.equal((await sendWebhook(world, late)).status, 200);
      assert.equal((await processed(world, late)).outcome, 'already_credited');
      // Nor does another run: the intent is no longer pending.
      assert.equal(ok(await adminReconcile(admin.accessToken)).topups.credited, 0);
      assert.equal(await walletKobo(world, user.userId), TOPUP_KOBO);
      assert.equal(await creditPostings(world, intent.reference), 1);
      assert.equal((await creditedEvents(world, intent.reference)).length, 1);
    },
  );

  it(
    'the clock runs the reconcile job: a dropped payment is credited, an unpaid one stays pending, a declined one fails',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      const paid = await createIntent(world, user, TOPUP);
      const unpaid = await createIntent(world, user, 700);
      const declined = await createIntent(world, user, 900);
      await payWithoutWebhook(world, paid);
      await checkout(declined.checkoutUrl, 'decline');
      assert.equal(sandboxPayments(world).transactions.get(declined.reference)?.status, 'failed');
      assert.equal(
        (await intentRow(world, declined.reference))?.status,
        'pending',
        'a decline sends nothing',
      );

      const response = await fetch(`${world.baseUrl}/__sandbox/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ advanceSeconds: 600 }),
      });
      assert.equal(response.status, 200);

      assert.equal(await walletKobo(world, user.userId), TOPUP_KOBO, 'only the paid one is credited');
      assert.equal((await intentRow(world, paid.reference))?.status, 'success');
      assert.equal(await creditPostings(world, paid.reference), 1);
      assert.equal((await intentRow(world, unpaid.reference))?.status, 'pending');
      assert.equal(await creditPostings(world, unpaid.reference), 0);
      const failedRow = await intentRow(world, declined.reference);
      assert.deepEqual([failedRow?.status, failedRow?.credited_at], ['failed', null]);
      assert.equal(await creditPostings(world, declined.reference), 0);
    },
  );

  it(
    'a provider that cannot be reached for one intent: counted in errors, that intent unchanged, the batch goes on',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      // The unreachable one is the older, so it comes first in the batch.
      const unreachable = await createIntent(world, user, TOPUP);
      const reachable = await createIntent(world, user, 300);
      await payWithoutWebhook(world, unreachable);
      await payWithoutWebhook(world, reachable);
      passGrace();

      const port = await closedPort();
      const dead = createPaystackClient({
        baseUrl: `http://127.0.0.1:${port}`,
        secretKey: world.ctx.config.secrets.paymentSigning,
        timeoutMs: 5_000,
      });
      const real = world.ctx.payments;
      const routed: FundingDeps = {
        ...deps(),
        payments: {
          ...real,
          verifyTransaction: (reference) =>
            reference === unreachable.reference
              ? dead.verifyTransaction(reference)
              : real.verifyTransaction(reference),
        },
      };
      const failedReferences: string[] = [];
      const counts = await reconcileTopups(routed, {
        ...reconcileDefaults,
        onError: (reference) => failedReferences.push(reference),
      });
      assert.equal(counts.errors, 1);
      assert.deepEqual(failedReferences, [unreachable.reference]);
      assert.equal(counts.credited, 1, 'the reachable one after it is still credited');
      assert.equal(await creditPostings(world, unreachable.reference), 0);
      assert.equal((await intentRow(world, unreachable.reference))?.status, 'pending');
      assert.equal(await walletKobo(world, user.userId), 30_000n);

      // Every intent unreachable: all errors, nothing changes.
      const allDead = await reconcileTopups({ ...deps(), payments: dead }, reconcileDefaults);
      assert.equal(allDead.errors, allDead.checked);
      assert.ok(allDead.checked >= 1);
      assert.equal(allDead.credited, 0);
      assert.equal((await intentRow(world, unreachable.reference))?.status, 'pending');
      assert.equal(await walletKobo(world, user.userId), 30_000n);

      // Once the provider answers again, the next run credits it.
      const recovered = await reconcileTopups(deps(), reconcileDefaults);
      assert.equal(recovered.credited, 1);
      assert.equal(await walletKobo(world, user.userId), 30_000n + TOPUP_KOBO);
    },
  );

  it(
    'at most batchMax per run, least recently asked first: unpaid intents do not starve a paid one',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      // More unpaid intents than a batch holds, older than the paid ones.
      for (let i = 0; i < 3; i += 1) await createIntent(world, user, 200);
      world.ctx.sandboxClock!.advance(1);
      const older = await createIntent(world, user, TOPUP);
      world.ctx.sandboxClock!.advance(1);
      const newer = await createIntent(world, user, 300);
      await payWithoutWebhook(world, older);
      await payWithoutWebhook(world, newer);
      passGrace();

      const pendingCount = async () =>
        (
          await world.ctx.db
            .selectFrom('topup_intents')
            .select('id')
            .where('status', '=', 'pending')
            .execute()
        ).length;
      // With batches of one, every pending intent is asked about once before any is asked twice, so
      // both paid ones are credited within one round, the older first.
      const round = await pendingCount();
      let runs = 0;
      while ((await intentRow(world, newer.reference))?.status === 'pending') {
        assert.ok(runs < round, `credited within one round of ${round} runs`);
        const counts = await reconcileTopups(deps(), { ...reconcileDefaults, batchMax: 1 });
        assert.equal(counts.checked, 1);
        runs += 1;
        if ((await intentRow(world, newer.reference))?.status === 'success') {
          assert.equal((await intentRow(world, older.reference))?.status, 'success', 'the older first');
        }
      }
      assert.equal(await walletKobo(world, user.userId), TOPUP_KOBO + 30_000n);
    },
  );

  it(
    'an intent left unpaid for over 24 hours is closed as failed; a payment after that is still credited by its webhook',
    BOUNDED,
    async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, TOPUP);
      world.ctx.sandboxClock!.advance(reconcileDefaults.abandonedAfterSeconds - 10);
      await reconcileTopups(deps(), reconcileDefaults);
      assert.equal((await intentRow(world, intent.reference))?.status, 'pending', 'not yet 24 hours');

      world.ctx.sandboxClock!.advance(20);
      const counts = await reconcileTopups(deps(), reconcileDefaults);
      assert.ok(counts.expired >= 1);
      const row = await intentRow(world, intent.reference);
      assert.deepEqual([row?.status, row?.credited_at], ['failed', null]);

      // The user comes back and pays: the provider's signed webhook credits it all the same.
      await checkout(intent.checkoutUrl, 'pay');
      const delivery = deliveryOf(world, 'charge.success', intent.reference);
      await delivery.settled;
      assert.equal(delivery.status, 'delivered');
      // The route processes after answering; the sweep job waits for that drain to end.
      await world.ctx.jobs.runNow(paymentWebhookSweepJob);
      assert.equal(await walletKobo(world, user.userId), TOPUP_KOBO);
      assert.equal((await intentRow(world, intent.reference))?.status, 'success');
      assert.equal(await creditPostings(world, intent.reference), 1);
    },
  );

  it('adminReconcile is for admins only', BOUNDED, async () => {
    const user = await signIn(world);
    const refused = failure(await adminReconcile(user.accessToken));
    assert.deepEqual([refused.status, refused.code], [403, 'FORBIDDEN']);
    const anonymous = failure(await post(world, 'adminReconcile', {}));
    assert.deepEqual([anonymous.status, anonymous.code], [401, 'UNAUTHENTICATED']);
  });
});
