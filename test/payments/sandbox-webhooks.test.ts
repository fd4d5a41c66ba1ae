import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { paymentWebhookPath } from '../../src/http/payment-webhook-route.ts';
import type { PaymentProvider } from '../../src/providers/payments/payment-provider.ts';
import { createWorld, type World } from '../helpers/world.ts';
import {
  checkout,
  deliveryOf,
  hangUp,
  paystackClient,
  type ReceivedWebhook,
  sandboxPayments,
  signatureValid,
  startWebhookReceiver,
  uniqueReference,
  uniqueTransferReference,
  type WebhookReceiver,
} from './helpers.ts';

// The sandbox payment provider's webhooks, received by a local HTTP server: what it sends for each
// event, how it signs it (HMAC-SHA-512 of the raw body with PAYMENT_SIGNING_SECRET), how it retries,
// and that drop mode sends nothing. Every wait is on a promise the receiver or the delivery record
// resolves; the retry delays are shortened through SandboxState, never slept through.

const secret = 'sk_test_webhook_secret_1';
/** Seven retries a few milliseconds apart: the real schedule's shape, quickly. */
const quickRetries = [5, 5, 5, 5, 5, 5, 5];

describe('Sandbox payment provider webhooks', () => {
  let world: World;
  let client: PaymentProvider;
  let receiver: WebhookReceiver;

  before(async () => {
    world = await createWorld({ env: { PAYMENT_SIGNING_SECRET: secret } });
    client = paystackClient(world, { secretKey: secret });
    receiver = await startWebhookReceiver();
  });
  beforeEach(() => {
    const payments = sandboxPayments(world);
    payments.webhookUrlOverride = receiver.url;
    payments.webhookRetryDelaysMs = quickRetries;
    payments.webhookMode = 'deliver';
    payments.transferSettleDelayMs = 0;
    payments.transferReversalDelayMs = 0;
    payments.balanceKobo = 100_000_000n;
    receiver.respond = () => 200;
  });
  after(async () => {
    await receiver.close();
    await world.close();
  });

  const forReference = (reference: string, event?: string) => (w: ReceivedWebhook) =>
    w.data?.reference === reference && (event === undefined || w.event === event);

  async function paidAtCheckout(amountKobo: bigint, email = 'payer@example.com') {
    const { reference, pay } = await initialized(amountKobo, email);
    await pay();
    return reference;
  }

  /** A transaction at checkout, not paid yet: a test can set up its receiver for the reference first. */
  async function initialized(amountKobo: bigint, email = 'payer@example.com') {
    const reference = uniqueReference();
    const { authorizationUrl } = await client.initializeTransaction({ reference, amountKobo, email });
    return { reference, pay: () => checkout(authorizationUrl, 'pay') };
  }

  it('sends one signed charge.success after Pay, with the amount of the intent in kobo', async () => {
    const reference = await paidAtCheckout(750_050n, 'ada@example.com');
    const [webhook] = await receiver.waitFor(forReference(reference));
    await deliveryOf(world, 'charge.success', reference).settled;

    assert.ok(webhook);
    assert.equal(webhook.event, 'charge.success');
    assert.equal(webhook.headers['content-type'], 'application/json');
    assert.ok(signatureValid(webhook, secret), 'x-payment-signature is the HMAC-SHA-512 of the raw body');
    assert.ok(!signatureValid(webhook, 'sk_test_sandbox'), 'and not under another secret');
    assert.deepEqual(JSON.parse(webhook.raw.toString('utf8')), { event: webhook.event, data: webhook.data });

    const { data } = webhook;
    assert.equal(data.reference, reference);
    assert.equal(data.amount, 750_050);
    assert.equal(data.status, 'success');
    assert.equal(data.currency, 'NGN');
    assert.equal(data.channel, 'card');
    assert.equal(data.customer.email, 'ada@example.com');
    assert.match(data.customer.customer_code, /^CUS_/);
    const verified = await client.verifyTransaction(reference);
    assert.equal(data.customer.customer_code, verified?.customerCode);
    assert.equal(new Date(data.paid_at).getTime(), verified?.paidAt?.getTime());

    const delivery = deliveryOf(world, 'charge.success', reference);
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempts.length, 1);
    assert.equal(receiver.received.filter(forReference(reference)).length, 1);
  });

  it('sends nothing for a declined payment (webhooks are for successful charges only)', async () => {
    const reference = uniqueReference();
    const { authorizationUrl } = await client.initializeTransaction({
      reference,
      amountKobo: 5_000n,
      email: 'd@example.com',
    });
    await checkout(authorizationUrl, 'decline');
    assert.equal((await client.verifyTransaction(reference))?.status, 'failed');
    // The sandbox decides at once whether an event is sent; none was recorded for this reference.
    assert.deepEqual(
      sandboxPayments(world).webhookDeliveries.filter((d) => d.reference === reference),
      [],
    );
  });

  it('retries a receiver that answers 500 twice: exactly 3 attempts, the same signed bytes each time', async () => {
    const { reference, pay } = await initialized(30_000n);
    let attempts = 0;
    receiver.respond = (webhook) => {
      if (webhook.data?.reference !== reference) return 200;
      attempts += 1;
      return attempts <= 2 ? 500 : 200;
    };
    await pay();
    const received = await receiver.waitFor(forReference(reference), 3);
    const delivery = deliveryOf(world, 'charge.success', reference);
    await delivery.settled;

    assert.deepEqual(
      received.map((w) => w.answered),
      [500, 500, 200],
    );
    assert.equal(delivery.status, 'delivered');
    assert.deepEqual(
      delivery.attempts.map((a) => a.httpStatus),
      [500, 500, 200],
    );
    assert.equal(receiver.received.filter(forReference(reference)).length, 3, 'no attempt after the 200');
    for (const webhook of received) {
      assert.ok(webhook.raw.equals(received[0]!.raw));
      assert.ok(signatureValid(webhook, secret));
    }
  });

  it('retries after a network error', async () => {
    const { reference, pay } = await initialized(30_000n);
    let attempts = 0;
    receiver.respond = (webhook) => {
      if (webhook.data?.reference !== reference) return 200;
      attempts += 1;
      return attempts === 1 ? hangUp : 200;
    };
    await pay();
    const delivery = deliveryOf(world, 'charge.success', reference);
    await delivery.settled;
    assert.equal(delivery.status, 'delivered');
    assert.equal(delivery.attempts.length, 2);
    assert.equal(delivery.attempts[0]?.httpStatus, null);
    assert.ok(delivery.attempts[0]?.error);
    assert.equal(delivery.attempts[1]?.httpStatus, 200);
  });

  it('gives up after 8 attempts (the first and 7 retries) when the receiver never accepts', async () => {
    receiver.respond = () => 503;
    const reference = await paidAtCheckout(30_000n);
    const delivery = deliveryOf(world, 'charge.success', reference);
    await delivery.settled;
    assert.equal(delivery.status, 'failed');
    assert.equal(delivery.attempts.length, 8);
    assert.equal(receiver.received.filter(forReference(reference)).length, 8);
  });

  it('records payments but sends nothing in drop mode; verify still finds them', async () => {
    const setMode = (mode: unknown) =>
      fetch(`${world.baseUrl}/__sandbox/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ mode }),
      });
    const dropped = await setMode('drop');
    assert.equal(dropped.status, 200);
    assert.deepEqual(await dropped.json(), { success: true, data: { mode: 'drop' } });

    const lost = await paidAtCheckout(42_000n);
    assert.equal((await client.verifyTransaction(lost))?.status, 'success');
    const delivery = deliveryOf(world, 'charge.success', lost);
    assert.equal(delivery.status, 'dropped');
    assert.deepEqual(delivery.attempts, []);

    const listed = (await (await fetch(`${world.baseUrl}/__sandbox/webhooks`)).json()) as {
      data: { mode: string; deliveries: Array<{ reference: string; status: string }> };
    };
    assert.equal(listed.data.mode, 'drop');
    assert.equal(listed.data.deliveries.find((d) => d.reference === lost)?.status, 'dropped');

    assert.equal((await setMode('sometimes')).status, 400);
    assert.equal((await setMode('deliver')).status, 200);
    const delivered = await paidAtCheckout(43_000n);
    await receiver.waitFor(forReference(delivered));
    await deliveryOf(world, 'charge.success', delivered).settled;
    assert.equal(
      receiver.received.filter(forReference(lost)).length,
      0,
      'the dropped payment was never sent',
    );
  });

  it('sends charge.success for a bank transfer into a dedicated account, as Paystack does', async () => {
    const { customerCode } = await client.createCustomer({
      email: 'dva.owner@example.com',
      firstName: 'Ngozi',
      lastName: 'Okafor',
      phone: '08030000002',
    });
    const account = await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' });
    const response = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ accountNumber: account.accountNumber, amount: 15_000.5 }),
    });
    assert.equal(response.status, 200);
    const { data: sent } = (await response.json()) as { data: { reference: string; webhook: string } };
    assert.equal(sent.webhook, 'delivering');

    const [webhook] = await receiver.waitFor(forReference(sent.reference, 'charge.success'));
    assert.ok(webhook && signatureValid(webhook, secret));
    const { data } = webhook;
    assert.equal(data.amount, 1_500_050);
    assert.equal(data.status, 'success');
    assert.equal(data.channel, 'dedicated_nuban');
    assert.equal(data.authorization.channel, 'dedicated_nuban');
    assert.equal(data.authorization.card_type, 'transfer');
    assert.equal(data.authorization.brand, 'Managed Account');
    assert.equal(data.authorization.reusable, false);
    assert.equal(data.authorization.receiver_bank_account_number, account.accountNumber);
    assert.equal(data.authorization.receiver_bank, 'Test Bank');
    assert.equal(data.customer.customer_code, customerCode);
    assert.equal(data.customer.email, 'dva.owner@example.com');
  });

  for (const [last, events, status] of [
    ['0', ['transfer.success'], 'success'],
    ['1', ['transfer.failed'], 'failed'],
    ['2', ['transfer.success', 'transfer.reversed'], 'reversed'],
  ] as const) {
    it(`sends ${events.join(' then ')} for a transfer to an account ending in ${last}`, async () => {
      const { recipientCode } = await client.createTransferRecipient({
        name: 'Airtime Vendor Ltd',
        accountNumber: `098765432${last}`,
        bankCode: '058',
      });
      const reference = uniqueTransferReference();
      const transfer = await client.initiateTransfer({
        reference,
        amountKobo: 250_000n,
        recipientCode,
        reason: 'float',
      });
      const received = await Promise.all(
        events.map(async (event) => (await receiver.waitFor(forReference(reference, event)))[0]!),
      );
      for (const event of events) await deliveryOf(world, event, reference).settled;

      for (const webhook of received) {
        assert.ok(signatureValid(webhook, secret));
        assert.equal(webhook.data.reference, reference);
        assert.equal(webhook.data.transfer_code, transfer.transferCode);
        assert.equal(webhook.data.amount, 250_000);
        assert.equal(webhook.data.currency, 'NGN');
        assert.equal(webhook.data.recipient.name, 'Airtime Vendor Ltd');
        assert.equal(webhook.data.recipient.recipient_code, recipientCode);
        assert.equal(webhook.data.recipient.details.account_number, `098765432${last}`);
        assert.equal(typeof webhook.data.reason, 'string');
      }
      const final = received.at(-1)!;
      assert.equal(final.data.status, status);
      if (status !== 'success') assert.match(final.data.gateway_response, /sandbox: account number ends in/);
      else assert.equal(final.data.gateway_response, null);
      // Nothing else was sent about this transfer: its status is final.
      assert.equal((await client.verifyTransfer(reference))?.status, status);
      assert.deepEqual(
        sandboxPayments(world)
          .webhookDeliveries.filter((d) => d.reference === reference)
          .map((d) => d.event),
        events,
      );
    });
  }

  it('sends to the service’s webhook endpoint when no override is set', async () => {
    sandboxPayments(world).webhookUrlOverride = undefined;
    const reference = await paidAtCheckout(10_000n);
    const delivery = deliveryOf(world, 'charge.success', reference);
    assert.equal(delivery.url, `${world.baseUrl}${paymentWebhookPath}`);
    await delivery.settled;
    assert.ok(delivery.attempts.length >= 1);
  });
});

describe('Sandbox payment provider webhooks when the sandbox closes', () => {
  it('stops retrying: the delivery ends as stopped, and no timer outlives the app', async () => {
    const world = await createWorld();
    const receiver = await startWebhookReceiver();
    try {
      const payments = sandboxPayments(world);
      payments.webhookUrlOverride = receiver.url;
      payments.webhookRetryDelaysMs = [60_000];
      receiver.respond = () => 500;
      const client = paystackClient(world);
      const reference = uniqueReference();
      const { authorizationUrl } = await client.initializeTransaction({
        reference,
        amountKobo: 100n,
        email: 'c@example.com',
      });
      await checkout(authorizationUrl, 'pay');
      await receiver.waitFor(forAny(reference));
      const delivery = deliveryOf(world, 'charge.success', reference);
      await world.close();
      await delivery.settled;
      assert.equal(delivery.status, 'stopped');
      assert.equal(delivery.attempts.length, 1);
    } finally {
      await receiver.close();
    }
  });
});

const forAny = (reference: string) => (w: ReceivedWebhook) => w.data?.reference === reference;
