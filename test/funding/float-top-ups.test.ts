import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import { sql } from 'kysely';
import { alertEmailJob } from '../../src/alerts/alerts.ts';
import {
  type FundingDestination,
  floatTopUpByReference,
  floatTopUpPostingReference,
  floatTopUpReversalPostingReference,
  startFloatTopUp,
} from '../../src/funding/float-top-ups.ts';
import { floatTopUpReconcileDefaults, reconcileFloatTopUps } from '../../src/funding/reconcile.ts';
import type { FundingDeps } from '../../src/funding/service.ts';
import { storePaymentEvents } from '../../src/funding/webhook.ts';
import { processPaymentEvent } from '../../src/funding/webhook-processing.ts';
import { providerFloatAccount, systemAccounts, systemBalances } from '../../src/ledger/accounts.ts';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { sandboxPayments, startWebhookReceiver, type WebhookReceiver } from '../payments/helpers.ts';
import { assertLedgerOk, BOUNDED, fundingDeps, processed, secretOf, sendWebhook, sign } from './support.ts';

// Float top-ups (SPEC.md "States and transitions", "Events"; issue 4 item 5): the collections pool
// tops up a VTU provider's float by one of the payment provider's transfers, and its transfer.success,
// transfer.failed and transfer.reversed move the top-up, in any order and any number of times. The sandbox
// provider's webhooks are caught by a test receiver and handed to the service's endpoint byte for
// byte, so a test decides when each one arrives; its processing is awaited by running its job.

const AMOUNT_KOBO = 5_000_000n;

let accountCounter = 0;
/** A destination at the sandbox bank whose account number ends in `last` (the sandbox's outcome rule). */
function destination(last: '0' | '1' | '2', provider = 'bills'): FundingDestination {
  accountCounter += 1;
  return {
    provider,
    bankCode: '058',
    accountNumber: `${String(accountCounter % 100_000_000).padStart(9, '0')}${last}`,
    accountName: 'Bills Vendor Ltd',
  };
}

describe(`float top-ups and their transfer webhooks (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let receiver: WebhookReceiver;

  before(async () => {
    world = await createWorld();
    receiver = await startWebhookReceiver();
  });
  beforeEach(() => {
    const payments = sandboxPayments(world);
    payments.webhookUrlOverride = receiver.url;
    payments.webhookMode = 'deliver';
    payments.transferSettleDelayMs = 0;
    payments.transferReversalDelayMs = 0;
    payments.balanceKobo = 1_000_000_000n;
  });
  afterEach(() => assertLedgerOk(world));
  after(async () => {
    await receiver.close();
    await world.close();
  });

  const deps = (): FundingDeps => fundingDeps(world);

  /** Waits for the sandbox's webhook about a reference, hands it to the service, and processes it. */
  async function deliver(reference: string, event: string) {
    const [webhook] = await receiver.waitFor((w) => w.data?.reference === reference && w.event === event);
    const answer = await sendWebhook(world, webhook!.raw, {
      signature: webhook!.headers['x-payment-signature'] as string,
    });
    assert.equal(answer.status, 200);
    return (await processed(world, webhook!.raw)).outcome;
  }

  /** A transfer event as the provider would sign it, for orders the sandbox would not produce. */
  async function sendTransferEvent(event: string, reference: string, extra: Record<string, unknown> = {}) {
    const body = JSON.stringify({
      event,
      data: { reference, amount: Number(AMOUNT_KOBO), status: event.slice('transfer.'.length), ...extra },
    });
    const answer = await sendWebhook(world, body, { signature: sign(body, secretOf(world)) });
    assert.equal(answer.status, 200);
    return (await processed(world, body)).outcome;
  }

  async function postingsOf(reference: string) {
    return world.ctx.db
      .selectFrom('ledger_transactions')
      .select('reference')
      .where('reference', 'in', [
        floatTopUpPostingReference(reference),
        floatTopUpReversalPostingReference(reference),
      ])
      .execute();
  }

  async function alertsFor(reference: string) {
    const { rows } = await sql<{ kind: string }>`
      select kind from ops_alerts where details->>'reference' = ${reference} order by created_at, id
    `.execute(world.ctx.db);
    return rows.map((r) => r.kind);
  }

  async function domainEvents(reference: string) {
    const { rows } = await sql<{ type: string }>`
      select data->>'type' as type from pgboss.job
      where name = 'domain-event' and data->>'reference' = ${reference}
      order by created_on
    `.execute(world.ctx.db);
    return rows.map((r) => r.type);
  }

  async function pool(provider: string) {
    // Summed over their shards (LEDGER_SHARDS): a top-up posts to whichever its transaction drew.
    const balances = await systemBalances(world.ctx.db, [
      systemAccounts.collectionsPool,
      providerFloatAccount(provider),
    ]);
    return {
      pool: balances.get(systemAccounts.collectionsPool) ?? 0n,
      float: balances.get(providerFloatAccount(provider)) ?? 0n,
    };
  }

  /** A top-up whose transfer the sandbox accepted but will not settle during the test. */
  async function pendingTopUp(provider = 'bills') {
    sandboxPayments(world).transferSettleDelayMs = 3_600_000;
    const transfer = await startFloatTopUp(deps(), {
      destination: destination('0', provider),
      amountKobo: AMOUNT_KOBO,
      reason: 'float top-up',
    });
    assert.equal(transfer.status, 'pending');
    return transfer;
  }

  it(
    'transfer.success settles it once: pool → provider float, a settled event, duplicates change nothing',
    BOUNDED,
    async () => {
      const provider = 'data';
      const before = await pool(provider);
      const started = await startFloatTopUp(deps(), {
        destination: destination('0', provider),
        amountKobo: AMOUNT_KOBO,
        reason: 'float top-up',
      });
      assert.equal(started.status, 'pending', 'the sandbox answers pending, like Paystack');
      assert.match(started.transfer_code ?? '', /^TRF_/);

      assert.equal(await deliver(started.reference, 'transfer.success'), 'transfer_settled');
      const settled = await floatTopUpByReference(world.ctx, started.reference);
      assert.equal(settled.status, 'success');
      assert.ok(settled.settled_at !== null && settled.closed_at === null);
      const afterSettle = await pool(provider);
      assert.equal(afterSettle.pool - before.pool, AMOUNT_KOBO, 'the pool paid it');
      assert.equal(afterSettle.float - before.float, -AMOUNT_KOBO, 'the float holds it');
      assert.deepEqual(await domainEvents(started.reference), ['funding.float_top_up_settled']);

      // The same event again, with other bytes (a re-serialisation): nothing moves.
      assert.equal(
        await sendTransferEvent('transfer.success', started.reference, { id: 42 }),
        'transfer_unchanged',
      );
      assert.deepEqual(await pool(provider), afterSettle);
      assert.equal((await postingsOf(started.reference)).length, 1);
      assert.deepEqual(await alertsFor(started.reference), []);
    },
  );

  it(
    'transfer.failed: marked failed, nothing posted, operations alerted by email, a failed event',
    BOUNDED,
    async () => {
      const provider = 'bills';
      const before = await pool(provider);
      const started = await startFloatTopUp(deps(), {
        destination: destination('1', provider),
        amountKobo: AMOUNT_KOBO,
        reason: 'float top-up',
      });
      assert.equal(await deliver(started.reference, 'transfer.failed'), 'transfer_failed');
      const failed = await floatTopUpByReference(world.ctx, started.reference);
      assert.equal(failed.status, 'failed');
      assert.match(failed.failure_reason ?? '', /could not be credited/);
      assert.deepEqual(await pool(provider), before);
      assert.deepEqual(await postingsOf(started.reference), []);
      assert.deepEqual(await alertsFor(started.reference), ['provider_funding_failed']);
      assert.deepEqual(await domainEvents(started.reference), ['funding.float_top_up_failed']);
      const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pgboss.job j join ops_alerts a on a.id::text = j.data->>'alertId'
      where j.name = 'ops.alert-email' and a.details->>'reference' = ${started.reference}
    `.execute(world.ctx.db);
      assert.equal(rows[0]?.n, 1, 'one alert email enqueued');
    },
  );

  it(
    'success then reversed: the money goes back to the pool, net zero, operations alerted',
    BOUNDED,
    async () => {
      const provider = 'social';
      const before = await pool(provider);
      const started = await startFloatTopUp(deps(), {
        destination: destination('2', provider),
        amountKobo: AMOUNT_KOBO,
        reason: 'float top-up',
      });
      assert.equal(await deliver(started.reference, 'transfer.success'), 'transfer_settled');
      assert.equal(await deliver(started.reference, 'transfer.reversed'), 'transfer_reversed');
      const reversed = await floatTopUpByReference(world.ctx, started.reference);
      assert.equal(reversed.status, 'reversed');
      assert.ok(reversed.settled_at !== null, 'it had settled');
      assert.deepEqual(await pool(provider), before, 'back where it started');
      assert.deepEqual((await postingsOf(started.reference)).map((p) => p.reference).sort(), [
        floatTopUpPostingReference(started.reference),
        floatTopUpReversalPostingReference(started.reference),
      ]);
      assert.deepEqual(await alertsFor(started.reference), ['provider_funding_reversed']);
      // A purchase had its float when the top-up settled; the late reversal is for operations only.
      assert.deepEqual(await domainEvents(started.reference), ['funding.float_top_up_settled']);
    },
  );

  it(
    'reversed before success: closed as reversed, nothing posted, the late success changes nothing',
    BOUNDED,
    async () => {
      const provider = 'bills';
      const transfer = await pendingTopUp(provider);
      const before = await pool(provider);
      assert.equal(await sendTransferEvent('transfer.reversed', transfer.reference), 'transfer_reversed');
      assert.equal(await sendTransferEvent('transfer.success', transfer.reference), 'transfer_unchanged');
      assert.equal(
        await sendTransferEvent('transfer.reversed', transfer.reference, { id: 7 }),
        'transfer_unchanged',
      );
      assert.equal((await floatTopUpByReference(world.ctx, transfer.reference)).status, 'reversed');
      assert.deepEqual(await pool(provider), before);
      assert.deepEqual(await postingsOf(transfer.reference), []);
      assert.deepEqual(await alertsFor(transfer.reference), ['provider_funding_reversed']);
      // The float never arrived, so a purchase waiting on it must not go ahead.
      assert.deepEqual(await domainEvents(transfer.reference), ['funding.float_top_up_failed']);
    },
  );

  it(
    'contradictions are alerted and change nothing: success after failed, failed after success',
    BOUNDED,
    async () => {
      const failedFirst = await pendingTopUp();
      assert.equal(
        await sendTransferEvent('transfer.failed', failedFirst.reference, { gateway_response: 'Declined' }),
        'transfer_failed',
      );
      assert.equal(await sendTransferEvent('transfer.success', failedFirst.reference), 'transfer_conflict');
      assert.equal((await floatTopUpByReference(world.ctx, failedFirst.reference)).status, 'failed');
      assert.equal(
        (await floatTopUpByReference(world.ctx, failedFirst.reference)).failure_reason,
        'Declined',
      );
      assert.deepEqual(await postingsOf(failedFirst.reference), []);
      assert.deepEqual(await alertsFor(failedFirst.reference), [
        'provider_funding_failed',
        'transfer_conflicting_event',
      ]);

      const succeededFirst = await pendingTopUp();
      assert.equal(await sendTransferEvent('transfer.success', succeededFirst.reference), 'transfer_settled');
      assert.equal(await sendTransferEvent('transfer.failed', succeededFirst.reference), 'transfer_conflict');
      assert.equal((await floatTopUpByReference(world.ctx, succeededFirst.reference)).status, 'success');
      assert.equal((await postingsOf(succeededFirst.reference)).length, 1);
    },
  );

  it('an event for another amount than was sent is alerted and not acted on', BOUNDED, async () => {
    const transfer = await pendingTopUp();
    const outcome = await sendTransferEvent('transfer.success', transfer.reference, {
      amount: Number(AMOUNT_KOBO) + 1,
    });
    assert.equal(outcome, 'transfer_conflict');
    assert.equal((await floatTopUpByReference(world.ctx, transfer.reference)).status, 'pending');
    assert.deepEqual(await postingsOf(transfer.reference), []);
    assert.deepEqual(await alertsFor(transfer.reference), ['transfer_amount_mismatch']);
  });

  it(
    'unknown references and malformed transfer data are stored, answered 200 and left alone',
    BOUNDED,
    async () => {
      assert.equal(
        await sendTransferEvent('transfer.success', 'fund-nobody-knows-this-one'),
        'unknown_reference',
      );
      const body = JSON.stringify({ event: 'transfer.failed', data: { amount: 'a lot' } });
      assert.equal((await sendWebhook(world, body)).status, 200);
      assert.equal((await processed(world, body)).outcome, 'invalid_transfer');
    },
  );

  describe('transfer events for a reference this service never sent (issue 15 item 4)', () => {
    let counter = 0;
    const neverSent = () => `fund-never-sent-${process.pid}-${++counter}`;

    async function unknownAlerts(reference: string) {
      const { rows } = await sql<{
        id: string;
        message: string;
        details: { event: string; reference: string };
      }>`
        select id, message, details from ops_alerts
        where kind = 'transfer_unknown_reference' and details->>'reference' = ${reference}
        order by created_at, id
      `.execute(world.ctx.db);
      return rows;
    }

    async function emailJobs(reference: string) {
      const { rows } = await sql<{ n: string }>`
        select count(*)::text as n from pgboss.job j join ops_alerts a on a.id::text = j.data->>'alertId'
        where j.name = ${alertEmailJob.name} and a.details->>'reference' = ${reference}
      `.execute(world.ctx.db);
      return Number(rows[0]?.n);
    }

    it(
      'one alert per reference and event kind, naming both, however often and in whatever bytes it comes',
      BOUNDED,
      async () => {
        const reference = neverSent();
        const other = neverSent();
        const deliveries: Array<[string, string, Record<string, unknown>]> = [
          ['transfer.failed', reference, { id: 1 }],
          ['transfer.failed', reference, { id: 2, gateway_response: 'Account not found' }],
          ['transfer.success', reference, { id: 3 }],
          ['transfer.failed', reference, { id: 4, createdAt: '2026-11-25T10:00:00.000Z' }],
          ['transfer.reversed', reference, { id: 5 }],
          ['transfer.success', reference, { id: 6 }],
          ['transfer.failed', other, { id: 7 }],
        ];
        for (const [event, ref, extra] of deliveries) {
          // sendTransferEvent checks the 200; the processing closes each one.
          assert.equal(await sendTransferEvent(event, ref, extra), 'unknown_reference');
        }
        const alerts = await unknownAlerts(reference);
        assert.deepEqual(alerts.map((a) => a.details.event).sort(), [
          'transfer.failed',
          'transfer.reversed',
          'transfer.success',
        ]);
        for (const alert of alerts) {
          assert.ok(alert.message.includes(reference), alert.message);
          assert.ok(alert.message.includes(alert.details.event), alert.message);
        }
        assert.equal(await emailJobs(reference), 3, 'one email per alert');
        assert.deepEqual(
          (await unknownAlerts(other)).map((a) => a.details.event),
          ['transfer.failed'],
          'another reference has its own',
        );
        assert.equal(await emailJobs(other), 1);
      },
    );

    it(
      'twelve deliveries of one event processed at once raise one alert (a race only PostgreSQL shows)',
      BOUNDED,
      async () => {
        const reference = neverSent();
        const bodies = Array.from({ length: 12 }, (_, i) =>
          Buffer.from(
            JSON.stringify({
              event: 'transfer.failed',
              data: { reference, amount: Number(AMOUNT_KOBO), id: i },
            }),
          ),
        );
        // Stored the way the route stores them, but processed here, each in its own transaction at once.
        const stored = await storePaymentEvents(deps(), bodies);
        const outcomes = await Promise.all(stored.map((e) => processPaymentEvent(deps(), e.eventId)));
        assert.deepEqual(new Set(outcomes), new Set(['unknown_reference']));
        assert.equal((await unknownAlerts(reference)).length, 1);
        assert.equal(await emailJobs(reference), 1);
      },
    );

    it('a known reference raises no such alert', BOUNDED, async () => {
      const transfer = await pendingTopUp();
      assert.equal(await sendTransferEvent('transfer.success', transfer.reference), 'transfer_settled');
      assert.deepEqual(await unknownAlerts(transfer.reference), []);
      assert.deepEqual(await alertsFor(transfer.reference), []);
    });
  });

  it(
    '20 success and 20 reversed deliveries at once: one posting each way at most, ends reversed, pool whole',
    BOUNDED,
    async () => {
      const provider = 'bills';
      const transfer = await pendingTopUp(provider);
      const before = await pool(provider);
      const bodies = Array.from({ length: 40 }, (_, i) =>
        JSON.stringify({
          event: i % 2 === 0 ? 'transfer.success' : 'transfer.reversed',
          data: { reference: transfer.reference, amount: Number(AMOUNT_KOBO), id: i },
        }),
      );
      const answers = await Promise.all(bodies.map((body) => sendWebhook(world, body)));
      assert.ok(answers.every((a) => a.status === 200));
      await Promise.all(bodies.map((body) => processed(world, body)));
      assert.equal((await floatTopUpByReference(world.ctx, transfer.reference)).status, 'reversed');
      assert.deepEqual(await pool(provider), before, 'whatever the order, nothing net left the pool');
      const postings = (await postingsOf(transfer.reference)).length;
      assert.ok(postings === 0 || postings === 2, `settled and reversed, or neither (got ${postings})`);
    },
  );

  it('a refused recipient fails the top-up at once, without a transfer', BOUNDED, async () => {
    const refused = await startFloatTopUp(deps(), {
      destination: { ...destination('0'), bankCode: '999' },
      amountKobo: AMOUNT_KOBO,
      reason: 'float top-up',
    });
    assert.equal(refused.status, 'failed');
    assert.match(refused.failure_reason ?? '', /recipient not created/);
    assert.equal(sandboxPayments(world).transfers.has(refused.reference), false);
    assert.deepEqual(await alertsFor(refused.reference), ['provider_funding_failed']);
  });

  describe('reconciliation of top-ups whose webhooks were lost', () => {
    const passGrace = () => world.ctx.sandboxClock!.advance(floatTopUpReconcileDefaults.olderThanSeconds + 1);

    it("a top-up whose settled transfer's webhook was dropped is found settled, once", BOUNDED, async () => {
      const provider = 'data';
      const before = await pool(provider);
      sandboxPayments(world).webhookMode = 'drop';
      sandboxPayments(world).transferSettleDelayMs = 3_600_000;
      const transfer = await startFloatTopUp(deps(), {
        destination: destination('0', provider),
        amountKobo: AMOUNT_KOBO,
        reason: 'float top-up',
      });
      // The sandbox settles it now, and tells nobody.
      const atSandbox = sandboxPayments(world).transfers.get(transfer.reference)!;
      atSandbox.status = 'success';
      atSandbox.transferredAt = world.ctx.clock.now();

      const early = await reconcileFloatTopUps(deps(), floatTopUpReconcileDefaults);
      assert.equal(early.resolved, 0, 'a minute for its webhook first');
      passGrace();
      const counts = await reconcileFloatTopUps(deps(), floatTopUpReconcileDefaults);
      assert.ok(counts.resolved >= 1);
      assert.equal((await floatTopUpByReference(world.ctx, transfer.reference)).status, 'success');
      assert.equal((await pool(provider)).float - before.float, -AMOUNT_KOBO);
      // The late webhook changes nothing.
      assert.equal(await sendTransferEvent('transfer.success', transfer.reference), 'transfer_unchanged');
      assert.equal((await postingsOf(transfer.reference)).length, 1);
    });

    it(
      'a top-up whose transfer the provider never received stays pending, then fails after the not-found window',
      BOUNDED,
      async () => {
        // The initiating call never reaches the provider (a closed port): outcome unknown, pending.
        const unreachable = createPaystackClient({
          baseUrl: 'http://127.0.0.1:9',
          secretKey: secretOf(world),
          timeoutMs: 2_000,
        });
        const lost = await startFloatTopUp(
          { ...deps(), payments: { ...world.ctx.payments, initiateTransfer: unreachable.initiateTransfer } },
          { destination: destination('0'), amountKobo: AMOUNT_KOBO, reason: 'float top-up' },
        );
        assert.equal(lost.status, 'pending', 'an unanswered initiate is not a failure');
        passGrace();
        await reconcileFloatTopUps(deps(), floatTopUpReconcileDefaults);
        assert.equal((await floatTopUpByReference(world.ctx, lost.reference)).status, 'pending');
        world.ctx.sandboxClock!.advance(floatTopUpReconcileDefaults.notFoundAfterSeconds);
        const counts = await reconcileFloatTopUps(deps(), floatTopUpReconcileDefaults);
        assert.ok(counts.notFound >= 1);
        const closed = await floatTopUpByReference(world.ctx, lost.reference);
        assert.equal(closed.status, 'failed');
        assert.match(closed.failure_reason ?? '', /no record/);
        assert.deepEqual(await alertsFor(lost.reference), ['provider_funding_failed']);
      },
    );
  });
});
