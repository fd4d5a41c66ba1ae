import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import { balancesOf, systemAccounts } from '../../src/ledger/accounts.ts';
import { checkLedger } from '../../src/ledger/check.ts';
import {
  InsufficientBalanceError,
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
  ledgerCounts,
  now,
  openLedgerDatabase,
  savings,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

const { collectionsPool, vtuInFlight, revenueMarkup, revenuePenalty, expenseRewards, providerSettlement } =
  systemAccounts;

describe('ledger postings', () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger.close());

  /** Snapshot of everything a refused posting must leave alone. */
  async function snapshot(codes: string[]) {
    return { counts: await ledgerCounts(ledger.db), balances: await balancesOf(ledger.db, codes) };
  }

  async function topUp(userId: string, amount: bigint): Promise<void> {
    const { created } = await post(
      ledger.db,
      transfer(uniqueReference('top'), collectionsPool, wallet(userId), amount, 'top-up'),
      now(),
    );
    assert.equal(created, true);
  }

  it('moves the balances of a balanced posting and stores its entries with balance_after', async () => {
    const user = await createUser(ledger.db);
    const poolBefore = await balanceOf(ledger.db, collectionsPool);
    const before = await ledgerCounts(ledger.db);

    const reference = uniqueReference('top');
    const posting = await post(
      ledger.db,
      {
        reference,
        description: 'wallet top-up',
        entries: [
          { account: collectionsPool, amount: -10_000n },
          { account: wallet(user), amount: 10_000n },
        ],
        metadata: { channel: 'bank_transfer' },
      },
      now(),
    );
    assert.equal(posting.created, true);
    assert.equal(posting.reference, reference);
    assert.equal(typeof posting.id, 'bigint');

    assert.equal(await balanceOf(ledger.db, wallet(user)), 10_000n);
    assert.equal(await balanceOf(ledger.db, collectionsPool), poolBefore - 10_000n);
    assert.deepEqual(await entriesOf(ledger.db, reference), [
      { account: collectionsPool, amount: -10_000n, balanceAfter: poolBefore - 10_000n },
      { account: wallet(user), amount: 10_000n, balanceAfter: 10_000n },
    ]);
    const row = await ledger.db
      .selectFrom('ledger_transactions')
      .select(['id', 'description', 'metadata', 'created_at'])
      .where('reference', '=', reference)
      .executeTakeFirstOrThrow();
    assert.equal(row.id, posting.id);
    assert.equal(row.description, 'wallet top-up');
    assert.deepEqual(row.metadata, { channel: 'bank_transfer' });
    assert.equal(row.created_at.getTime(), now().getTime());
    assert.deepEqual(await ledgerCounts(ledger.db), {
      transactions: before.transactions + 1n,
      entries: before.entries + 2n,
    });

    // Three entries, one account written twice: the ledger stores one entry per account, netted.
    const inFlightBefore = await balanceOf(ledger.db, vtuInFlight);
    const markupBefore = await balanceOf(ledger.db, revenueMarkup);
    const purchase = uniqueReference('vtu');
    await post(
      ledger.db,
      {
        reference: purchase,
        description: 'airtime',
        entries: [
          { account: wallet(user), amount: -2_000n },
          { account: wallet(user), amount: -500n },
          { account: vtuInFlight, amount: 2_000n },
          { account: revenueMarkup, amount: 500n },
        ],
      },
      now(),
    );
    assert.equal(await balanceOf(ledger.db, wallet(user)), 7_500n);
    assert.deepEqual(await entriesOf(ledger.db, purchase), [
      { account: revenueMarkup, amount: 500n, balanceAfter: markupBefore + 500n },
      { account: vtuInFlight, amount: 2_000n, balanceAfter: inFlightBefore + 2_000n },
      { account: wallet(user), amount: -2_500n, balanceAfter: 7_500n },
    ]);
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('returns the first posting, unchanged, when the same reference is posted again with the same content', async () => {
    const user = await createUser(ledger.db);
    const reference = uniqueReference('top');
    const request = transfer(reference, collectionsPool, wallet(user), 4_200n, 'top-up');
    const first = await post(ledger.db, request, now());
    assert.equal(first.created, true);

    const codes = [collectionsPool, wallet(user)];
    const before = await snapshot(codes);
    const again = await post(ledger.db, request, now());
    assert.deepEqual(again, { id: first.id, reference, created: false });

    // The same movement written in another order, or split across entries, is the same content.
    const reordered: PostingRequest = {
      reference,
      description: 'top-up',
      entries: [
        { account: wallet(user), amount: 4_000n },
        { account: collectionsPool, amount: -4_200n },
        { account: wallet(user), amount: 200n },
      ],
    };
    assert.deepEqual(await post(ledger.db, reordered, now()), { id: first.id, reference, created: false });

    // Inside a caller's transaction too.
    await ledger.db.transaction().execute(async (trx) => {
      assert.deepEqual(await post(trx, request, now()), { id: first.id, reference, created: false });
    });

    assert.deepEqual(await snapshot(codes), before);
    assert.equal(await balanceOf(ledger.db, wallet(user)), 4_200n);
    assert.equal((await entriesOf(ledger.db, reference)).length, 2);
  });

  it('refuses the same reference with different content and changes nothing', async () => {
    const user = await createUser(ledger.db);
    const other = await createUser(ledger.db);
    const reference = uniqueReference('top');
    await post(ledger.db, transfer(reference, collectionsPool, wallet(user), 5_000n, 'top-up'), now());

    const codes = [collectionsPool, wallet(user), wallet(other), savings(user)];
    const before = await snapshot(codes);
    const conflicting: PostingRequest[] = [
      transfer(reference, collectionsPool, wallet(user), 5_001n, 'top-up'), // another amount
      transfer(reference, collectionsPool, wallet(user), 5_000n, 'top-up again'), // another description
      transfer(reference, collectionsPool, wallet(other), 5_000n, 'top-up'), // another account
      transfer(reference, wallet(user), savings(user), 5_000n, 'top-up'), // another movement
    ];
    for (const request of conflicting) {
      await assert.rejects(post(ledger.db, request, now()), (error: unknown) => {
        assert.ok(error instanceof ReferenceConflictError);
        assert.equal(error.reference, reference);
        return true;
      });
    }
    assert.deepEqual(await snapshot(codes), before);
    assert.deepEqual(await entriesOf(ledger.db, reference), [
      { account: collectionsPool, amount: -5_000n, balanceAfter: before.balances.get(collectionsPool) },
      { account: wallet(user), amount: 5_000n, balanceAfter: 5_000n },
    ]);
  });

  it('refuses a malformed posting with an assertion before touching the database', async () => {
    const user = await createUser(ledger.db);
    const codes = [collectionsPool, wallet(user)];
    const malformed: Array<[string, PostingRequest]> = [
      [
        'unbalanced',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: collectionsPool, amount: -100n },
            { account: wallet(user), amount: 99n },
          ],
        },
      ],
      [
        'zero entry',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: collectionsPool, amount: 0n },
            { account: wallet(user), amount: 0n },
          ],
        },
      ],
      [
        'zero entry among others',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: collectionsPool, amount: -100n },
            { account: wallet(user), amount: 100n },
            { account: vtuInFlight, amount: 0n },
          ],
        },
      ],
      [
        'single entry',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [{ account: wallet(user), amount: 100n }],
        },
      ],
      ['no entries', { reference: uniqueReference('bad'), description: 'x', entries: [] }],
      [
        'entries cancel out per account',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: wallet(user), amount: 100n },
            { account: wallet(user), amount: -100n },
          ],
        },
      ],
      [
        'number amount',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: collectionsPool, amount: -100 as unknown as bigint },
            { account: wallet(user), amount: 100 as unknown as bigint },
          ],
        },
      ],
      ['empty reference', transfer('', collectionsPool, wallet(user), 100n)],
      ['reference too long', transfer('r'.repeat(201), collectionsPool, wallet(user), 100n)],
      [
        'too many entries',
        {
          reference: uniqueReference('bad'),
          description: 'x',
          entries: [
            { account: collectionsPool, amount: -17n },
            ...Array.from({ length: 17 }, () => ({ account: wallet(user), amount: 1n })),
          ],
        },
      ],
    ];

    // A handle whose driver is destroyed fails on its first query, so an AssertionError from it
    // proves the posting was refused before any SQL was sent.
    const closed = await openDatabase(ledger.testDatabase.target);
    // Kysely's destroy is a no-op on a handle that never ran a query (and the handle stays usable),
    // so use it once before closing it.
    await sql`select 1`.execute(closed.db);
    await closed.close();
    await assert.rejects(
      post(closed.db, transfer(uniqueReference('ok'), collectionsPool, wallet(user), 1n), now()),
      /driver has already been destroyed/,
      'a well-formed posting does reach the (closed) database',
    );

    const before = await snapshot(codes);
    for (const [what, request] of malformed) {
      await assert.rejects(post(closed.db, request, now()), assert.AssertionError, what);
      await assert.rejects(post(ledger.db, request, now()), assert.AssertionError, what);
      await ledger.db.transaction().execute(async (trx) => {
        await assert.rejects(post(trx, request, now()), assert.AssertionError, what);
      });
    }
    assert.deepEqual(await snapshot(codes), before);
  });

  it('refuses a debit below zero on a user account and leaves nothing of the posting', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 1_000n);
    const codes = [collectionsPool, vtuInFlight, revenueMarkup, wallet(user), savings(user)];
    const before = await snapshot(codes);

    // collections_pool and revenue_markup sort before wallet:…, so they are updated before the
    // wallet's debit fails: those updates must be undone with the rest.
    const refused: PostingRequest[] = [
      transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 1_001n),
      transfer(uniqueReference('ref'), wallet(user), collectionsPool, 1_001n),
      {
        reference: uniqueReference('vtu'),
        description: 'airtime with markup',
        entries: [
          { account: revenueMarkup, amount: 2n },
          { account: vtuInFlight, amount: 1_000n },
          { account: wallet(user), amount: -1_002n },
        ],
      },
      transfer(uniqueReference('sav'), savings(user), wallet(user), 1n),
    ];
    for (const request of refused) {
      const debited = request.entries.find((e) => e.amount < 0n && e.account.includes(':'))!.account;
      await assert.rejects(post(ledger.db, request, now()), (error: unknown) => {
        assert.ok(error instanceof InsufficientBalanceError);
        assert.equal(error.account, debited);
        return true;
      });
      const row = await ledger.db
        .selectFrom('ledger_transactions')
        .select('id')
        .where('reference', '=', request.reference)
        .executeTakeFirst();
      assert.equal(row, undefined, 'no transaction row');
      assert.deepEqual(await entriesOf(ledger.db, request.reference), []);
    }
    assert.deepEqual(await snapshot(codes), before);
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);

    // Exactly the balance is allowed and leaves zero.
    await post(ledger.db, transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, 1_000n), now());
    assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);
  });

  it('leaves nothing of a refused posting inside a caller transaction that catches the error and commits', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 300n);
    const poolBefore = await balanceOf(ledger.db, collectionsPool);
    const refusedReference = uniqueReference('ref');
    const keptReference = uniqueReference('vtu');

    // The caller catches the refusal and commits what else it did, as a purchase that records its
    // failure would. (A transaction posts once, so each refusal is tried in a transaction of its own.)
    await ledger.db.transaction().execute(async (trx) => {
      await assert.rejects(
        post(trx, transfer(refusedReference, wallet(user), collectionsPool, 500n), now()),
        InsufficientBalanceError,
      );
    });
    await ledger.db.transaction().execute(async (trx) => {
      await assert.rejects(
        post(trx, transfer(uniqueReference('unk'), collectionsPool, 'wallet:nobody', 1n), now()),
        UnknownAccountError,
      );
    });
    await post(ledger.db, transfer(keptReference, wallet(user), vtuInFlight, 100n), now());

    assert.equal(await balanceOf(ledger.db, wallet(user)), 200n);
    assert.equal(await balanceOf(ledger.db, collectionsPool), poolBefore, 'the pool credit was undone');
    assert.equal((await entriesOf(ledger.db, keptReference)).length, 2);
    assert.deepEqual(await entriesOf(ledger.db, refusedReference), []);
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);

    // The refused reference was not used up: once the money is there it posts for real.
    await topUp(user, 300n);
    const retried = await post(
      ledger.db,
      transfer(refusedReference, wallet(user), collectionsPool, 500n),
      now(),
    );
    assert.equal(retried.created, true);
    assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);
  });

  it('refuses a second posting in one transaction: several go through one postBatch, in the one lock order', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 300n);
    const first = uniqueReference('one');
    const second = uniqueReference('two');
    await assert.rejects(
      ledger.db.transaction().execute(async (trx) => {
        await post(trx, transfer(first, wallet(user), vtuInFlight, 100n), now());
        await post(trx, transfer(second, wallet(user), vtuInFlight, 100n), now());
      }),
      /posts to the ledger once/,
    );
    await assert.rejects(
      ledger.db.transaction().execute(async (trx) => {
        await postBatch(trx, [transfer(first, wallet(user), vtuInFlight, 100n)], now());
        await post(trx, transfer(second, wallet(user), vtuInFlight, 100n), now());
      }),
      /posts to the ledger once/,
    );
    // Nothing of either committed; the two as one batch do.
    assert.equal(await balanceOf(ledger.db, wallet(user)), 300n);
    const both = await ledger.db
      .transaction()
      .execute((trx) =>
        postBatch(
          trx,
          [
            transfer(first, wallet(user), vtuInFlight, 100n),
            transfer(second, wallet(user), vtuInFlight, 100n),
          ],
          now(),
        ),
      );
    assert.deepEqual(
      both.map((b) => b.status),
      ['fulfilled', 'fulfilled'],
    );
    assert.equal(await balanceOf(ledger.db, wallet(user)), 100n);
  });

  it('lets system accounts go negative', async () => {
    const before = await balanceOf(ledger.db, providerSettlement);
    const reference = uniqueReference('set');
    const amount = before + 7_000n; // more than it holds, whatever earlier tests did
    await post(ledger.db, transfer(reference, providerSettlement, expenseRewards, amount), now());
    assert.equal(await balanceOf(ledger.db, providerSettlement), -7_000n);
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });

  it('refuses an unknown account and leaves nothing of the posting', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 1_000n);
    const codes = [collectionsPool, wallet(user)];
    const before = await snapshot(codes);
    for (const request of [
      transfer(uniqueReference('unk'), wallet(user), 'wallet:00000000-0000-7000-8000-000000000000', 10n),
      transfer(uniqueReference('unk'), 'aaa_no_such_account', wallet(user), 10n), // sorts first
      transfer(uniqueReference('unk'), collectionsPool, 'zzz_no_such_account', 10n), // sorts last
    ]) {
      await assert.rejects(post(ledger.db, request, now()), UnknownAccountError);
      assert.deepEqual(await entriesOf(ledger.db, request.reference), []);
    }
    assert.deepEqual(await snapshot(codes), before);
  });

  it('keeps one entry per account per posting: a second one for the same account is refused', async () => {
    const user = await createUser(ledger.db);
    const reference = uniqueReference('top');
    const { id } = await post(ledger.db, transfer(reference, collectionsPool, wallet(user), 500n), now());
    const [entry] = await sql<{ account_id: bigint }>`
      select account_id from ledger_entries where transaction_id = ${id} limit 1`
      .execute(ledger.db)
      .then((r) => r.rows);
    assert.ok(entry !== undefined);
    await assert.rejects(
      sql`insert into ledger_entries (transaction_id, account_id, amount, balance_after, created_at)
        values (${id}, ${entry.account_id}, 1, 0, now())`.execute(ledger.db),
      /ledger_entries_pkey/,
    );
    assert.deepEqual(
      (await entriesOf(ledger.db, reference)).length,
      2,
      'the posting keeps its two entries, netted per account',
    );
  });

  it('keeps ledger rows immutable', async () => {
    const user = await createUser(ledger.db);
    const reference = uniqueReference('top');
    const { id } = await post(ledger.db, transfer(reference, collectionsPool, wallet(user), 900n), now());
    const entriesBefore = await entriesOf(ledger.db, reference);
    const immutable = /ledger rows are immutable/;

    await assert.rejects(
      sql`update ledger_entries set amount = amount * 2 where transaction_id = ${id}`.execute(ledger.db),
      immutable,
    );
    await assert.rejects(
      sql`update ledger_entries set balance_after = 0 where transaction_id = ${id}`.execute(ledger.db),
      immutable,
    );
    await assert.rejects(
      sql`delete from ledger_entries where transaction_id = ${id}`.execute(ledger.db),
      immutable,
    );
    await assert.rejects(
      sql`update ledger_transactions set description = 'edited' where id = ${id}`.execute(ledger.db),
      immutable,
    );
    await assert.rejects(sql`delete from ledger_transactions where id = ${id}`.execute(ledger.db), immutable);
    await assert.rejects(sql`truncate ledger_entries cascade`.execute(ledger.db), immutable);
    await assert.rejects(sql`truncate ledger_transactions cascade`.execute(ledger.db), immutable);

    assert.deepEqual(await entriesOf(ledger.db, reference), entriesBefore);
    const row = await ledger.db
      .selectFrom('ledger_transactions')
      .select('description')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    assert.equal(row.description, 'test transfer');
  });

  it('carries int8 values above 2^53 exactly as bigint', async () => {
    const huge = 2n ** 60n;
    const penaltyBefore = await balanceOf(ledger.db, revenuePenalty);
    const rewardsBefore = await balanceOf(ledger.db, expenseRewards);
    const reference = uniqueReference('big');
    await post(ledger.db, transfer(reference, revenuePenalty, expenseRewards, huge), now());

    const balances = await balancesOf(ledger.db, [revenuePenalty, expenseRewards]);
    assert.equal(balances.get(revenuePenalty), penaltyBefore - huge);
    assert.equal(balances.get(expenseRewards), rewardsBefore + huge);
    assert.deepEqual(await entriesOf(ledger.db, reference), [
      { account: expenseRewards, amount: huge, balanceAfter: rewardsBefore + huge },
      { account: revenuePenalty, amount: -huge, balanceAfter: penaltyBefore - huge },
    ]);

    // Raw SQL reads come back as bigint too, off by one from a power of two so a float would show.
    const odd = 2n ** 53n + 1n;
    const raw = await sql<{
      v: bigint;
      neg: bigint;
    }>`select ${odd}::int8 as v, ${-huge - 1n}::int8 as neg`.execute(ledger.db);
    assert.deepEqual(raw.rows[0], { v: odd, neg: -huge - 1n });

    // A user's wallet above 2^53, to the kobo, and back to exactly zero.
    const user = await createUser(ledger.db);
    await topUp(user, odd);
    assert.equal(await balanceOf(ledger.db, wallet(user)), odd);
    await assert.rejects(
      post(ledger.db, transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, odd + 1n), now()),
      InsufficientBalanceError,
    );
    await post(ledger.db, transfer(uniqueReference('vtu'), wallet(user), vtuInFlight, odd), now());
    assert.equal(await balanceOf(ledger.db, wallet(user)), 0n);

    const check = await checkLedger(ledger.db);
    assert.deepEqual(check.imbalances, []);
  });

  it('refuses a negative user balance in SQL even past the posting code', async () => {
    const user = await createUser(ledger.db);
    await topUp(user, 50n);
    const notNegative = /ledger_accounts_user_not_negative/;
    await assert.rejects(
      sql`update ledger_accounts set balance = -1 where code = ${wallet(user)}`.execute(ledger.db),
      notNegative,
    );
    await assert.rejects(
      sql`update ledger_accounts set balance = balance - 51 where code = ${wallet(user)}`.execute(ledger.db),
      notNegative,
    );
    const other = await createUser(ledger.db);
    await assert.rejects(
      sql`insert into ledger_accounts (code, kind, user_id, balance, created_at)
          values (${`wallet_extra:${other}`}, 'user', ${other}, -5, now())`.execute(ledger.db),
      notNegative,
    );
    assert.equal(await balanceOf(ledger.db, wallet(user)), 50n);
    // The constraint is about user accounts: a system account accepts the same update.
    // (Inside a transaction that is rolled back, so the ledger stays consistent for the next test.)
    await assert.rejects(
      ledger.db.transaction().execute(async (trx) => {
        await sql`update ledger_accounts set balance = -1 where code = ${revenueMarkup}`.execute(trx);
        assert.equal(await balanceOf(trx, revenueMarkup), -1n);
        throw new RolledBack();
      }),
      RolledBack,
    );
    assert.deepEqual((await checkLedger(ledger.db)).imbalances, []);
  });
});

class RolledBack extends Error {}
