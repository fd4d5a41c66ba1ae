import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemAccounts } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import {
  InsufficientBalanceError,
  type Posting,
  type PostingRequest,
  post,
  postBatch,
  ReferenceConflictError,
  UnknownAccountError,
} from '../../src/ledger/postings.ts';
import {
  balanceOf,
  createUser,
  entriesOf,
  type LedgerDatabase,
  now,
  openLedgerDatabase,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

// postBatch: many postings in one transaction, each decided as post() would decide it in the order
// given. Its race with single postings proves something only on PostgreSQL (CI runs it there).

const { collectionsPool, vtuInFlight } = systemAccounts;

describe('ledger batch postings', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  const topUp = (userId: string, amount: bigint) =>
    post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(userId), amount), now());
  const batch = (requests: PostingRequest[]) =>
    ledger.db.transaction().execute((trx) => postBatch(trx, requests, now()));
  const outcome = (r: PromiseSettledResult<{ created: boolean }>) =>
    r.status === 'fulfilled' ? (r.value.created ? 'created' : 'repeated') : (r.reason as Error).name;

  /** A user with ₦100 less ₦10 already posted (`first`), and a ₦20 debit not posted yet (`fresh`). */
  async function postedOnce() {
    const user = await createUser(ledger.db);
    await topUp(user, 10_000n);
    const first = transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 1_000n, 'airtime');
    await post(ledger.db, first, now());
    const fresh = transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 2_000n, 'airtime');
    return { user, first, fresh };
  }

  it('decides each posting in order on the balances the earlier ones left, refusing only those that do not fit', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 2_500n);
    const inFlight = await balanceOf(ledger.db, vtuInFlight);
    const debits = [1_000n, 1_000n, 1_000n, 500n].map((amount) =>
      transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, amount, 'airtime'),
    );
    const results = await batch(debits);
    assert.deepEqual(results.map(outcome), ['created', 'created', 'InsufficientBalanceError', 'created']);
    assert.equal((results[2] as PromiseRejectedResult).reason.account, wallet(user));
    assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);
    assert.equal(await balanceOf(ledger.db, vtuInFlight), inFlight + 2_500n);
    // Each entry carries the balance its own posting left, as if posted one by one.
    const after = await Promise.all([0, 1, 3].map((i) => entriesOf(ledger.db, debits[i]!.reference)));
    assert.deepEqual(
      after.map((entries) => entries.find((e) => e.account === wallet(user))?.balanceAfter),
      [1_500n, 500n, 0n],
    );
    // The system account's balances after are counted under its lock, in the same order.
    assert.deepEqual(
      after.map((entries) => entries.find((e) => e.account === vtuInFlight)?.balanceAfter),
      [inFlight + 1_000n, inFlight + 2_000n, inFlight + 2_500n],
    );
    assert.ok((await checkLedger(ledger.db)).ok);
  });

  it('answers a reference posted before (or earlier in the batch) as repeated, and other content as a conflict', async () => {
    const { user, first, fresh } = await postedOnce();
    const results = await batch([
      first,
      fresh,
      fresh,
      transfer(first.reference, wallet(user), vtuInFlight, 999n, 'airtime'),
    ]);
    assert.deepEqual(results.map(outcome), ['repeated', 'created', 'repeated', 'ReferenceConflictError']);
    assert.ok((results[3] as PromiseRejectedResult).reason instanceof ReferenceConflictError);
    assert.equal(await balanceOf(ledger.db, wallet(user)), 7_000n, 'each movement once');
    assert.ok((await checkLedger(ledger.db)).ok);
  });

  it('told the references are unposted, fails whole (moving nothing) when one was posted after all', async () => {
    const { user, first, fresh: other } = await postedOnce();
    await assert.rejects(
      ledger.db
        .transaction()
        .execute((trx) => postBatch(trx, [other, first], now(), { referencesUnposted: true })),
      /duplicate key|unique/,
    );
    assert.equal(await balanceOf(ledger.db, wallet(user)), 9_000n, 'only the first posting moved money');
    assert.deepEqual(await entriesOf(ledger.db, other.reference), []);
  });

  it('refuses a posting to an account that does not exist and posts the rest', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 1_000n);
    const results = await batch([
      transfer(uniqueReference('x'), wallet(user), 'no_such_account', 100n),
      transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 100n),
    ]);
    assert.deepEqual(results.map(outcome), ['UnknownAccountError', 'created']);
    assert.ok((results[0] as PromiseRejectedResult).reason instanceof UnknownAccountError);
    assert.equal(await balanceOf(ledger.db, wallet(user)), 900n);
  });

  it('racing single postings and other batches on the same wallet, never takes it below zero', async () => {
    const users = await Promise.all([createUser(ledger.db), createUser(ledger.db)]);
    for (const user of users) await topUp(user, 25_000n);
    const debit = (user: string) =>
      transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 1_000n, 'airtime');
    // 20 batches of 5 (alternating users, so batches lock both wallets) beside 50 single postings.
    const batches = Array.from({ length: 20 }, (_, b) =>
      batch(Array.from({ length: 5 }, (_, i) => debit(users[(b + i) % 2]!))),
    );
    const singles = Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => post(ledger.db, debit(users[i % 2]!), now())),
    );
    const batchResults = (await Promise.all(batches)).flat();
    const singleResults = await singles;
    const all = [...batchResults, ...singleResults];
    const posted = all.filter((r) => r.status === 'fulfilled').length;
    assert.equal(posted, 50, 'exactly the 50 debits the two wallets cover');
    for (const r of all) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof InsufficientBalanceError, String(r.reason));
    }
    for (const user of users) assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);
    assert.ok((await checkLedger(ledger.db)).ok);
  });

  it('racing batches and single postings into one system account, each entry follows the one before', async () => {
    const users = await Promise.all(Array.from({ length: 4 }, () => createUser(ledger.db)));
    for (const user of users) await topUp(user, 100_000n);
    const start = await balanceOf(ledger.db, vtuInFlight);
    // Distinct amounts, so that a balance after counted from a stale balance could not pass as another.
    let debits = 0n;
    const debit = (user: string) => {
      debits += 1n;
      return transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 100n + debits, 'airtime');
    };
    const batches = Array.from({ length: 12 }, (_, b) =>
      batch(Array.from({ length: 4 }, (_, i) => debit(users[(b + i) % users.length]!))),
    );
    const singles = Array.from({ length: 12 }, (_, i) =>
      post(ledger.db, debit(users[i % users.length]!), now()),
    );
    const batched = (await Promise.all(batches)).flat().map((r) => {
      assert.equal(r.status, 'fulfilled', 'every debit fits');
      return (r as PromiseFulfilledResult<Posting>).value.reference;
    });
    const references = [...batched, ...(await Promise.all(singles)).map((p) => p.reference)];
    const entries = (await Promise.all(references.map((reference) => entriesOf(ledger.db, reference))))
      .flat()
      .filter((e) => e.account === vtuInFlight)
      .sort((a, b) => (a.balanceAfter < b.balanceAfter ? -1 : 1));
    assert.equal(entries.length, 60);
    let before = start;
    for (const entry of entries) {
      assert.equal(entry.balanceAfter - entry.amount, before, 'each entry starts where the one before ended');
      before = entry.balanceAfter;
    }
    assert.equal(before, await balanceOf(ledger.db, vtuInFlight));
    assert.ok((await checkLedger(ledger.db)).ok);
  });
});
