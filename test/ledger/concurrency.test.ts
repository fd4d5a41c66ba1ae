import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemAccounts } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import { InsufficientBalanceError, type PostingRequest, post } from '../../src/ledger/postings.ts';
import {
  balanceOf,
  createUser,
  entriesOf,
  type LedgerDatabase,
  ledgerCounts,
  now,
  openLedgerDatabase,
  savings,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

// Parallel postings against one account. On PGlite (one connection) Kysely serialises them; on
// PostgreSQL each runs in its own pooled connection (createTestDatabase gives poolMax 30) and they
// really race on the account rows and on the reference's unique index.

const { collectionsPool, vtuInFlight } = systemAccounts;

describe('ledger under concurrency', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
    // Enough pooled connections for the parallel postings to hold transactions at the same time.
    const target = ledger.testDatabase.target;
    if (target.kind === 'postgres') assert.ok(target.poolMax >= 30);
  });
  after(() => ledger.close());

  async function topUp(userId: string, amount: bigint): Promise<void> {
    await post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(userId), amount), now());
  }

  it('lets exactly 25 of 100 parallel 1,000-kobo debits through a 25,000-kobo wallet', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 25_000n);
    const inFlightBefore = await balanceOf(ledger.db, vtuInFlight);
    const requests = Array.from({ length: 100 }, () =>
      transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 1_000n, 'airtime'),
    );

    const results = await Promise.allSettled(requests.map((r) => post(ledger.db, r, now())));

    const succeeded = results.filter((r) => r.status === 'fulfilled');
    const failed = results.filter((r) => r.status === 'rejected');
    assert.equal(succeeded.length, 25);
    assert.equal(failed.length, 75);
    for (const r of succeeded) assert.equal(r.value.created, true);
    for (const r of failed) {
      assert.ok(r.reason instanceof InsufficientBalanceError, `unexpected ${String(r.reason)}`);
      assert.equal(r.reason.account, wallet(user));
    }
    assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);
    assert.equal(await balanceOf(ledger.db, vtuInFlight), inFlightBefore + 25_000n);

    // Each success left its two entries; the wallet's balance_after values are 24,000 down to 0,
    // each exactly once: no two debits saw the same balance.
    const walletAfters: bigint[] = [];
    for (const [i, r] of results.entries()) {
      const entries = await entriesOf(ledger.db, requests[i]!.reference);
      if (r.status === 'rejected') {
        assert.deepEqual(entries, []);
        continue;
      }
      assert.equal(entries.length, 2);
      walletAfters.push(entries.find((e) => e.account === wallet(user))!.balanceAfter);
    }
    walletAfters.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    assert.deepEqual(
      walletAfters,
      Array.from({ length: 25 }, (_, i) => BigInt(i) * 1_000n),
    );
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('creates a reference posted 50 times in parallel exactly once', async () => {
    const user = await createUser(ledger.db);
    const reference = uniqueReference('top');
    const request = transfer(reference, collectionsPool, wallet(user), 7_000n, 'top-up');
    const poolBefore = await balanceOf(ledger.db, collectionsPool);
    const countsBefore = await ledgerCounts(ledger.db);

    const results = await Promise.all(Array.from({ length: 50 }, () => post(ledger.db, request, now())));

    const created = results.filter((r) => r.created);
    assert.equal(created.length, 1);
    assert.equal(results.filter((r) => !r.created).length, 49);
    for (const r of results) assert.equal(r.id, created[0]!.id, 'every call names the one posting');
    assert.equal(await balanceOf(ledger.db, wallet(user)), 7_000n);
    assert.equal(await balanceOf(ledger.db, collectionsPool), poolBefore - 7_000n);
    assert.deepEqual(await ledgerCounts(ledger.db), {
      transactions: countsBefore.transactions + 1n,
      entries: countsBefore.entries + 2n,
    });
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('posts a reference once when the first parallel attempt fails and later ones can succeed', async () => {
    // Half the attempts want more than the wallet holds; the same reference with a fitting amount
    // conflicts with nothing until one of them commits. Exactly one posting of the reference may
    // exist, and every other attempt must be refused (conflict or insufficient) or see it.
    const user = await createUser(ledger.db);
    await topUp(user, 1_000n);
    const reference = uniqueReference('vtu');
    const fits = transfer(reference, wallet(user), vtuInFlight, 600n, 'airtime');
    const tooBig = transfer(reference, wallet(user), vtuInFlight, 1_600n, 'airtime');
    const attempts = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? tooBig : fits));

    const results = await Promise.allSettled(attempts.map((r) => post(ledger.db, r, now())));

    const created = results.filter((r) => r.status === 'fulfilled' && r.value.created);
    assert.equal(created.length, 1);
    for (const [i, r] of results.entries()) {
      if (r.status === 'fulfilled') {
        assert.equal(attempts[i], fits, 'only the fitting content can have been posted');
        continue;
      }
      assert.ok(
        r.reason instanceof InsufficientBalanceError || r.reason.name === 'ReferenceConflictError',
        `unexpected ${String(r.reason)}`,
      );
    }
    assert.equal(await balanceOf(ledger.db, wallet(user)), 400n);
    // Entries come back in account-code order: vtu_in_flight, then wallet:….
    assert.deepEqual(
      (await entriesOf(ledger.db, reference)).map((e) => e.amount),
      [600n, -600n],
    );
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('runs opposite transfers between two wallets in parallel without deadlock', async () => {
    const a = await createUser(ledger.db);
    const b = await createUser(ledger.db);
    await topUp(a, 50_000n);
    await topUp(b, 50_000n);

    // The same pair of accounts written in both orders, plus postings over three and four accounts
    // in scrambled order: without the sorted lock order these deadlock on PostgreSQL.
    const requests: PostingRequest[] = [];
    for (let i = 0; i < 40; i++) {
      requests.push(transfer(uniqueReference('trf'), wallet(a), wallet(b), 100n + BigInt(i)));
      requests.push(transfer(uniqueReference('trf'), wallet(b), wallet(a), 100n + BigInt(i)));
      requests.push({
        reference: uniqueReference('sav'),
        description: 'save and pay',
        entries:
          i % 2 === 0
            ? [
                { account: wallet(b), amount: -30n },
                { account: savings(a), amount: 10n },
                { account: wallet(a), amount: 20n },
              ]
            : [
                { account: savings(b), amount: 20n },
                { account: wallet(a), amount: -30n },
                { account: wallet(b), amount: 10n },
              ],
      });
      requests.push({
        reference: uniqueReference('mix'),
        description: 'four accounts',
        entries:
          i % 2 === 0
            ? [
                { account: savings(b), amount: 5n },
                { account: wallet(a), amount: -5n },
                { account: savings(a), amount: 5n },
                { account: wallet(b), amount: -5n },
              ]
            : [
                { account: wallet(b), amount: -5n },
                { account: savings(a), amount: 5n },
                { account: wallet(a), amount: -5n },
                { account: savings(b), amount: 5n },
              ],
      });
    }

    const results = await Promise.allSettled(requests.map((r) => post(ledger.db, r, now())));

    // The wallets hold far more than can ever leave them, so every posting must go through: a
    // deadlock (40P01) or any other error fails here.
    for (const r of results) {
      if (r.status === 'rejected') assert.fail(`a posting failed: ${String(r.reason)}`);
      assert.equal(r.value.created, true);
    }
    // The two-account transfers cancel out. The three-account postings (20 of each shape) credit
    // wallet a 20 and debit it 30, debit wallet b 30 and credit it 10, and credit savings a 10 and
    // savings b 20; the four-account ones (40) move 5 from each wallet to each savings.
    assert.equal(await balanceOf(ledger.db, wallet(a)), 50_000n + 20n * 20n - 30n * 20n - 5n * 40n);
    assert.equal(await balanceOf(ledger.db, wallet(b)), 50_000n - 30n * 20n + 10n * 20n - 5n * 40n);
    assert.equal(await balanceOf(ledger.db, savings(a)), 10n * 20n + 5n * 40n);
    assert.equal(await balanceOf(ledger.db, savings(b)), 20n * 20n + 5n * 40n);
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('keeps a wallet at zero or above when transfers out of it race with a top-up', async () => {
    const a = await createUser(ledger.db);
    const b = await createUser(ledger.db);
    await topUp(a, 3_000n);
    // Ten transfers of 500 out of a, while a top-up of 1,000 lands: at most 8 can succeed, and at
    // least 6 must (the 3,000 were there from the start).
    const requests: PostingRequest[] = Array.from({ length: 10 }, () =>
      transfer(uniqueReference('trf'), wallet(a), wallet(b), 500n),
    );
    requests.splice(5, 0, transfer(uniqueReference('top'), collectionsPool, wallet(a), 1_000n));

    const results = await Promise.allSettled(requests.map((r) => post(ledger.db, r, now())));

    const transfersDone = results.filter(
      (r, i) => r.status === 'fulfilled' && requests[i]!.entries[1]!.account === wallet(b),
    ).length;
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(r.reason instanceof InsufficientBalanceError);
    }
    assert.equal(results[5]!.status, 'fulfilled', 'the top-up cannot fail');
    assert.ok(transfersDone >= 6 && transfersDone <= 8, `${transfersDone} transfers`);
    assert.equal(await balanceOf(ledger.db, wallet(a)), 4_000n - 500n * BigInt(transfersDone));
    assert.equal(await balanceOf(ledger.db, wallet(b)), 500n * BigInt(transfersDone));
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });
});
