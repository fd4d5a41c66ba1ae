import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { EventOf } from '../../src/events/domain-events.ts';

import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, failure, get, ok, post, signIn, uniquePhone, type World } from '../helpers/world.ts';
import { checkout, deliveryOf, sandboxPayments } from '../payments/helpers.ts';
import {
  assertLedgerOk,
  BOUNDED,
  chargeSuccess,
  createIntent,
  creditedEvents,
  creditPostings,
  intentRow,
  payWithoutWebhook,
  processed,
  providerChargeSuccess,
  sendWebhook,
  storedEvent,
  verify,
  walletKobo,
} from './support.ts';

// Wallet funding through checkout (SPEC.md items 12 and 14, API.md section 6), end to end against the
// sandbox payment provider: its checkout page, its signed charge.success webhooks and its verify API.

type Credited = EventOf<'funding.topup_credited'>;

/**
 * Runs `act` with the payment client the funding module holds answering as the real client does when
 * the provider cannot be reached: pointed at a port where nothing listens, a genuine network failure.
 */
async function withProviderUnreachable<T>(world: World, act: () => Promise<T>): Promise<T> {
  const unreachable = createPaystackClient({
    baseUrl: 'http://127.0.0.1:1/__sandbox/payments',
    secretKey: world.ctx.config.secrets.paymentSigning,
    timeoutMs: world.ctx.config.payments.timeoutMs,
  });
  const held = world.ctx.payments;
  const reachable = { ...held };
  Object.assign(held, unreachable);
  try {
    return await act();
  } finally {
    Object.assign(held, reachable);
  }
}

describe(`top-ups through checkout (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  const adminPhone = uniquePhone();
  const credited: Credited[] = [];
  const waiters: Array<{ reference: string; resolve: (e: Credited) => void }> = [];

  /** The funding.topup_credited event of a reference, once the worker has delivered it. */
  function creditOf(reference: string): Promise<Credited> {
    const seen = credited.find((e) => e.reference === reference);
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise((resolve) => waiters.push({ reference, resolve }));
  }

  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    world.ctx.events.subscribe('funding.topup_credited', async (event) => {
      credited.push(event);
      for (const w of waiters.filter((x) => x.reference === event.reference)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(event);
      }
    });
    await world.ctx.jobs.startWorkers();
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  describe('createTopupIntent', () => {
    it('returns a Paystack-legal reference, the checkout URL, the amount and pending', BOUNDED, async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 1_500.5);
      assert.match(intent.reference, /^top-[0-9a-f]{24}$/);
      assert.equal(intent.checkoutUrl, `${world.baseUrl}/__sandbox/checkout/${intent.reference}`);
      assert.equal(intent.amount, 1_500.5);
      assert.equal(intent.status, 'pending');
      const row = await intentRow(world, intent.reference);
      assert.equal(row?.user_id, user.userId);
      assert.equal(row?.amount, 150_050n);
      assert.equal(row?.status, 'pending');
      assert.equal(row?.credited_at, null);
      const transaction = sandboxPayments(world).transactions.get(intent.reference);
      assert.equal(transaction?.amountKobo, 150_050n, 'the provider was asked for the same kobo');
      // No email on the profile: the stable placeholder Paystack accepts.
      const customer = sandboxPayments(world).customers.get(transaction.customerCode);
      assert.equal(customer?.email, `${user.userId}@users.billrail.invalid`);
      assert.equal(await walletKobo(world, user.userId), 0n, 'an intent credits nothing');
    });

    it("uses the user's email when the profile has one", BOUNDED, async () => {
      const user = await signIn(world);
      ok(await post(world, 'updateProfile', { email: 'ada@example.com' }, { token: user.accessToken }));
      const intent = await createIntent(world, user, 100);
      const transaction = sandboxPayments(world).transactions.get(intent.reference);
      assert.equal(sandboxPayments(world).customers.get(transaction!.customerCode)?.email, 'ada@example.com');
    });

    it('refuses amounts outside ₦100 – ₦1,000,000 and more than two decimals', BOUNDED, async () => {
      const user = await signIn(world);
      const attempt = (amount: number) =>
        post(world, 'createTopupIntent', { amount }, { token: user.accessToken });
      const below = failure(await attempt(99.99));
      assert.deepEqual([below.status, below.code, below.details?.limit], [422, 'BELOW_MINIMUM', 100]);
      const zero = failure(await attempt(0));
      assert.deepEqual([zero.status, zero.code], [422, 'BELOW_MINIMUM']);
      const above = failure(await attempt(1_000_000.01));
      assert.deepEqual([above.status, above.code, above.details?.limit], [422, 'ABOVE_MAXIMUM', 1_000_000]);
      const huge = failure(await attempt(1e20));
      assert.deepEqual([huge.status, huge.code], [422, 'ABOVE_MAXIMUM']);
      for (const amount of [100.001, -100]) {
        const bad = failure(await attempt(amount));
        assert.deepEqual([bad.status, bad.code], [400, 'VALIDATION_ERROR'], String(amount));
      }
      // The limits themselves are allowed.
      assert.equal((await createIntent(world, user, 100)).amount, 100);
      assert.equal((await createIntent(world, user, 1_000_000)).amount, 1_000_000);
      const rows = await world.ctx.db
        .selectFrom('topup_intents')
        .select('amount')
        .where('user_id', '=', user.userId)
        .execute();
      assert.equal(rows.length, 2, 'a refused amount stores no intent');
    });

    it('needs a bearer token', BOUNDED, async () => {
      assert.equal((await post(world, 'createTopupIntent', { amount: 100 })).status, 401);
    });

    it('answers 502 and stores nothing when the provider cannot be reached', BOUNDED, async () => {
      const user = await signIn(world);
      const answer = await withProviderUnreachable(world, () =>
        post(world, 'createTopupIntent', { amount: 500 }, { token: user.accessToken }),
      );
      const error = failure(answer);
      assert.deepEqual([error.status, error.code], [502, 'UPSTREAM_UNAVAILABLE']);
      const rows = await world.ctx.db
        .selectFrom('topup_intents')
        .select('id')
        .where('user_id', '=', user.userId)
        .execute();
      assert.equal(rows.length, 0);
    });
  });

  describe('paying at checkout', () => {
    it('Pay → signed charge.success → the wallet is credited exactly the amount, once', BOUNDED, async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 2_500);
      const credit = creditOf(intent.reference);
      await checkout(intent.checkoutUrl, 'pay');
      const delivery = deliveryOf(world, 'charge.success', intent.reference);
      await delivery.settled;
      assert.equal(delivery.status, 'delivered');
      assert.deepEqual(
        delivery.attempts.map((a) => a.httpStatus),
        [200],
      );

      const event = await credit;
      assert.deepEqual(
        { userId: event.userId, reference: event.reference, amountKobo: event.amountKobo },
        { userId: user.userId, reference: intent.reference, amountKobo: '250000' },
      );
      assert.equal(await walletKobo(world, user.userId), 250_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
      const row = await intentRow(world, intent.reference);
      assert.equal(row?.status, 'success');
      assert.equal(row?.credited_amount, 250_000n);
      const wallet = ok(await get<{ balance: number }>(world, 'getWallet', {}, { token: user.accessToken }));
      assert.equal(wallet.balance, 2_500);

      // Verification afterwards agrees and credits nothing more.
      assert.deepEqual(ok(await verify(world, user, intent.reference)), {
        reference: intent.reference,
        status: 'success',
        credited: true,
      });
      // A redelivery of the very same bytes is stored once and changes nothing.
      const body = await providerChargeSuccess(world, intent.reference);
      const stored = await world.ctx.db
        .selectFrom('payment_events')
        .selectAll()
        .where('reference', '=', intent.reference)
        .execute();
      assert.equal(stored.length, 1);
      assert.equal(stored[0]?.outcome, 'credited');
      assert.equal((await sendWebhook(world, stored[0]!.body)).status, 200);
      assert.equal(
        (
          await world.ctx.db
            .selectFrom('payment_events')
            .select('id')
            .where('reference', '=', intent.reference)
            .execute()
        ).length,
        1,
      );
      assert.equal((await sendWebhook(world, body)).status, 200);
      assert.equal(await walletKobo(world, user.userId), 250_000n);
      assert.equal(await creditPostings(world, intent.reference), 1);
      assert.equal((await creditedEvents(world, intent.reference)).length, 1, 'one credit event');
    });

    it(
      'a browser coming back from checkout credits nothing: only verification or the webhook do',
      BOUNDED,
      async () => {
        const user = await signIn(world);
        const intent = await createIntent(world, user, 700);
        // The redirect target of the checkout page, loaded as a browser would after paying.
        await payWithoutWebhook(world, intent);
        const page = await fetch(intent.checkoutUrl);
        assert.equal(page.status, 200);
        await page.text();
        assert.equal(await walletKobo(world, user.userId), 0n);
        assert.equal((await intentRow(world, intent.reference))?.status, 'pending');
        // The late verification then credits it.
        assert.equal(ok(await verify(world, user, intent.reference)).credited, true);
        assert.equal(await walletKobo(world, user.userId), 70_000n);
      },
    );

    it(
      'lost webhook: nothing credited until verifyTopup, which credits once; a late redelivery changes nothing',
      BOUNDED,
      async () => {
        const user = await signIn(world);
        const intent = await createIntent(world, user, 1_234.56);
        await payWithoutWebhook(world, intent);
        assert.equal(deliveryOf(world, 'charge.success', intent.reference).status, 'dropped');
        assert.equal(await walletKobo(world, user.userId), 0n);
        assert.equal(
          await storedEvent(world, await providerChargeSuccess(world, intent.reference)),
          undefined,
        );

        assert.deepEqual(ok(await verify(world, user, intent.reference)), {
          reference: intent.reference,
          status: 'success',
          credited: true,
        });
        assert.equal(await walletKobo(world, user.userId), 123_456n);
        assert.equal((await creditOf(intent.reference)).amountKobo, '123456');

        // The provider's retry arrives after all, signed, exactly as it would have been sent.
        const late = await providerChargeSuccess(world, intent.reference);
        assert.equal((await sendWebhook(world, late)).status, 200);
        assert.equal((await processed(world, late)).outcome, 'already_credited');
        assert.deepEqual(ok(await verify(world, user, intent.reference)), {
          reference: intent.reference,
          status: 'success',
          credited: true,
        });
        assert.equal(await walletKobo(world, user.userId), 123_456n);
        assert.equal(await creditPostings(world, intent.reference), 1);
        assert.equal((await creditedEvents(world, intent.reference)).length, 1);
      },
    );

    it('Decline: verifyTopup says failed and nothing is credited', BOUNDED, async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 800);
      assert.deepEqual(ok(await verify(world, user, intent.reference)), {
        reference: intent.reference,
        status: 'pending',
        credited: false,
      });
      await checkout(intent.checkoutUrl, 'decline');
      for (let i = 0; i < 2; i++) {
        assert.deepEqual(ok(await verify(world, user, intent.reference)), {
          reference: intent.reference,
          status: 'failed',
          credited: false,
        });
      }
      assert.equal((await intentRow(world, intent.reference))?.status, 'failed');
      assert.equal(await walletKobo(world, user.userId), 0n);
      assert.equal(await creditPostings(world, intent.reference), 0);
    });

    it(
      'a charge that paid another amount credits what was paid and raises an ops alert',
      BOUNDED,
      async () => {
        const user = await signIn(world);
        const admin = await signIn(world, adminPhone);
        const intent = await createIntent(world, user, 500);
        const body = chargeSuccess(intent.reference, 30_000);
        assert.equal((await sendWebhook(world, body)).status, 200);
        assert.equal((await processed(world, body)).outcome, 'credited');
        assert.equal(await walletKobo(world, user.userId), 30_000n);
        const row = await intentRow(world, intent.reference);
        assert.deepEqual([row?.status, row?.amount, row?.credited_amount], ['success', 50_000n, 30_000n]);
        // Verification afterwards (which the provider would answer with the asked amount) credits nothing more.
        assert.equal(ok(await verify(world, user, intent.reference)).credited, true);
        assert.equal(await walletKobo(world, user.userId), 30_000n);

        const alerts = ok(
          await get<{
            items: Array<{
              id: string;
              kind: string;
              message: string;
              details: Record<string, unknown>;
              createdAt: string;
            }>;
            limit: number;
            offset: number;
            total: number;
          }>(world, 'adminListAlerts', { limit: 10 }, { token: admin.accessToken }),
        );
        const alert = alerts.items.find((a) => a.details.reference === intent.reference);
        assert.ok(alert !== undefined, 'the mismatch is in adminListAlerts');
        assert.equal(alert.kind, 'topup_amount_mismatch');
        assert.equal(alert.details.expectedKobo, '50000');
        assert.equal(alert.details.paidKobo, '30000');
        assert.equal(alert.details.userId, user.userId);
        assert.ok(!Number.isNaN(Date.parse(alert.createdAt)));
        assert.equal(alerts.limit, 10);
        assert.equal(alerts.offset, 0);
        assert.ok(alerts.total >= 1);
        // A user is not an admin.
        const refused = failure(await get(world, 'adminListAlerts', {}, { token: user.accessToken }));
        assert.deepEqual([refused.status, refused.code], [403, 'FORBIDDEN']);
      },
    );
  });

  describe('verifyTopup', () => {
    it("another user's reference, or one that does not exist, is 404", BOUNDED, async () => {
      const owner = await signIn(world);
      const other = await signIn(world);
      const intent = await createIntent(world, owner, 100);
      await payWithoutWebhook(world, intent);
      const notYours = failure(await verify(world, other, intent.reference));
      assert.deepEqual([notYours.status, notYours.code], [404, 'NOT_FOUND']);
      const missing = failure(await verify(world, owner, 'top-ffffffffffffffffffffffff'));
      assert.deepEqual([missing.status, missing.code], [404, 'NOT_FOUND']);
      assert.equal(await walletKobo(world, other.userId), 0n);
      assert.equal(await walletKobo(world, owner.userId), 0n, "the other user's attempt credited nobody");
    });

    it('answers 502 and changes nothing when the provider cannot be reached', BOUNDED, async () => {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 100);
      await payWithoutWebhook(world, intent);
      const answer = await withProviderUnreachable(world, () => verify(world, user, intent.reference));
      const error = failure(answer);
      assert.deepEqual([error.status, error.code], [502, 'UPSTREAM_UNAVAILABLE']);
      assert.equal((await intentRow(world, intent.reference))?.status, 'pending');
      assert.equal(await walletKobo(world, user.userId), 0n);
      // Once the provider is back, the same verification credits.
      assert.equal(ok(await verify(world, user, intent.reference)).credited, true);
      assert.equal(await walletKobo(world, user.userId), 10_000n);
    });
  });
});

describe('the process that stores a webhook processes it right away, without the job worker', () => {
  it('credits before the app has closed, with no worker running', BOUNDED, async () => {
    const world = await createWorld();
    let closed = false;
    try {
      const user = await signIn(world);
      const intent = await createIntent(world, user, 300);
      await checkout(intent.checkoutUrl, 'pay');
      await deliveryOf(world, 'charge.success', intent.reference).settled;
      // No worker runs in this world (WORKER=0) and nothing drives the job: closing the app waits
      // for the processing the route started after answering, and nothing else can have credited.
      await world.app.close();
      closed = true;
      const event = await world.ctx.db
        .selectFrom('payment_events')
        .selectAll()
        .where('reference', '=', intent.reference)
        .executeTakeFirstOrThrow();
      assert.equal(event.outcome, 'credited');
      assert.equal(await walletKobo(world, user.userId), 30_000n);
      await assertLedgerOk(world);
    } finally {
      if (!closed) await world.app.close();
      await world.close();
    }
  });
});
