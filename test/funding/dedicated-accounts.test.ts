import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import {
  dedicatedReconcileDefaults,
  dedicatedScanCursor,
  reconcileBankDeposits,
} from '../../src/funding/reconcile.ts';
import { paymentWebhookSweepJob } from '../../src/funding/webhook-processing.ts';
import { PaymentProviderError } from '../../src/providers/payments/payment-provider.ts';

import { onPostgres } from '../helpers/database.ts';
import { createWorld, ok, post, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { expectError, userAtTier } from '../kyc/kyc-support.ts';
import { deliveryOf, sandboxPayments } from '../payments/helpers.ts';
import {
  assertLedgerOk,
  BOUNDED,
  fundingDeps,
  providerChargeSuccess,
  sendWebhook,
  setWebhookMode,
  walletKobo,
} from './support.ts';

// Dedicated virtual accounts (SPEC.md item 12, "Authentication" 4, "Events"; API.md 6 and 8): a
// permanent account per Tier-2 user, created once at the provider whatever the concurrency, and bank
// transfers into it credited exactly once per charge reference. Processing of a delivered webhook is
// awaited by running its job's handler, which waits for a run already under way in the route.

type Account = { accountNumber: string; accountName: string; bankName: string };

const requestAccount = (world: World, user: SignedIn) =>
  post<Account>(world, 'requestDedicatedAccount', {}, { token: user.accessToken });

const placeholderEmailOf = (userId: string) => `${userId}@users.billrail.invalid`;

/** The provider's customers and dedicated accounts for a user (by the email the service gave it). */
function providerRecords(world: World, userId: string) {
  const state = sandboxPayments(world);
  const customers = [...state.customers.values()].filter(
    (c) => c.email.toLowerCase() === placeholderEmailOf(userId).toLowerCase(),
  );
  const codes = new Set(customers.map((c) => c.customerCode));
  const accounts = [...state.dedicatedAccounts.values()].filter((a) => codes.has(a.customerCode));
  return { customers, accounts };
}

async function accountRows(world: World, userId: string) {
  return world.ctx.db.selectFrom('dedicated_accounts').selectAll().where('user_id', '=', userId).execute();
}

/** Pays into an account at the sandbox (POST /__sandbox/bank-transfer); returns the charge reference. */
async function bankTransfer(world: World, accountNumber: string, amount: number): Promise<string> {
  const response = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ accountNumber, amount }),
  });
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as { data: { reference: string } };
  return data.reference;
}

/** The stored events of a charge reference, each processed now (a run under way is waited for). */
async function processedByReference(world: World, reference: string) {
  const ids = await world.ctx.db
    .selectFrom('payment_events')
    .select('id')
    .where('reference', '=', reference)
    .execute();
  assert.ok(ids.length > 0, 'the charge was stored');
  await world.ctx.jobs.runNow(paymentWebhookSweepJob);
  const rows = await world.ctx.db
    .selectFrom('payment_events')
    .select(['id', 'outcome', 'processed_at'])
    .where('reference', '=', reference)
    .orderBy('received_at')
    .execute();
  for (const row of rows) assert.notEqual(row.processed_at, null, 'every event was processed');
  return rows;
}

async function dvaPostings(world: World, reference: string): Promise<number> {
  const rows = await world.ctx.db
    .selectFrom('ledger_transactions')
    .select('id')
    .where('reference', '=', `dva:${reference}`)
    .execute();
  return rows.length;
}

async function bankDepositCreditedEvents(world: World, reference: string) {
  const { rows } = await sql<{ data: { userId: string; amountKobo: string; accountNumber: string } }>`
    select data from pgboss.job
    where name = 'domain-event' and data->>'type' = 'funding.bank_deposit_credited' and data->>'reference' = ${reference}
  `.execute(world.ctx.db);
  return rows.map((r) => r.data);
}

describe(`dedicated virtual accounts (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  /** Provider calls made by the service, by email (createCustomer) and customer code (createDedicatedAccount). */
  const customerCalls: string[] = [];
  const accountCalls: string[] = [];

  before(async () => {
    world = await createWorld();
    const payments = world.ctx.payments;
    const createCustomer = payments.createCustomer.bind(payments);
    const createDedicatedAccount = payments.createDedicatedAccount.bind(payments);
    payments.createCustomer = async (request) => {
      customerCalls.push(request.email);
      return createCustomer(request);
    };
    payments.createDedicatedAccount = async (request) => {
      accountCalls.push(request.customerCode);
      return createDedicatedAccount(request);
    };
  });
  after(() => world.close());
  afterEach(() => assertLedgerOk(world));

  describe('requestDedicatedAccount', () => {
    for (const tier of [0, 1] as const) {
      it(
        `refuses a tier-${tier} user with 403 KYC_TIER_REQUIRED (requiredTier 2), creating nothing`,
        BOUNDED,
        async () => {
          const user = await userAtTier(world, tier);
          const error = expectError(await requestAccount(world, user), 403, 'KYC_TIER_REQUIRED');
          assert.equal((error.details as { requiredTier: number }).requiredTier, 2);
          assert.deepEqual(await accountRows(world, user.userId), []);
          assert.equal(providerRecords(world, user.userId).customers.length, 0);
        },
      );
    }

    it(
      'gives a tier-2 user an account in the NIN name, and the same one on every call',
      BOUNDED,
      async () => {
        const user = await userAtTier(world, 2);
        const first = ok(await requestAccount(world, user));
        assert.match(first.accountNumber, /^\d{10}$/);
        assert.equal(first.accountName, 'BILLRAIL/OGUNLESI ADEBAYO');
        assert.equal(first.bankName, 'Test Bank');
        const second = ok(await requestAccount(world, user));
        assert.deepEqual(second, first);

        const rows = await accountRows(world, user.userId);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]?.account_number, first.accountNumber);
        assert.equal(rows[0]?.provider_slug, 'test-bank');
        const provider = providerRecords(world, user.userId);
        assert.equal(provider.customers.length, 1);
        assert.equal(provider.accounts.length, 1);
        // The customer carries the NIN name and the account's phone, as Paystack requires.
        assert.equal(provider.customers[0]?.firstName?.toLowerCase(), 'adebayo');
        assert.equal(provider.customers[0]?.lastName?.toLowerCase(), 'ogunlesi');
        const { phone } = await world.ctx.db
          .selectFrom('users')
          .select('phone')
          .where('id', '=', user.userId)
          .executeTakeFirstOrThrow();
        assert.equal(provider.customers[0]?.phone, phone);
        assert.equal(rows[0]?.customer_code, provider.customers[0]?.customerCode);
        // The second call was answered from our row: the provider was asked once.
        assert.equal(customerCalls.filter((e) => e === placeholderEmailOf(user.userId)).length, 1);
      },
    );

    it(
      '10 concurrent calls of a fresh tier-2 user: one provider account, one row, identical answers',
      BOUNDED,
      async () => {
        const user = await userAtTier(world, 2);
        const answers = await Promise.all(Array.from({ length: 10 }, () => requestAccount(world, user)));
        const accounts = answers.map((a) => ok(a));
        for (const account of accounts) assert.deepEqual(account, accounts[0]);
        assert.equal((await accountRows(world, user.userId)).length, 1);
        const provider = providerRecords(world, user.userId);
        assert.equal(provider.customers.length, 1);
        assert.equal(provider.accounts.length, 1);
        assert.equal(provider.accounts[0]?.accountNumber, accounts[0]?.accountNumber);
        // Serialised per user: the provider was asked once, not ten times.
        assert.equal(customerCalls.filter((e) => e === placeholderEmailOf(user.userId)).length, 1);
        assert.equal(accountCalls.filter((c) => c === provider.customers[0]?.customerCode).length, 1);
      },
    );

    it('keeps the NIN name: after Tier 2 the profile cannot be renamed (409 CONFLICT)', BOUNDED, async () => {
      const user = await userAtTier(world, 2);
      expectError(
        await post(world, 'updateProfile', { firstName: 'Chidi' }, { token: user.accessToken }),
        409,
        'CONFLICT',
      );
      assert.equal(ok(await requestAccount(world, user)).accountName, 'BILLRAIL/OGUNLESI ADEBAYO');
    });

    it(
      'answers 502 UPSTREAM_UNAVAILABLE and stores nothing when the provider cannot be reached',
      BOUNDED,
      async () => {
        const user = await userAtTier(world, 2);
        const payments = world.ctx.payments;
        const real = payments.createDedicatedAccount;
        payments.createDedicatedAccount = async () => {
          throw new PaymentProviderError('create dedicated account: timed out', { definite: false });
        };
        try {
          expectError(await requestAccount(world, user), 502, 'UPSTREAM_UNAVAILABLE');
        } finally {
          payments.createDedicatedAccount = real;
        }
        assert.deepEqual(await accountRows(world, user.userId), []);
        assert.match(ok(await requestAccount(world, user)).accountNumber, /^\d{10}$/);
      },
    );

    it('is safe to retry when the provider made the account but our write failed', BOUNDED, async () => {
      const user = await userAtTier(world, 2);
      const payments = world.ctx.payments;
      const real = payments.createDedicatedAccount;
      payments.createDedicatedAccount = async (request) => {
        await real(request);
        throw new Error('simulated crash after the provider answered');
      };
      try {
        expectError(await requestAccount(world, user), 500, 'INTERNAL');
      } finally {
        payments.createDedicatedAccount = real;
      }
      assert.deepEqual(await accountRows(world, user.userId), []);
      assert.equal(providerRecords(world, user.userId).accounts.length, 1);
      const account = ok(await requestAccount(world, user));
      const provider = providerRecords(world, user.userId);
      assert.equal(provider.customers.length, 1);
      assert.equal(provider.accounts.length, 1, 'the retry got the same provider account');
      assert.equal(account.accountNumber, provider.accounts[0]?.accountNumber);
    });
  });

  describe('bank transfers into a dedicated account', () => {
    let user: SignedIn;
    let account: Account;
    before(async () => {
      user = await userAtTier(world, 2);
      account = ok(await requestAccount(world, user));
    });

    it(
      'the sandbox charge.success credits the wallet ₦2,500.00 exactly once; a redelivery changes nothing',
      BOUNDED,
      async () => {
        const before = await walletKobo(world, user.userId);
        const reference = await bankTransfer(world, account.accountNumber, 2500);
        const delivery = deliveryOf(world, 'charge.success', reference);
        await delivery.settled;
        assert.equal(delivery.status, 'delivered');
        const events = await processedByReference(world, reference);
        assert.deepEqual(
          events.map((e) => e.outcome),
          ['credited'],
        );
        assert.equal(await walletKobo(world, user.userId), before + 250_000n);
        assert.equal(await dvaPostings(world, reference), 1);
        const published = await bankDepositCreditedEvents(world, reference);
        assert.equal(published.length, 1);
        assert.equal(published[0]?.userId, user.userId);
        assert.equal(published[0]?.amountKobo, '250000');
        assert.equal(published[0]?.accountNumber, account.accountNumber);
        await assertLedgerOk(world);

        // The provider sends the same charge again: the same bytes, and the same charge re-serialised.
        const body = await providerChargeSuccess(world, reference);
        assert.equal((await sendWebhook(world, body)).status, 200);
        const respaced = JSON.stringify(JSON.parse(body), null, 1);
        assert.equal((await sendWebhook(world, respaced)).status, 200);
        const after = await processedByReference(world, reference);
        assert.ok(after.length >= 2, 'the re-serialised delivery is a distinct event');
        assert.deepEqual(
          after.slice(1).map((e) => e.outcome),
          after.slice(1).map(() => 'already_credited'),
        );
        assert.equal(await walletKobo(world, user.userId), before + 250_000n);
        assert.equal(await dvaPostings(world, reference), 1);
        assert.equal((await bankDepositCreditedEvents(world, reference)).length, 1);
      },
    );

    it(
      'a transfer whose webhook was lost is credited once by reconciliation; the late webhook changes nothing',
      BOUNDED,
      async () => {
        const deps = fundingDeps(world);
        // Earlier tests' transfers are credited already: a first scan settles them and sets the cursor.
        await reconcileBankDeposits(deps, dedicatedReconcileDefaults);
        const before = await walletKobo(world, user.userId);
        await setWebhookMode(world, 'drop');
        let reference: string;
        try {
          reference = await bankTransfer(world, account.accountNumber, 1234.56);
        } finally {
          await setWebhookMode(world, 'deliver');
        }
        assert.equal(deliveryOf(world, 'charge.success', reference).status, 'dropped');
        assert.equal(await walletKobo(world, user.userId), before, 'no webhook, no credit yet');

        // Pages of one, so the scan must walk every page the window holds.
        const counts = await reconcileBankDeposits(deps, { ...dedicatedReconcileDefaults, perPage: 1 });
        assert.equal(counts.credited, 1);
        assert.equal(counts.errors, 0);
        assert.equal(await walletKobo(world, user.userId), before + 123_456n);
        assert.equal(await dvaPostings(world, reference), 1);
        assert.equal((await bankDepositCreditedEvents(world, reference)).length, 1);

        // Run again at once: it is inside the overlap, seen again, and not credited again.
        const again = await reconcileBankDeposits(deps, dedicatedReconcileDefaults);
        assert.equal(again.credited, 0);
        assert.ok(again.alreadyCredited >= 1);

        // The provider's webhook arrives after all.
        assert.equal((await sendWebhook(world, await providerChargeSuccess(world, reference))).status, 200);
        const events = await processedByReference(world, reference);
        assert.deepEqual(
          events.map((e) => e.outcome),
          ['already_credited'],
        );
        assert.equal(await walletKobo(world, user.userId), before + 123_456n);
      },
    );

    it(
      'a provider that cannot list transactions leaves the scan where it was, to be repeated',
      BOUNDED,
      async () => {
        const failing = {
          ...world.ctx.payments,
          listTransactions: async () => {
            throw new PaymentProviderError('list transactions did not answer', { definite: false });
          },
        };
        const deps = { ...fundingDeps(world), payments: failing };
        const cursor = () =>
          world.ctx.db
            .selectFrom('reconcile_cursors')
            .select('position')
            .where('name', '=', dedicatedScanCursor)
            .executeTakeFirst();
        // A complete scan first, so that there is a cursor to keep.
        await reconcileBankDeposits({ ...deps, payments: world.ctx.payments }, dedicatedReconcileDefaults);
        const before = await cursor();
        assert.ok(before !== undefined, 'a complete scan set the cursor');
        world.ctx.sandboxClock!.advance(3600);
        const counts = await reconcileBankDeposits(deps, dedicatedReconcileDefaults);
        assert.equal(counts.errors, 1);
        assert.deepEqual(await cursor(), before, 'the cursor did not move');
      },
    );

    it(
      '20 concurrent deliveries of one charge (10 identical, 10 re-serialised) credit once',
      BOUNDED,
      async () => {
        const before = await walletKobo(world, user.userId);
        await setWebhookMode(world, 'drop');
        let reference: string;
        try {
          reference = await bankTransfer(world, account.accountNumber, 1234.56);
        } finally {
          await setWebhookMode(world, 'deliver');
        }
        assert.equal(await walletKobo(world, user.userId), before, 'nothing arrived while dropped');
        const body = await providerChargeSuccess(world, reference);
        const bodies = [
          ...Array.from({ length: 10 }, () => body),
          ...Array.from({ length: 10 }, (_, i) => JSON.stringify(JSON.parse(body), null, i + 1)),
        ];
        const answers = await Promise.all(bodies.map((b) => sendWebhook(world, b)));
        for (const answer of answers) assert.equal(answer.status, 200);
        const events = await processedByReference(world, reference);
        assert.equal(events.length, 11, 'identical bytes are stored once');
        assert.equal(new Set(events.map((e) => e.id)).size, 11);
        const outcomes = events.map((e) => e.outcome);
        assert.equal(outcomes.filter((o) => o === 'credited').length, 1, JSON.stringify(outcomes));
        assert.equal(outcomes.filter((o) => o === 'already_credited').length, 10, JSON.stringify(outcomes));
        assert.equal(await walletKobo(world, user.userId), before + 123_456n);
        assert.equal(await dvaPostings(world, reference), 1);
        assert.equal((await bankDepositCreditedEvents(world, reference)).length, 1);
      },
    );

    it(
      'a transfer into an account that is not ours stays unknown_reference and credits nobody',
      BOUNDED,
      async () => {
        const other = await signIn(world);
        const reference = `dvatest${Date.now()}`;
        const body = JSON.stringify({
          event: 'charge.success',
          data: {
            reference,
            status: 'success',
            amount: 500_000,
            currency: 'NGN',
            channel: 'dedicated_nuban',
            authorization: { channel: 'dedicated_nuban', receiver_bank_account_number: '7000000001' },
            customer: { email: 'nobody@example.com', customer_code: 'CUS_notoursatall' },
          },
        });
        assert.equal((await sendWebhook(world, body)).status, 200);
        const events = await processedByReference(world, reference);
        assert.deepEqual(
          events.map((e) => e.outcome),
          ['unknown_reference'],
        );
        assert.equal(await dvaPostings(world, reference), 0);
        assert.equal(await walletKobo(world, other.userId), 0n);
      },
    );

    it(
      'a transfer charge without the receiving account is matched by its customer code, once',
      BOUNDED,
      async () => {
        const rows = await accountRows(world, user.userId);
        const before = await walletKobo(world, user.userId);
        const reference = `custtest${Date.now()}`;
        const body = JSON.stringify({
          event: 'charge.success',
          data: {
            reference,
            status: 'success',
            amount: 70_001,
            currency: 'NGN',
            channel: 'dedicated_nuban',
            authorization: { channel: 'dedicated_nuban' },
            customer: { email: placeholderEmailOf(user.userId), customer_code: rows[0]?.customer_code },
          },
        });
        assert.equal((await sendWebhook(world, body)).status, 200);
        assert.equal((await sendWebhook(world, `${body}\n`)).status, 200);
        const events = await processedByReference(world, reference);
        assert.deepEqual(events.map((e) => e.outcome).sort(), ['already_credited', 'credited']);
        assert.equal(await walletKobo(world, user.userId), before + 70_001n);
        assert.equal(await dvaPostings(world, reference), 1);
      },
    );

    it(
      'a checkout-channel charge carrying our customer code is not taken for a transfer',
      BOUNDED,
      async () => {
        const rows = await accountRows(world, user.userId);
        const before = await walletKobo(world, user.userId);
        const reference = `cardtest${Date.now()}`;
        const body = JSON.stringify({
          event: 'charge.success',
          data: {
            reference,
            status: 'success',
            amount: 500_000,
            currency: 'NGN',
            channel: 'card',
            customer: { email: placeholderEmailOf(user.userId), customer_code: rows[0]?.customer_code },
          },
        });
        assert.equal((await sendWebhook(world, body)).status, 200);
        const events = await processedByReference(world, reference);
        assert.deepEqual(
          events.map((e) => e.outcome),
          ['unknown_reference'],
        );
        assert.equal(await walletKobo(world, user.userId), before);
      },
    );
  });
});
