import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { type PaymentProvider, PaymentProviderError } from '../../src/providers/payments/payment-provider.ts';
import { createPaystackClient } from '../../src/providers/payments/paystack-client.ts';
import {
  type Handler,
  json,
  type Received,
  raw,
  type ScriptedServer,
  startScriptedServer,
} from '../helpers/scripted-server.ts';
import { createWorld, type World } from '../helpers/world.ts';
import {
  checkout,
  paystackBaseUrl,
  paystackClient,
  sandboxPayments,
  startWebhookReceiver,
  uniqueReference,
  uniqueTransferReference,
  type WebhookReceiver,
} from './helpers.ts';

// The real Paystack client against the sandbox provider over HTTP, for every call and outcome; then
// against a local server that misbehaves on purpose, for every way an answer can be unusable, and for
// the retry rule (a GET once more after a network error or 5xx, a POST never).

/** Asserts that the call fails with PaymentProviderError of the given kind, and returns the error. */
async function assertProviderError(
  call: Promise<unknown>,
  expected: { definite: boolean; httpStatus?: number | null; message: RegExp },
): Promise<PaymentProviderError> {
  let caught: unknown;
  await call.then(
    (value) => assert.fail(`expected PaymentProviderError, got ${JSON.stringify(value, bigintJson)}`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof PaymentProviderError, `got ${String(caught)}`);
  assert.equal(caught.definite, expected.definite, caught.message);
  if (expected.httpStatus !== undefined) assert.equal(caught.httpStatus, expected.httpStatus, caught.message);
  assert.match(caught.message, expected.message);
  return caught;
}

const bigintJson = (_key: string, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value);

describe('Paystack client against the sandbox provider', () => {
  let world: World;
  let client: PaymentProvider;
  let receiver: WebhookReceiver;

  before(async () => {
    world = await createWorld();
    client = paystackClient(world);
    receiver = await startWebhookReceiver();
    const payments = sandboxPayments(world);
    payments.webhookUrlOverride = receiver.url;
    payments.transferSettleDelayMs = 0;
    payments.transferReversalDelayMs = 0;
  });
  after(async () => {
    await receiver.close();
    await world.close();
  });

  describe('checkout transactions', () => {
    it('initializes a transaction whose checkout is the sandbox page, then verifies it as abandoned', async () => {
      const reference = uniqueReference();
      const before = world.ctx.clock.now();
      const started = await client.initializeTransaction({
        reference,
        amountKobo: 150_050n,
        email: 'Ada@Example.com',
        callbackUrl: 'https://app.example.com/done',
        metadata: { userId: 'u-1' },
      });
      assert.equal(started.reference, reference);
      assert.equal(started.authorizationUrl, `${world.baseUrl}/__sandbox/checkout/${reference}`);
      assert.match(started.accessCode, /^[a-z0-9]{15}$/);

      const verified = await client.verifyTransaction(reference);
      assert.ok(verified);
      assert.match(verified.customerCode ?? '', /^CUS_[a-z0-9]{15}$/);
      assert.ok(Number.isSafeInteger(verified.id) && verified.id > 0);
      assert.ok(verified.createdAt >= before && verified.createdAt <= world.ctx.clock.now());
      assert.deepEqual(verified, {
        id: verified.id,
        reference,
        status: 'abandoned',
        amountKobo: 150_050n,
        currency: 'NGN',
        paidAt: null,
        channel: 'card',
        customerEmail: 'Ada@Example.com',
        customerCode: verified.customerCode,
        gatewayResponse: 'The transaction was not completed',
        receiverAccountNumber: null,
        createdAt: verified.createdAt,
        metadata: { userId: 'u-1' },
      });
    });

    it('shows the amount in naira and the reference on the checkout page, and success after Pay', async () => {
      const reference = uniqueReference();
      const { authorizationUrl } = await client.initializeTransaction({
        reference,
        amountKobo: 123_456_789n,
        email: 'pay@example.com',
        callbackUrl: 'https://app.example.com/done?from=checkout',
      });
      const page = await fetch(authorizationUrl);
      assert.equal(page.status, 200);
      assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      const html = await page.text();
      assert.match(html, /₦1,234,567\.89/);
      assert.ok(html.includes(reference));
      assert.match(html, /<button id="pay"/);
      assert.match(html, /<button id="decline"/);

      const before = world.ctx.clock.now();
      const done = await checkout(authorizationUrl, 'pay');
      const afterPay = world.ctx.clock.now();
      assert.match(done, /Payment successful/);
      assert.doesNotMatch(done, /<button/);
      assert.ok(
        done.includes(
          `https://app.example.com/done?from=checkout&amp;trxref=${reference}&amp;reference=${reference}`,
        ),
      );

      const verified = await client.verifyTransaction(reference);
      assert.equal(verified?.status, 'success');
      assert.equal(verified?.channel, 'card');
      assert.equal(verified?.gatewayResponse, 'Successful');
      assert.equal(verified?.amountKobo, 123_456_789n);
      assert.ok(verified?.paidAt instanceof Date);
      assert.ok(
        verified.paidAt >= before && verified.paidAt <= afterPay,
        'paid_at is the sandbox clock at Pay',
      );
    });

    it('stamps paid_at with the sandbox clock, also after it was moved forward', async () => {
      world.ctx.sandboxClock!.advance(3 * 24 * 3600);
      const reference = uniqueReference();
      const { authorizationUrl } = await client.initializeTransaction({
        reference,
        amountKobo: 10_000n,
        email: 'later@example.com',
      });
      const before = world.ctx.clock.now();
      await checkout(authorizationUrl, 'pay');
      const paidAt = (await client.verifyTransaction(reference))?.paidAt;
      assert.ok(
        paidAt instanceof Date && paidAt >= before,
        `${paidAt?.toISOString()} ≥ ${before.toISOString()}`,
      );
      assert.ok(paidAt.getTime() > Date.now() + 2 * 24 * 3600 * 1000);
    });

    it('verifies a declined transaction as failed, and neither button changes a final outcome', async () => {
      const reference = uniqueReference();
      const { authorizationUrl } = await client.initializeTransaction({
        reference,
        amountKobo: 20_000n,
        email: 'decline@example.com',
        callbackUrl: 'https://app.example.com/done',
      });
      const declined = await checkout(authorizationUrl, 'decline');
      assert.match(declined, /Payment declined/);
      // The way back to the merchant, whose page says the payment failed and offers another try.
      assert.ok(
        declined.includes(
          `<a href="https://app.example.com/done?trxref=${reference}&amp;reference=${reference}">Return to the merchant</a>`,
        ),
      );
      assert.equal((await client.verifyTransaction(reference))?.status, 'failed');
      assert.equal((await client.verifyTransaction(reference))?.gatewayResponse, 'Declined');
      assert.match(await checkout(authorizationUrl, 'pay'), /Payment declined/);
      assert.equal((await client.verifyTransaction(reference))?.status, 'failed');

      const paid = uniqueReference();
      const second = await client.initializeTransaction({
        reference: paid,
        amountKobo: 20_000n,
        email: 'p@example.com',
      });
      await checkout(second.authorizationUrl, 'pay');
      assert.match(await checkout(second.authorizationUrl, 'decline'), /Payment successful/);
      assert.equal((await client.verifyTransaction(paid))?.status, 'success');
    });

    it('answers null for a reference the provider does not know', async () => {
      assert.equal(await client.verifyTransaction('never-initialized'), null);
      const page = await fetch(`${world.baseUrl}/__sandbox/checkout/never-initialized`);
      assert.equal(page.status, 404);
      assert.match(await page.text(), /Unknown transaction/);
    });

    it('refuses a duplicate reference definitely (400), and keeps the first transaction', async () => {
      const reference = uniqueReference();
      await client.initializeTransaction({ reference, amountKobo: 5_000n, email: 'first@example.com' });
      await assertProviderError(
        client.initializeTransaction({ reference, amountKobo: 9_000n, email: 'second@example.com' }),
        { definite: true, httpStatus: 400, message: /Duplicate Transaction Reference/ },
      );
      const kept = await client.verifyTransaction(reference);
      assert.equal(kept?.amountKobo, 5_000n);
      assert.equal(kept?.customerEmail, 'first@example.com');
    });

    for (const [label, request, message] of [
      [
        'a reference with "_"',
        { reference: 'top_abc', amountKobo: 100n, email: 'a@example.com' },
        /Invalid transaction reference/,
      ],
      [
        'a bad email',
        { reference: uniqueReference(), amountKobo: 100n, email: 'not-an-email' },
        /Invalid Email/,
      ],
    ] as const) {
      it(`refuses ${label} definitely (400)`, async () => {
        await assertProviderError(client.initializeTransaction(request), {
          definite: true,
          httpStatus: 400,
          message,
        });
      });
    }
  });

  describe('customers and dedicated accounts', () => {
    it('creates a customer once per email; a dedicated account once per customer', async () => {
      const { customerCode } = await client.createCustomer({
        email: 'obi.ada@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '08031234567',
      });
      assert.match(customerCode, /^CUS_[a-z0-9]{15}$/);
      const again = await client.createCustomer({
        email: 'OBI.ADA@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '08031234567',
      });
      assert.equal(again.customerCode, customerCode);

      const account = await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' });
      assert.match(account.accountNumber, /^\d{10}$/);
      assert.deepEqual(account, {
        accountNumber: account.accountNumber,
        accountName: 'BILLRAIL/OBI ADA',
        bankName: 'Test Bank',
        providerSlug: 'test-bank',
        customerCode,
      });
      assert.deepEqual(
        await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' }),
        account,
      );

      // Account numbers are unique across customers.
      const other = await client.createCustomer({
        email: 'musa@example.com',
        firstName: 'Musa',
        lastName: 'Bello',
        phone: '08039876543',
      });
      const second = await client.createDedicatedAccount({
        customerCode: other.customerCode,
        preferredBank: 'test-bank',
      });
      assert.notEqual(second.accountNumber, account.accountNumber);
      assert.equal(second.accountName, 'BILLRAIL/BELLO MUSA');

      // The account resolves to its own name.
      assert.deepEqual(
        await client.resolveAccount({ accountNumber: account.accountNumber, bankCode: '058' }),
        {
          accountNumber: account.accountNumber,
          accountName: 'BILLRAIL/OBI ADA',
        },
      );
    });

    it('refuses a dedicated account for a customer without a phone, an unknown customer, or another bank', async () => {
      const { customerCode } = await client.createCustomer({
        email: 'nophone@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '',
      });
      await assertProviderError(client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' }), {
        definite: true,
        httpStatus: 400,
        message: /first_name, last_name and phone are required/,
      });
      await assertProviderError(
        client.createDedicatedAccount({ customerCode: 'CUS_doesnotexist00', preferredBank: 'test-bank' }),
        { definite: true, httpStatus: 400, message: /Customer not found/ },
      );
      const complete = await client.createCustomer({
        email: 'wema@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '08031234567',
      });
      await assertProviderError(
        client.createDedicatedAccount({ customerCode: complete.customerCode, preferredBank: 'wema-bank' }),
        { definite: true, httpStatus: 400, message: /test-bank only/ },
      );
    });

    it('records a bank transfer into a dedicated account as a successful dedicated_nuban transaction', async () => {
      const { customerCode } = await client.createCustomer({
        email: 'dva@example.com',
        firstName: 'Chioma',
        lastName: 'Eze',
        phone: '08030000001',
      });
      const account = await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' });
      const response = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ accountNumber: account.accountNumber, amount: 2500.75 }),
      });
      assert.equal(response.status, 200);
      const { data } = (await response.json()) as { data: { reference: string; amount: number } };
      assert.equal(data.amount, 2500.75);
      const verified = await client.verifyTransaction(data.reference);
      assert.ok(verified);
      assert.equal(verified.status, 'success');
      assert.equal(verified.channel, 'dedicated_nuban');
      assert.equal(verified.amountKobo, 250_075n);
      assert.equal(verified.customerCode, customerCode);
      assert.equal(verified.customerEmail, 'dva@example.com');
    });

    it('answers 404 to a bank transfer into an unknown account and 400 to a bad amount', async () => {
      const post = (body: unknown) =>
        fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      assert.equal((await post({ accountNumber: '1111111111', amount: 100 })).status, 404);
      for (const amount of [0, -5, 1.234, '100']) {
        assert.equal((await post({ accountNumber: '1111111111', amount })).status, 400, String(amount));
      }
    });
  });

  describe('bank accounts and transfers', () => {
    it('resolves any 10-digit account to a stable name; 0000000000 to null', async () => {
      const first = await client.resolveAccount({ accountNumber: '0123456789', bankCode: '044' });
      assert.ok(first);
      assert.equal(first.accountNumber, '0123456789');
      assert.match(first.accountName, /^[A-Z]+ [A-Z]+$/);
      assert.deepEqual(await client.resolveAccount({ accountNumber: '0123456789', bankCode: '044' }), first);
      assert.equal(await client.resolveAccount({ accountNumber: '0000000000', bankCode: '044' }), null);
    });

    it('refuses an unknown bank code or a malformed account number definitely (422)', async () => {
      await assertProviderError(client.resolveAccount({ accountNumber: '0123456789', bankCode: '000' }), {
        definite: true,
        httpStatus: 422,
        message: /Unknown bank code: 000/,
      });
      await assertProviderError(client.resolveAccount({ accountNumber: '012345678', bankCode: '044' }), {
        definite: true,
        httpStatus: 422,
        message: /10 digits/,
      });
    });

    it('gives back the same recipient for the same account and bank', async () => {
      const first = await client.createTransferRecipient({
        name: 'Data Vendor',
        accountNumber: '0123450000',
        bankCode: '058',
      });
      assert.match(first.recipientCode, /^RCP_[a-z0-9]{15}$/);
      const again = await client.createTransferRecipient({
        name: 'Data Vendor',
        accountNumber: '0123450000',
        bankCode: '058',
      });
      assert.equal(again.recipientCode, first.recipientCode);
      const otherBank = await client.createTransferRecipient({
        name: 'Data Vendor',
        accountNumber: '0123450000',
        bankCode: '044',
      });
      assert.notEqual(otherBank.recipientCode, first.recipientCode);
      await assertProviderError(
        client.createTransferRecipient({ name: 'X', accountNumber: '0123450000', bankCode: '999' }),
        { definite: true, httpStatus: 400, message: /Unknown bank code/ },
      );
    });

    for (const [last, event, finalStatus] of [
      ['0', 'transfer.success', 'success'],
      ['1', 'transfer.failed', 'failed'],
      ['2', 'transfer.reversed', 'reversed'],
    ] as const) {
      it(`initiates a transfer (pending), which ends ${finalStatus} for an account ending in ${last}`, async () => {
        await setBalance(world, 1_000);
        const { recipientCode } = await client.createTransferRecipient({
          name: 'Bills Vendor',
          accountNumber: `055555555${last}`,
          bankCode: '033',
        });
        const reference = uniqueTransferReference();
        const transfer = await client.initiateTransfer({
          reference,
          amountKobo: 40_000n,
          recipientCode,
          reason: 'JIT float',
        });
        assert.match(transfer.transferCode, /^TRF_[a-z0-9]{15}$/);
        assert.deepEqual(transfer, {
          reference,
          transferCode: transfer.transferCode,
          status: 'pending',
          amountKobo: 40_000n,
          reason: 'JIT float',
        });
        // (That the money leaves the balance while pending is checked below, where the transfer stays pending.)
        await receiver.waitFor((w) => w.event === event && w.data.reference === reference);
        const verified = await client.verifyTransfer(reference);
        assert.deepEqual(verified, { ...transfer, status: finalStatus });
        // A failed or reversed transfer gives the money back.
        assert.deepEqual(await client.balance(), {
          balanceKobo: finalStatus === 'success' ? 60_000n : 100_000n,
        });
      });
    }

    it('answers the same transfer for the same reference (no second debit); refuses it with another amount', async () => {
      await setBalance(world, 1_000);
      const { recipientCode } = await client.createTransferRecipient({
        name: 'V',
        accountNumber: '0666666660',
        bankCode: '057',
      });
      const reference = uniqueTransferReference();
      sandboxPayments(world).transferSettleDelayMs = 60_000;
      try {
        const first = await client.initiateTransfer({
          reference,
          amountKobo: 10_000n,
          recipientCode,
          reason: 'r',
        });
        const again = await client.initiateTransfer({
          reference,
          amountKobo: 10_000n,
          recipientCode,
          reason: 'r',
        });
        assert.deepEqual(again, first);
        assert.deepEqual(await client.balance(), { balanceKobo: 90_000n });
        await assertProviderError(
          client.initiateTransfer({ reference, amountKobo: 20_000n, recipientCode, reason: 'r' }),
          {
            definite: true,
            httpStatus: 400,
            message: /Duplicate Transfer Reference/,
          },
        );
        assert.equal((await client.verifyTransfer(reference))?.status, 'pending');
      } finally {
        sandboxPayments(world).transferSettleDelayMs = 0;
      }
    });

    it('refuses a transfer above the balance definitely, and one with a bad reference or recipient', async () => {
      await setBalance(world, 100);
      const { recipientCode } = await client.createTransferRecipient({
        name: 'V',
        accountNumber: '0777777770',
        bankCode: '057',
      });
      await assertProviderError(
        client.initiateTransfer({
          reference: uniqueTransferReference(),
          amountKobo: 10_001n,
          recipientCode,
          reason: 'r',
        }),
        { definite: true, httpStatus: 400, message: /Your balance is not enough to fulfil this request/ },
      );
      assert.deepEqual(await client.balance(), { balanceKobo: 10_000n });
      await assertProviderError(
        client.initiateTransfer({ reference: 'Short_REF', amountKobo: 100n, recipientCode, reason: 'r' }),
        { definite: true, httpStatus: 400, message: /Invalid reference/ },
      );
      await assertProviderError(
        client.initiateTransfer({
          reference: uniqueTransferReference(),
          amountKobo: 100n,
          recipientCode: 'RCP_nobody',
          reason: 'r',
        }),
        { definite: true, httpStatus: 400, message: /Recipient specified is invalid/ },
      );
    });

    it('answers null for a transfer reference the provider does not know', async () => {
      assert.equal(await client.verifyTransfer('no_such_transfer_0000'), null);
    });

    it('reports the balance the sandbox was set to, in kobo', async () => {
      await setBalance(world, 1234.56);
      assert.deepEqual(await client.balance(), { balanceKobo: 123_456n });
      const response = await fetch(`${paystackBaseUrl(world)}/balance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ amount: -1 }),
      });
      assert.equal(response.status, 400);
      assert.deepEqual(await client.balance(), { balanceKobo: 123_456n });
    });
  });

  describe('credentials', () => {
    it('refuses a wrong secret key on every call (401, definite), and the error does not carry the key', async () => {
      const secretKey = 'sk_test_not_the_key';
      const wrong = paystackClient(world, { secretKey });
      const calls: Array<() => Promise<unknown>> = [
        () =>
          wrong.initializeTransaction({
            reference: uniqueReference(),
            amountKobo: 100n,
            email: 'a@example.com',
          }),
        () => wrong.verifyTransaction('anything'),
        () =>
          wrong.createCustomer({
            email: 'a@example.com',
            firstName: 'A',
            lastName: 'B',
            phone: '08030000000',
          }),
        () => wrong.createDedicatedAccount({ customerCode: 'CUS_x', preferredBank: 'test-bank' }),
        () => wrong.resolveAccount({ accountNumber: '0123456789', bankCode: '058' }),
        () => wrong.createTransferRecipient({ name: 'X', accountNumber: '0123456789', bankCode: '058' }),
        () =>
          wrong.initiateTransfer({
            reference: uniqueTransferReference(),
            amountKobo: 100n,
            recipientCode: 'RCP_x',
            reason: 'r',
          }),
        () => wrong.verifyTransfer('anything_anything'),
        () => wrong.balance(),
      ];
      for (const call of calls) {
        const error = await assertProviderError(call(), {
          definite: true,
          httpStatus: 401,
          message: /refused our secret key \(401\): Invalid key/,
        });
        assert.ok(!error.message.includes(secretKey));
      }
    });
  });

  describe('paths the sandbox does not implement', () => {
    // Paths of Paystack's API the sandbox has no use for, the prefix itself, a path under a wrong base
    // URL, and implemented paths asked with another method.
    const unimplemented: Array<[method: string, path: string]> = [
      ['GET', '/transaction/totals'],
      ['GET', '/transfer'],
      ['POST', '/refund'],
      ['GET', ''],
      ['GET', '/'],
      ['GET', '/v9/balance'],
      ['DELETE', '/transaction/initialize'],
      ['POST', '/transaction/verify/some-reference'],
      ['PUT', '/balance'],
      ['PATCH', '/customer'],
    ];
    const send = (method: string, path: string, authorization?: string) =>
      fetch(`${paystackBaseUrl(world)}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(authorization !== undefined ? { authorization } : {}),
          ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
        },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: '{}' }),
      });

    it("answers 404 in Paystack's shape once the key is right, 401 before that", async () => {
      const key = `Bearer ${world.ctx.config.secrets.paymentSigning}`;
      for (const [method, path] of unimplemented) {
        const label = `${method} ${path}`;
        const found = await send(method, path, key);
        assert.equal(found.status, 404, label);
        assert.match(found.headers.get('content-type') ?? '', /^application\/json/, label);
        assert.deepEqual(await found.json(), { status: false, message: 'Route not found' }, label);
        for (const wrong of [undefined, 'Bearer sk_test_not_the_key']) {
          const refused = await send(method, path, wrong);
          assert.equal(refused.status, 401, label);
          assert.deepEqual(await refused.json(), { status: false, message: 'Invalid key' }, label);
        }
      }
    });

    it('is read by the client as a definite refusal, and by verify as an unknown reference', async () => {
      const lost = (secretKey: string) =>
        createPaystackClient({ baseUrl: `${paystackBaseUrl(world)}/v9`, secretKey, timeoutMs: 5_000 });
      const client = lost(world.ctx.config.secrets.paymentSigning);
      const balanceBefore = sandboxPayments(world).balanceKobo;
      await assertProviderError(client.balance(), {
        definite: true,
        httpStatus: 404,
        message: /refused the request \(404\): Route not found/,
      });
      await assertProviderError(
        client.initiateTransfer({
          reference: uniqueTransferReference(),
          amountKobo: 100n,
          recipientCode: 'RCP_x',
          reason: 'r',
        }),
        { definite: true, httpStatus: 404, message: /refused the request \(404\): Route not found/ },
      );
      assert.equal(sandboxPayments(world).balanceKobo, balanceBefore);
      // Verify reads a 404 in Paystack's shape as "no such reference", whichever path it came from,
      // exactly as it would from Paystack.
      assert.equal(await client.verifyTransaction('anything'), null);
      await assertProviderError(lost('sk_test_not_the_key').balance(), {
        definite: true,
        httpStatus: 401,
        message: /refused our secret key \(401\): Invalid key/,
      });
    });
  });
});

async function setBalance(world: World, naira: number): Promise<void> {
  const response = await fetch(`${paystackBaseUrl(world)}/balance`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ amount: naira }),
  });
  assert.equal(response.status, 200);
}

describe('Paystack client against a misbehaving provider', () => {
  let server: ScriptedServer;
  let baseUrl: string;
  let handler: Handler;
  const received: Received[] = [];

  before(async () => {
    server = await startScriptedServer(
      (request, body, response) => handler(request, body, response),
      received,
    );
    baseUrl = server.baseUrl;
  });
  beforeEach(() => {
    received.length = 0;
  });
  after(() => server.close());

  const client = (timeoutMs = 2_000) =>
    createPaystackClient({ baseUrl, secretKey: 'sk_test_secret_1', timeoutMs });
  /** Answers with the handlers in turn, the last one for every request after. */
  const inTurn = (...handlers: Handler[]): Handler => {
    let next = 0;
    return (request, body, response) => {
      const current = handlers[Math.min(next, handlers.length - 1)]!;
      next += 1;
      current(request, body, response);
    };
  };
  /** Closes the connection without an answer: a network error for the client. */
  const hangUp: Handler = (request) => request.socket.destroy();

  const transaction = (overrides: Record<string, unknown> = {}) => ({
    status: true,
    message: 'Verification successful',
    data: {
      id: 1,
      reference: 'ref-1',
      status: 'success',
      amount: 150_000,
      currency: 'NGN',
      paid_at: '2025-01-02T03:04:05.000Z',
      created_at: '2025-01-02T03:00:00.000Z',
      channel: 'card',
      gateway_response: 'Successful',
      customer: { email: 'a@example.com', customer_code: 'CUS_abc' },
      metadata: { userId: 'u-1', custom_fields: [] },
      ...overrides,
    },
  });
  const transfer = (overrides: Record<string, unknown> = {}) => ({
    status: true,
    message: 'Transfer has been queued',
    data: {
      reference: 'jit_0000000000000001',
      transfer_code: 'TRF_abc',
      status: 'pending',
      amount: 40_000,
      reason: 'float',
      ...overrides,
    },
  });
  const verifyOk = json(200, transaction());
  /** One page of List Transactions holding the transaction of `transaction()`. */
  const listOk = json(200, {
    status: true,
    message: 'Transactions retrieved',
    data: [transaction().data],
    meta: { total: 101, total_volume: 150_000, skipped: 50, perPage: 50, page: 2, pageCount: 3 },
  });
  const day = {
    from: new Date('2026-11-28T00:00:00.000Z'),
    to: new Date('2026-11-28T23:59:59.999Z'),
  };
  const transferRequest = {
    reference: 'jit_0000000000000001',
    amountKobo: 40_000n,
    recipientCode: 'RCP_x',
    reason: 'float',
  };

  it("sends Paystack's bearer header, methods, paths and bodies, and reads each answer", async () => {
    const expectAuth = () => {
      const last = received.at(-1)!;
      assert.equal(last.headers.authorization, 'Bearer sk_test_secret_1');
      assert.equal(last.headers.accept, 'application/json');
      return last;
    };

    handler = json(200, {
      status: true,
      message: 'Authorization URL created',
      data: {
        authorization_url: 'https://checkout.paystack.com/abc',
        access_code: 'abc',
        reference: 'ref-1',
      },
    });
    assert.deepEqual(
      await client().initializeTransaction({
        reference: 'ref-1',
        amountKobo: 150_000n,
        email: 'a@example.com',
        callbackUrl: 'https://app.example.com/done',
        metadata: { userId: 'u-1' },
      }),
      { authorizationUrl: 'https://checkout.paystack.com/abc', accessCode: 'abc', reference: 'ref-1' },
    );
    let request = expectAuth();
    assert.equal(request.method, 'POST');
    assert.equal(request.url, '/transaction/initialize');
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body), {
      email: 'a@example.com',
      amount: 150_000,
      currency: 'NGN',
      reference: 'ref-1',
      callback_url: 'https://app.example.com/done',
      metadata: { userId: 'u-1' },
    });

    handler = verifyOk;
    assert.deepEqual(await client().verifyTransaction('ref-1'), {
      id: 1,
      reference: 'ref-1',
      status: 'success',
      amountKobo: 150_000n,
      currency: 'NGN',
      paidAt: new Date('2025-01-02T03:04:05.000Z'),
      channel: 'card',
      customerEmail: 'a@example.com',
      customerCode: 'CUS_abc',
      gatewayResponse: 'Successful',
      receiverAccountNumber: null,
      createdAt: new Date('2025-01-02T03:00:00.000Z'),
      metadata: { userId: 'u-1' },
    });
    request = expectAuth();
    assert.equal(request.method, 'GET');
    assert.equal(request.url, '/transaction/verify/ref-1');
    assert.equal(request.body, '');

    handler = json(200, {
      status: true,
      message: 'Customer created',
      data: { customer_code: 'CUS_new', email: 'a@example.com' },
    });
    assert.deepEqual(
      await client().createCustomer({
        email: 'a@example.com',
        firstName: 'Ada',
        lastName: 'Obi',
        phone: '08031234567',
      }),
      { customerCode: 'CUS_new' },
    );
    request = expectAuth();
    assert.equal(request.url, '/customer');
    assert.deepEqual(JSON.parse(request.body), {
      email: 'a@example.com',
      first_name: 'Ada',
      last_name: 'Obi',
      phone: '08031234567',
    });

    handler = json(200, {
      status: true,
      message: 'ok',
      data: {
        account_number: '7000000001',
        account_name: ' BILLRAIL/OBI ADA ',
        bank: { name: 'Wema Bank', slug: 'wema-bank', id: 20 },
        customer: { customer_code: 'CUS_new' },
      },
    });
    assert.deepEqual(
      await client().createDedicatedAccount({ customerCode: 'CUS_new', preferredBank: 'wema-bank' }),
      {
        accountNumber: '7000000001',
        accountName: 'BILLRAIL/OBI ADA',
        bankName: 'Wema Bank',
        providerSlug: 'wema-bank',
        customerCode: 'CUS_new',
      },
    );
    request = expectAuth();
    assert.equal(request.url, '/dedicated_account');
    assert.deepEqual(JSON.parse(request.body), { customer: 'CUS_new', preferred_bank: 'wema-bank' });

    handler = json(200, {
      status: true,
      message: 'ok',
      data: { account_number: '0123456789', account_name: 'OBI ADA', bank_id: 9 },
    });
    assert.deepEqual(await client().resolveAccount({ accountNumber: '0123456789', bankCode: '058' }), {
      accountNumber: '0123456789',
      accountName: 'OBI ADA',
    });
    request = expectAuth();
    assert.equal(request.method, 'GET');
    assert.equal(request.url, '/bank/resolve?account_number=0123456789&bank_code=058');

    handler = json(201, { status: true, message: 'ok', data: { recipient_code: 'RCP_1' } });
    assert.deepEqual(
      await client().createTransferRecipient({
        name: 'Vendor',
        accountNumber: '0123456789',
        bankCode: '058',
      }),
      { recipientCode: 'RCP_1' },
    );
    request = expectAuth();
    assert.equal(request.url, '/transferrecipient');
    assert.deepEqual(JSON.parse(request.body), {
      type: 'nuban',
      name: 'Vendor',
      account_number: '0123456789',
      bank_code: '058',
      currency: 'NGN',
    });

    handler = json(200, transfer());
    assert.deepEqual(await client().initiateTransfer(transferRequest), {
      reference: 'jit_0000000000000001',
      transferCode: 'TRF_abc',
      status: 'pending',
      amountKobo: 40_000n,
      reason: 'float',
    });
    request = expectAuth();
    assert.equal(request.url, '/transfer');
    assert.deepEqual(JSON.parse(request.body), {
      source: 'balance',
      amount: 40_000,
      recipient: 'RCP_x',
      reference: 'jit_0000000000000001',
      reason: 'float',
      currency: 'NGN',
    });

    handler = json(200, transfer({ status: 'reversed', reason: null }));
    assert.deepEqual(await client().verifyTransfer('jit_0000000000000001'), {
      reference: 'jit_0000000000000001',
      transferCode: 'TRF_abc',
      status: 'reversed',
      amountKobo: 40_000n,
      reason: null,
    });
    request = expectAuth();
    assert.equal(request.method, 'GET');
    assert.equal(request.url, '/transfer/verify/jit_0000000000000001');

    handler = json(200, {
      status: true,
      message: 'Balances retrieved',
      data: [
        { currency: 'GHS', balance: 5 },
        { currency: 'NGN', balance: 9_007_199_254_740_991 },
      ],
    });
    assert.deepEqual(await client().balance(), { balanceKobo: 9_007_199_254_740_991n });
    request = expectAuth();
    assert.equal(request.url, '/balance');
    assert.equal(received.length, 9, 'one request per call');
  });

  it('puts a reference into the path percent-encoded', async () => {
    handler = json(200, transaction({ reference: 'a=b.c' }));
    assert.equal((await client().verifyTransaction('a=b.c'))?.reference, 'a=b.c');
    assert.equal(received[0]?.url, '/transaction/verify/a%3Db.c');
  });

  it('sends the largest exact amount as that integer, and refuses larger or non-positive ones locally', async () => {
    handler = json(200, {
      status: true,
      message: 'ok',
      data: { authorization_url: 'https://checkout.paystack.com/x', access_code: 'x', reference: 'big' },
    });
    await client().initializeTransaction({
      reference: 'big',
      amountKobo: 9_007_199_254_740_991n,
      email: 'a@example.com',
    });
    assert.match(received[0]!.body, /"amount":9007199254740991,/);

    received.length = 0;
    for (const amountKobo of [9_007_199_254_740_992n, 0n, -100n]) {
      await assertProviderError(
        client().initializeTransaction({ reference: 'big', amountKobo, email: 'a@example.com' }),
        {
          definite: true,
          httpStatus: null,
          message: /refused locally/,
        },
      );
      await assertProviderError(client().initiateTransfer({ ...transferRequest, amountKobo }), {
        definite: true,
        message: /refused locally/,
      });
    }
    await assertProviderError(client().verifyTransaction(''), {
      definite: true,
      message: /reference is empty/,
    });
    assert.equal(received.length, 0, 'nothing was sent');
  });

  it('lists with a status and a channel only when asked for them', async () => {
    handler = listOk;
    const page = await client().listTransactions({ ...day, page: 2, perPage: 50 });
    assert.equal(page.pageCount, 3);
    assert.deepEqual(
      page.transactions.map((t) => [t.id, t.reference, t.amountKobo]),
      [[1, 'ref-1', 150_000n]],
    );
    const query = () => {
      const url = new URL(received.at(-1)!.url, 'http://provider.invalid');
      assert.equal(url.pathname, '/transaction');
      return Object.fromEntries(url.searchParams);
    };
    const dayQuery = { from: '2026-11-28T00:00:00.000Z', to: '2026-11-28T23:59:59.999Z' };
    assert.deepEqual(query(), { ...dayQuery, page: '2', per_page: '50' });
    await client().listTransactions({
      ...day,
      status: 'success',
      channel: 'dedicated_nuban',
      page: 1,
      perPage: 100,
    });
    assert.deepEqual(query(), {
      ...dayQuery,
      status: 'success',
      channel: 'dedicated_nuban',
      page: '1',
      per_page: '100',
    });
  });

  it('fetches a transaction by its numeric id: null when unknown, refused locally when no id', async () => {
    handler = json(200, transaction({ id: 4_099_260_516 }));
    const fetched = await client().fetchTransaction(4_099_260_516);
    assert.equal(fetched?.id, 4_099_260_516);
    assert.equal(fetched?.reference, 'ref-1');
    assert.equal(received.at(-1)?.method, 'GET');
    assert.equal(received.at(-1)?.url, '/transaction/4099260516');
    handler = json(200, transaction({ id: 7 }));
    await assertProviderError(client().fetchTransaction(8), {
      definite: false,
      message: /answered for a different transaction/,
    });
    handler = json(404, { status: false, message: 'Transaction not found' });
    assert.equal(await client().fetchTransaction(8), null);
    received.length = 0;
    for (const id of [0, -1, 1.5, Number.NaN, Number.MAX_SAFE_INTEGER + 1]) {
      await assertProviderError(client().fetchTransaction(id), {
        definite: true,
        message: /refused locally: .* is not a transaction id/,
      });
    }
    assert.equal(received.length, 0, 'nothing was sent');
  });

  // Paystack keeps what initialize was sent: an object, or its JSON text; verify answers "" for none.
  const metadataForms: Array<[label: string, metadata: unknown, read: Record<string, string>]> = [
    [
      'an object (string values only)',
      { userId: 'u-1', attempt: 2, nested: { a: 'b' }, custom_fields: [] },
      { userId: 'u-1' },
    ],
    ['"" (none)', '', {}],
    ['null', null, {}],
    ['absent', undefined, {}],
    ['the JSON text of an object', '{"userId":"u-2","note":"x","n":3}', { userId: 'u-2', note: 'x' }],
    ['text that is not JSON', 'userId=u-3', {}],
    ['the JSON text of a list', '["u-3"]', {}],
    ['a number', 7, {}],
  ];
  for (const [label, metadata, read] of metadataForms) {
    it(`reads metadata given as ${label}`, async () => {
      handler = json(200, transaction({ metadata }));
      assert.deepEqual((await client().verifyTransaction('ref-1'))?.metadata, read);
    });
  }

  it('reads "" as no payment time, and either spelling of the creation time', async () => {
    handler = json(
      200,
      transaction({
        status: 'abandoned',
        paid_at: '',
        paidAt: '',
        created_at: undefined,
        createdAt: '2025-01-02T03:00:00.000Z',
      }),
    );
    const unpaid = await client().verifyTransaction('ref-1');
    assert.equal(unpaid?.paidAt, null);
    assert.deepEqual(unpaid?.createdAt, new Date('2025-01-02T03:00:00.000Z'));
    handler = json(200, transaction({ created_at: undefined }));
    await assertProviderError(client().verifyTransaction('ref-1'), {
      definite: false,
      message: /unexpected body \(at data\.created_at\)/,
    });
  });

  it('answers null on a 404 with status:false for verify, transfer verify and resolve', async () => {
    handler = json(404, { status: false, message: 'Transaction reference not found' });
    assert.equal(await client().verifyTransaction('ref-x'), null);
    assert.equal(await client().verifyTransfer('jit_0000000000000009'), null);
    assert.equal(await client().resolveAccount({ accountNumber: '0123456789', bankCode: '058' }), null);
    assert.equal(received.length, 3, 'a 404 is an answer: no retry');
  });

  it('fails definitely on a 404 with status:false for a POST (the provider refused)', async () => {
    handler = json(404, { status: false, message: 'Customer not found' });
    await assertProviderError(
      client().createDedicatedAccount({ customerCode: 'CUS_x', preferredBank: 'test-bank' }),
      {
        definite: true,
        httpStatus: 404,
        message: /refused the request \(404\): Customer not found/,
      },
    );
  });

  for (const [status, message] of [
    [400, 'Invalid Amount Sent'],
    [401, 'Invalid key'],
    [403, 'Forbidden'],
    [422, 'Unknown bank code: 000'],
  ] as const) {
    it(`fails definitely on a ${status} with status:false, after one request`, async () => {
      handler = json(status, { status: false, message });
      await assertProviderError(client().initiateTransfer(transferRequest), {
        definite: true,
        httpStatus: status,
        message: new RegExp(`\\(${status}\\): ${message}`),
      });
      await assertProviderError(client().balance(), {
        definite: true,
        httpStatus: status,
        message: new RegExp(message),
      });
      assert.equal(received.length, 2, 'a refusal is not retried, not even a GET');
    });
  }

  it('times out on a provider that never answers (indefinite), without a retry of the GET', async () => {
    handler = () => {}; // holds the request open; closeAllConnections ends it
    await assertProviderError(client(200).verifyTransaction('ref-1'), {
      definite: false,
      httpStatus: null,
      message: /did not answer within 200 ms/,
    });
    await assertProviderError(client(200).initiateTransfer(transferRequest), {
      definite: false,
      message: /did not answer within 200 ms/,
    });
    assert.equal(received.length, 2);
    server.closeAllConnections();
  });

  it('times out on a provider that sends headers and then stalls the body', async () => {
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"status":true,');
    };
    await assertProviderError(client(200).balance(), {
      definite: false,
      message: /did not answer within 200 ms/,
    });
    server.closeAllConnections();
  });

  it('reports a provider nobody listens on as unreachable (indefinite)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const unreachable = createPaystackClient({
      baseUrl: `http://127.0.0.1:${port}`,
      secretKey: 'sk_test_secret_1',
      timeoutMs: 2_000,
    });
    const error = await assertProviderError(unreachable.balance(), {
      definite: false,
      message: /is unreachable .*ECONNREFUSED/,
    });
    assert.ok(!error.message.includes('sk_test_secret_1'));
  });

  const indefiniteAnswers: Array<[string, Handler, RegExp]> = [
    ['500', json(500, { status: false, message: 'boom' }), /failed upstream \(500\)/],
    ['503 with an HTML page', raw(503, '<h1>down</h1>', 'text/html'), /failed upstream \(503\)/],
    ['429', json(429, { status: false, message: 'slow down' }), /rate limiting us \(429\)/],
    [
      'a 400 without the envelope',
      raw(400, '<h1>Bad Request</h1>', 'text/html'),
      /400 without the provider's envelope/,
    ],
    [
      'a 404 without the envelope',
      raw(404, 'Not Found', 'text/plain'),
      /404 without the provider's envelope/,
    ],
    [
      'a redirect',
      (_request, _body, response) => {
        response.writeHead(302, { location: '/elsewhere' }).end();
      },
      /unreachable/,
    ],
    ['malformed JSON', raw(200, '{"status": true, "data": {'), /not JSON/],
    ['an empty 200', raw(200, ''), /not JSON/],
    [
      'a 200 with status:false',
      json(200, { status: false, message: 'hmm' }),
      /unexpected body \(at status, data\)/,
    ],
    ['no data', json(200, { status: true, message: 'ok' }), /unexpected body \(at data\)/],
    [
      'an amount as a string',
      json(200, transaction({ amount: '150000' })),
      /unexpected body \(at data\.amount\)/,
    ],
    [
      'a fractional amount',
      json(200, transaction({ amount: 1500.5 })),
      /unexpected body \(at data\.amount\)/,
    ],
    ['a negative amount', json(200, transaction({ amount: -1 })), /unexpected body \(at data\.amount\)/],
    [
      'an amount beyond 2^53 (JSON cannot carry it exactly)',
      raw(200, JSON.stringify(transaction()).replace('150000', '9007199254740993')),
      /unexpected body \(at data\.amount\)/,
    ],
    [
      'an unknown status',
      json(200, transaction({ status: 'settled' })),
      /unexpected body \(at data\.status\)/,
    ],
    ['a paid_at that is no timestamp', json(200, transaction({ paid_at: 'yesterday' })), /at data\.paid_at/],
    ['somebody else’s transaction', json(200, transaction({ reference: 'ref-2' })), /different reference/],
  ];
  for (const [label, respond, message] of indefiniteAnswers) {
    it(`fails indefinitely on ${label}`, async () => {
      handler = respond;
      await assertProviderError(client().verifyTransaction('ref-1'), { definite: false, message });
    });
  }

  it('fails indefinitely when a transfer answer is about another reference or amount, or has no NGN balance', async () => {
    handler = json(200, transfer({ reference: 'jit_other_reference_01' }));
    await assertProviderError(client().initiateTransfer(transferRequest), {
      definite: false,
      message: /different reference/,
    });
    handler = json(200, transfer({ amount: 40_001 }));
    await assertProviderError(client().initiateTransfer(transferRequest), {
      definite: false,
      message: /different amount/,
    });
    handler = json(200, transfer({ status: 'queued' }));
    await assertProviderError(client().verifyTransfer('jit_0000000000000001'), {
      definite: false,
      message: /data\.status/,
    });
    handler = json(200, { status: true, message: 'ok', data: [{ currency: 'GHS', balance: 1 }] });
    await assertProviderError(client().balance(), { definite: false, message: /0 NGN balances/ });
    handler = json(200, {
      status: true,
      message: 'ok',
      data: {
        account_number: '7000000001',
        account_name: 'X',
        bank: { name: 'B', slug: 'b' },
        customer: { customer_code: 'CUS_other' },
      },
    });
    await assertProviderError(
      client().createDedicatedAccount({ customerCode: 'CUS_new', preferredBank: 'b' }),
      {
        definite: false,
        message: /different customer/,
      },
    );
  });

  describe('retries', () => {
    const getCalls: Array<[string, (c: PaymentProvider) => Promise<unknown>, Handler]> = [
      ['verify transaction', (c) => c.verifyTransaction('ref-1'), verifyOk],
      ['fetch transaction', (c) => c.fetchTransaction(1), verifyOk],
      ['list transactions', (c) => c.listTransactions({ ...day, page: 2, perPage: 50 }), listOk],
      ['verify transfer', (c) => c.verifyTransfer('jit_0000000000000001'), json(200, transfer())],
      [
        'resolve',
        (c) => c.resolveAccount({ accountNumber: '0123456789', bankCode: '058' }),
        json(200, {
          status: true,
          message: 'ok',
          data: { account_number: '0123456789', account_name: 'A B', bank_id: 1 },
        }),
      ],
      [
        'balance',
        (c) => c.balance(),
        json(200, { status: true, message: 'ok', data: [{ currency: 'NGN', balance: 1 }] }),
      ],
    ];
    for (const [label, call, success] of getCalls) {
      it(`repeats a GET (${label}) once after a 5xx, and answers`, async () => {
        handler = inTurn(json(502, { message: 'bad gateway' }), success);
        assert.ok(await call(client()));
        assert.equal(received.length, 2);
        assert.ok(received.every((r) => r.method === 'GET' && r.url === received[0]!.url));
      });

      it(`repeats a GET (${label}) once after a network error, and answers`, async () => {
        handler = inTurn(hangUp, success);
        assert.ok(await call(client()));
        assert.equal(received.length, 2);
      });

      it(`gives up on a GET (${label}) after two 5xx (indefinite)`, async () => {
        handler = json(500, { status: false, message: 'boom' });
        await assertProviderError(call(client()), {
          definite: false,
          httpStatus: 500,
          message: /failed upstream \(500\)/,
        });
        assert.equal(received.length, 2);
      });
    }

    const postCalls: Array<[string, (c: PaymentProvider) => Promise<unknown>]> = [
      [
        'initialize',
        (c) => c.initializeTransaction({ reference: 'ref-1', amountKobo: 100n, email: 'a@example.com' }),
      ],
      [
        'create customer',
        (c) => c.createCustomer({ email: 'a@example.com', firstName: 'A', lastName: 'B', phone: '0803' }),
      ],
      [
        'create dedicated account',
        (c) => c.createDedicatedAccount({ customerCode: 'CUS_x', preferredBank: 'test-bank' }),
      ],
      [
        'create recipient',
        (c) => c.createTransferRecipient({ name: 'V', accountNumber: '0123456789', bankCode: '058' }),
      ],
      ['initiate transfer', (c) => c.initiateTransfer(transferRequest)],
    ];
    for (const [label, call] of postCalls) {
      it(`never repeats a POST (${label}): one request on a 5xx, one on a network error`, async () => {
        handler = json(503, { status: false, message: 'unavailable' });
        await assertProviderError(call(client()), {
          definite: false,
          httpStatus: 503,
          message: /failed upstream/,
        });
        assert.equal(received.length, 1);
        handler = hangUp;
        await assertProviderError(call(client()), {
          definite: false,
          httpStatus: null,
          message: /unreachable/,
        });
        assert.equal(received.length, 2);
      });
    }

    it('does not repeat a GET after a 429', async () => {
      handler = json(429, { status: false, message: 'slow down' });
      await assertProviderError(client().verifyTransaction('ref-1'), {
        definite: false,
        httpStatus: 429,
        message: /429/,
      });
      assert.equal(received.length, 1);
    });
  });
});
