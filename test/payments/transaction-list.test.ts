import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { PaymentProvider, VerifiedTransaction } from '../../src/providers/payments/payment-provider.ts';
import { createIntent, setWebhookMode } from '../funding/support.ts';
import { createWorld, type SignedIn, signIn, type World } from '../helpers/world.ts';
import { checkout, deliveryOf, paystackBaseUrl, paystackClient, uniqueReference } from './helpers.ts';

// Paystack's List Transactions and Fetch Transaction as the daily reconciliation reads them (API.md
// 17.5, providers.md section 14), from the sandbox provider through the Paystack client: every payment
// the provider took, however it was made and whatever became of its webhook, with the amount in kobo,
// the metadata the service's top-up sent and the creation time; paged, and filtered by day.

type Made = { reference: string; label: string; amountKobo: bigint; status: string; channel: string };

/** The day (UTC) of a time, as Paystack's date-only `from` and `to` name it. */
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

describe('the sandbox provider lists and fetches every payment it took', () => {
  let world: World;
  let client: PaymentProvider;
  let user: SignedIn;
  /** The transactions made here, oldest first; `start` and `end` bound their creation times. */
  const made: Made[] = [];
  let start: Date;
  let end: Date;
  let accountNumber: string;

  before(async () => {
    world = await createWorld();
    client = paystackClient(world);
    user = await signIn(world);
    // Nothing made before this point shares a millisecond with what is made below.
    start = world.ctx.sandboxClock!.advance(1);

    // A top-up as the service starts it (its metadata names the user), paid at the checkout.
    const paid = await createIntent(world, user, 1_500);
    await checkout(paid.checkoutUrl, 'pay');
    made.push({
      reference: paid.reference,
      label: 'top-up paid',
      amountKobo: 150_000n,
      status: 'success',
      channel: 'card',
    });
    // One declined at the checkout, one left there unpaid.
    const declined = await createIntent(world, user, 2_000);
    await checkout(declined.checkoutUrl, 'decline');
    made.push({
      reference: declined.reference,
      label: 'top-up declined',
      amountKobo: 200_000n,
      status: 'failed',
      channel: 'card',
    });
    const abandoned = await createIntent(world, user, 250.5);
    made.push({
      reference: abandoned.reference,
      label: 'top-up abandoned',
      amountKobo: 25_050n,
      status: 'abandoned',
      channel: 'card',
    });
    // A bank transfer into a dedicated account.
    const { customerCode } = await client.createCustomer({
      email: 'list.ada@example.com',
      firstName: 'Ada',
      lastName: 'Obi',
      phone: '08031234567',
    });
    ({ accountNumber } = await client.createDedicatedAccount({ customerCode, preferredBank: 'test-bank' }));
    made.push({
      ...(await bankTransfer(world, accountNumber, 7_000)),
      label: 'bank transfer',
      amountKobo: 700_000n,
      status: 'success',
      channel: 'dedicated_nuban',
    });
    // A top-up paid, and a bank transfer made, while the sandbox dropped its webhooks: the service
    // never heard of them, which is what the reconciliation is for.
    const unheard = await createIntent(world, user, 3_000);
    await setWebhookMode(world, 'drop');
    try {
      await checkout(unheard.checkoutUrl, 'pay');
      made.push({
        reference: unheard.reference,
        label: 'top-up paid, webhook dropped',
        amountKobo: 300_000n,
        status: 'success',
        channel: 'card',
      });
      made.push({
        ...(await bankTransfer(world, accountNumber, 99.99)),
        label: 'bank transfer, webhook dropped',
        amountKobo: 9_999n,
        status: 'success',
        channel: 'dedicated_nuban',
      });
    } finally {
      await setWebhookMode(world, 'deliver');
    }
    assert.equal(deliveryOf(world, 'charge.success', unheard.reference).status, 'dropped');
    end = world.ctx.clock.now();
  });
  after(() => world?.close());

  /** Every page of the list between `start` and `end`, as the reconciliation reads it. */
  async function listAll(perPage: number): Promise<{ pages: VerifiedTransaction[][]; pageCount: number }> {
    const pages: VerifiedTransaction[][] = [];
    let pageCount = 1;
    for (let page = 1; page <= pageCount; page++) {
      const answer = await client.listTransactions({ from: start, to: end, page, perPage });
      pageCount = answer.pageCount;
      pages.push(answer.transactions);
    }
    return { pages, pageCount };
  }

  it('lists each payment once, newest first, with its amount in kobo, status, channel and creation time', async () => {
    const { pages } = await listAll(50);
    assert.equal(pages.length, 1);
    const listed = pages[0]!;
    assert.deepEqual(
      listed.map((t) => t.reference),
      made.map((m) => m.reference).reverse(),
    );
    for (const m of made) {
      const t = listed.find((l) => l.reference === m.reference)!;
      assert.deepEqual(
        [t.amountKobo, t.currency, t.status, t.channel],
        [m.amountKobo, 'NGN', m.status, m.channel],
        m.label,
      );
      assert.ok(
        t.createdAt >= start && t.createdAt <= end,
        `${m.label}: created ${t.createdAt.toISOString()}`,
      );
      assert.equal(t.paidAt === null, m.status !== 'success', m.label);
    }
  });

  it("carries the service's top-up metadata (the user) and the receiving account of a bank transfer", async () => {
    const listed = (await listAll(50)).pages.flat();
    for (const m of made) {
      const t = listed.find((l) => l.reference === m.reference)!;
      if (m.channel === 'card') {
        assert.deepEqual(t.metadata, { userId: user.userId }, m.label);
        assert.equal(t.receiverAccountNumber, null, m.label);
      } else {
        assert.equal(t.receiverAccountNumber, accountNumber, m.label);
        assert.equal(t.metadata.receiver_account_number, accountNumber, m.label);
      }
    }
  });

  it('lists one status and one channel when asked', async () => {
    const of = async (filter: {
      status?: 'success' | 'failed' | 'abandoned';
      channel?: 'card' | 'dedicated_nuban';
    }) =>
      (await client.listTransactions({ from: start, to: end, page: 1, perPage: 50, ...filter })).transactions
        .map((t) => t.reference)
        .sort();
    const expected = (keep: (m: Made) => boolean) =>
      made
        .filter(keep)
        .map((m) => m.reference)
        .sort();
    assert.deepEqual(
      await of({ status: 'success' }),
      expected((m) => m.status === 'success'),
    );
    assert.deepEqual(
      await of({ status: 'abandoned' }),
      expected((m) => m.status === 'abandoned'),
    );
    assert.deepEqual(
      await of({ channel: 'dedicated_nuban' }),
      expected((m) => m.channel === 'dedicated_nuban'),
    );
    assert.deepEqual(
      await of({ status: 'success', channel: 'card' }),
      expected((m) => m.status === 'success' && m.channel === 'card'),
    );
  });

  it('pages: perPage at a time, pageCount pages, every payment on exactly one of them', async () => {
    const { pages, pageCount } = await listAll(4);
    assert.equal(pageCount, 2);
    assert.deepEqual(
      pages.map((p) => p.length),
      [4, made.length - 4],
    );
    assert.deepEqual(
      pages.flat().map((t) => t.reference),
      made.map((m) => m.reference).reverse(),
    );
    const beyond = await client.listTransactions({ from: start, to: end, page: 3, perPage: 4 });
    assert.deepEqual(beyond, { transactions: [], pageCount: 2 });
  });

  it('fetches each payment by its id as verify reads it; an id it never gave is null', async () => {
    const listed = (await listAll(50)).pages.flat();
    for (const t of listed) {
      const fetched = await client.fetchTransaction(t.id);
      assert.deepEqual(fetched, await client.verifyTransaction(t.reference), t.reference);
      assert.deepEqual(fetched, t, t.reference);
    }
    assert.equal(await client.fetchTransaction(999_999_999), null);
    assert.equal(await client.fetchTransaction(1), null);
  });

  it('filters on the creation time: both ends included, and a date alone stands for its whole day (UTC)', async () => {
    const newest = (await client.listTransactions({ from: start, to: end, page: 1, perPage: 1 }))
      .transactions[0]!;
    const at = newest.createdAt;
    const only = await client.listTransactions({ from: at, to: at, page: 1, perPage: 50 });
    assert.ok(only.transactions.some((t) => t.reference === newest.reference));
    const before = await client.listTransactions({
      from: start,
      to: new Date(at.getTime() - 1),
      page: 1,
      perPage: 50,
    });
    assert.ok(!before.transactions.some((t) => t.reference === newest.reference));

    // One more payment a day later: each day's list holds that day's payments and no other's.
    world.ctx.sandboxClock!.advance(24 * 3600);
    // (The provider directly: the person's sign-in has expired by then.)
    const nextDay = await client.initializeTransaction({
      reference: uniqueReference('next-day'),
      amountKobo: 10_000n,
      email: 'list.ada@example.com',
    });
    const references = [...made.map((m) => m.reference), nextDay.reference];
    const createdOn = new Map<string, string>();
    for (const reference of references) {
      createdOn.set(reference, dayOf((await client.verifyTransaction(reference))!.createdAt));
    }
    const days = [...new Set(createdOn.values())];
    assert.ok(days.length >= 2, `days: ${days.join(', ')}`);
    for (const day of days) {
      const listed = await listByDay(world, day, day);
      assert.deepEqual(
        listed.filter((reference) => createdOn.has(reference)).sort(),
        references.filter((reference) => createdOn.get(reference) === day).sort(),
        day,
      );
    }
    // from alone, to alone.
    const lastDay = createdOn.get(nextDay.reference)!;
    assert.deepEqual(
      (await listByDay(world, lastDay, undefined)).filter((r) => createdOn.has(r)),
      [nextDay.reference],
    );
    assert.ok(!(await listByDay(world, undefined, dayOf(start))).includes(nextDay.reference));
  });

  it('refuses a date that does not exist or cannot be read (400)', async () => {
    for (const query of ['from=2026-02-30', 'to=2026-13-01', 'from=yesterday']) {
      const response = await fetch(`${paystackBaseUrl(world)}/transaction?${query}`, {
        headers: { authorization: `Bearer ${world.ctx.config.secrets.paymentSigning}` },
      });
      assert.equal(response.status, 400, query);
      assert.deepEqual(
        await response.json(),
        { status: false, message: 'Invalid date in from or to' },
        query,
      );
    }
  });
});

/** Money into a dedicated account from outside, through the sandbox's control; its reference. */
async function bankTransfer(
  world: World,
  accountNumber: string,
  naira: number,
): Promise<{ reference: string }> {
  const response = await fetch(`${world.baseUrl}/__sandbox/bank-transfer`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ accountNumber, amount: naira }),
  });
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as { data: { reference: string } };
  return { reference: data.reference };
}

/** The references GET /transaction lists with Paystack's date-only `from` and `to` (one page of 1000). */
async function listByDay(world: World, from: string | undefined, to: string | undefined): Promise<string[]> {
  const query = new URLSearchParams({ perPage: '1000' });
  if (from !== undefined) query.set('from', from);
  if (to !== undefined) query.set('to', to);
  const response = await fetch(`${paystackBaseUrl(world)}/transaction?${query}`, {
    headers: { authorization: `Bearer ${world.ctx.config.secrets.paymentSigning}` },
  });
  assert.equal(response.status, 200);
  const { data } = (await response.json()) as { data: Array<{ reference: string }> };
  return data.map((t) => t.reference);
}
