import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import { systemAccounts } from '../../src/ledger/accounts.ts';
import { checkLedger, type LedgerCheck } from '../../src/ledger/check.ts';
import { checkAndRecordLedger } from '../../src/ledger/check-runs.ts';
import { checkLedgerIncrementally } from '../../src/ledger/incremental-check.ts';
import { post } from '../../src/ledger/postings.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  balanceOf,
  createUser,
  type LedgerDatabase,
  now,
  openLedgerDatabase,
  savings,
  transfer,
  uniqueReference,
  wallet,
} from './ledger-fixtures.ts';

const { collectionsPool, vtuInFlight, revenueMarkup } = systemAccounts;

const incremental = (db: Kysely<DB>) => checkLedgerIncrementally(db, now());

/** Imbalances in a stable order (by kind, then account or reference) for exact comparison. */
function sorted(check: LedgerCheck): LedgerCheck {
  const key = (i: LedgerCheck['imbalances'][number]) =>
    `${i.kind}|${'account' in i ? i.account : 'reference' in i ? i.reference : ''}`;
  return { ...check, imbalances: [...check.imbalances].sort((a, b) => (key(a) < key(b) ? -1 : 1)) };
}

async function checkpoint(db: Kysely<DB>) {
  return db.selectFrom('ledger_checkpoint').selectAll().executeTakeFirstOrThrow();
}

/** Each account's carried sum beside the sum of its entries up to the checkpoint, where either is not 0. */
async function carriedAgainstEntries(db: Kysely<DB>) {
  const { rows } = await sql<{ code: string; carried: bigint; entries_sum: bigint }>`
    select a.code, coalesce(c.entries_sum, 0)::int8 as carried,
      coalesce((select sum(e.amount) from ledger_entries e
                where e.account_id = a.id and e.id <= (select entry_id from ledger_checkpoint)), 0)::int8
        as entries_sum
    from ledger_accounts a left join ledger_check_accounts c on c.account_id = a.id
    order by a.code`.execute(db);
  return rows.filter((r) => r.carried !== 0n || r.entries_sum !== 0n);
}

/** A few users and postings of every shape, as the service makes them. */
async function busyLedger(db: Kysely<DB>): Promise<string[]> {
  const users = [await createUser(db), await createUser(db), await createUser(db)];
  for (const [i, u] of users.entries()) {
    await post(db, transfer(uniqueReference('top'), collectionsPool, wallet(u), 50_000n), now());
    await post(db, transfer(uniqueReference('sav'), wallet(u), savings(u), 10_000n), now());
    await post(
      db,
      {
        reference: uniqueReference('vtu'),
        description: 'airtime',
        entries: [
          { account: wallet(u), amount: -1_100n },
          { account: vtuInFlight, amount: 1_000n },
          { account: revenueMarkup, amount: 100n },
        ],
      },
      now(),
    );
    const next = users[(i + 1) % users.length]!;
    await post(db, transfer(uniqueReference('trf'), wallet(u), wallet(next), 2_500n), now());
  }
  return users;
}

/** Writes an entry post() never would: one side of a posting, balance_after as given. */
async function forgeEntry(db: Kysely<DB>, transactionId: bigint, account: string, amount: bigint) {
  const { id } = await db
    .selectFrom('ledger_accounts')
    .select('id')
    .where('code', '=', account)
    .executeTakeFirstOrThrow();
  await db
    .insertInto('ledger_entries')
    .values({ transaction_id: transactionId, account_id: id, amount, balance_after: 0n, created_at: now() })
    .execute();
}

async function forgeTransaction(db: Kysely<DB>, reference: string): Promise<bigint> {
  const { id } = await db
    .insertInto('ledger_transactions')
    .values({ reference, description: 'forged', content_hash: 'x', metadata: '{}', created_at: now() })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

describe('the incremental ledger check', () => {
  it('passes a clean ledger, answers as the full check does, and carries the entries’ true sums', async () => {
    const ledger = await openLedgerDatabase();
    try {
      assert.deepEqual(await incremental(ledger.db), await checkLedger(ledger.db));
      await busyLedger(ledger.db);
      const first = await incremental(ledger.db);
      assert.equal(first.ok, true);
      assert.deepEqual(first, await checkLedger(ledger.db));
      assert.ok((await checkpoint(ledger.db)).entry_id > 0n);
      for (const row of await carriedAgainstEntries(ledger.db))
        assert.equal(row.carried, row.entries_sum, row.code);

      // More postings: the next run reads only those and still agrees with the full check.
      await busyLedger(ledger.db);
      const second = await incremental(ledger.db);
      assert.equal(second.ok, true);
      assert.deepEqual(second, await checkLedger(ledger.db));
      assert.equal(BigInt(second.entries), (await checkpoint(ledger.db)).entries);
      const carried = await carriedAgainstEntries(ledger.db);
      assert.ok(carried.length > 0);
      for (const row of carried) assert.equal(row.carried, row.entries_sum, row.code);

      // A run with nothing new moves nothing and finds nothing.
      const before = await checkpoint(ledger.db);
      assert.deepEqual(await incremental(ledger.db), second);
      assert.equal((await checkpoint(ledger.db)).entry_id, before.entry_id);
    } finally {
      await ledger.close();
    }
  });

  it('finds a balance changed before a checkpoint, in every run until it is put back', async () => {
    const ledger = await openLedgerDatabase();
    try {
      const [u] = await busyLedger(ledger.db);
      const balance = await balanceOf(ledger.db, wallet(u!));
      await sql`update ledger_accounts set balance = balance + 1 where code = ${wallet(u!)}`.execute(
        ledger.db,
      );
      const expected = [
        { kind: 'account', account: wallet(u!), balance: String(balance + 1n), entriesSum: String(balance) },
      ];
      // The first run moves the checkpoint past every entry of that account, the next ones read
      // nothing of it: each still compares the stored balance with the carried sum.
      for (let run = 0; run < 3; run++) {
        const check = await incremental(ledger.db);
        assert.equal(check.ok, false);
        assert.deepEqual(check.imbalances, expected);
        assert.deepEqual(check, await checkLedger(ledger.db));
      }
      await sql`update ledger_accounts set balance = balance - 1 where code = ${wallet(u!)}`.execute(
        ledger.db,
      );
      assert.equal((await incremental(ledger.db)).ok, true);
    } finally {
      await ledger.close();
    }
  });

  it('finds an entry written raw after a checkpoint in the next run, and keeps reporting it', async () => {
    const ledger = await openLedgerDatabase();
    try {
      await busyLedger(ledger.db);
      assert.equal((await incremental(ledger.db)).ok, true);
      const { entry_id: checkpointed } = await checkpoint(ledger.db);

      // One side of a posting made before the checkpoint, added afterwards; the account's balance
      // moved with it, so only the posting and the total are off.
      const { id: oldPosting, reference } = await ledger.db
        .selectFrom('ledger_transactions')
        .select(['id', 'reference'])
        .orderBy('id')
        .limit(1)
        .executeTakeFirstOrThrow();
      await forgeEntry(ledger.db, oldPosting, revenueMarkup, 7n);
      await sql`update ledger_accounts set balance = balance + 7 where code = ${revenueMarkup}`.execute(
        ledger.db,
      );
      const expected = [
        { kind: 'posting', reference, sum: '7' },
        { kind: 'total', sum: '7' },
      ];
      const found = sorted(await incremental(ledger.db));
      assert.equal(found.ok, false);
      assert.deepEqual(found.imbalances, expected);
      assert.deepEqual(found, sorted(await checkLedger(ledger.db)));
      assert.ok((await checkpoint(ledger.db)).entry_id > checkpointed);

      // The checkpoint moved past it; the posting is immutable, so it is reported until whole.
      await busyLedger(ledger.db);
      assert.deepEqual(sorted(await incremental(ledger.db)).imbalances, expected);

      // Whole again: its other side, written the same way (on another account: an entry is one
      // account's share of a posting).
      await forgeEntry(ledger.db, oldPosting, vtuInFlight, -7n);
      await sql`update ledger_accounts set balance = balance - 7 where code = ${vtuInFlight}`.execute(
        ledger.db,
      );
      const whole = await incremental(ledger.db);
      assert.deepEqual(whole.imbalances, []);
      assert.deepEqual(whole, await checkLedger(ledger.db));
    } finally {
      await ledger.close();
    }
  });

  it('finds an entry written raw before the first checkpoint, with its account and the total', async () => {
    const ledger = await openLedgerDatabase();
    try {
      const [u] = await busyLedger(ledger.db);
      const balance = await balanceOf(ledger.db, savings(u!));
      const forged = await forgeTransaction(ledger.db, 'forged_before');
      await forgeEntry(ledger.db, forged, savings(u!), 5n);
      const expected = [
        { kind: 'account', account: savings(u!), balance: String(balance), entriesSum: String(balance + 5n) },
        { kind: 'posting', reference: 'forged_before', sum: '5' },
        { kind: 'total', sum: '5' },
      ];
      for (let run = 0; run < 2; run++) {
        const check = sorted(await incremental(ledger.db));
        assert.deepEqual(check.imbalances, expected);
        assert.deepEqual(check, sorted(await checkLedger(ledger.db)));
      }
    } finally {
      await ledger.close();
    }
  });

  it('finds a posting without entries, made before or after a checkpoint', async () => {
    const ledger = await openLedgerDatabase();
    try {
      await busyLedger(ledger.db);
      await forgeTransaction(ledger.db, 'empty_before');
      assert.deepEqual((await incremental(ledger.db)).imbalances, [
        { kind: 'empty_posting', reference: 'empty_before' },
      ]);
      await busyLedger(ledger.db);
      await forgeTransaction(ledger.db, 'empty_after');
      const check = sorted(await incremental(ledger.db));
      assert.deepEqual(check.imbalances, [
        { kind: 'empty_posting', reference: 'empty_after' },
        { kind: 'empty_posting', reference: 'empty_before' },
      ]);
      assert.deepEqual(check, sorted(await checkLedger(ledger.db)));
    } finally {
      await ledger.close();
    }
  });

  it('finds a user account below zero in every run', async () => {
    const ledger = await openLedgerDatabase();
    try {
      const [u] = await busyLedger(ledger.db);
      await incremental(ledger.db);
      await sql`alter table ledger_accounts drop constraint ledger_accounts_user_not_negative`.execute(
        ledger.db,
      );
      // Entries that take the account below zero, balanced, with the balance moved as post() would.
      const balance = await balanceOf(ledger.db, savings(u!));
      const forged = await forgeTransaction(ledger.db, 'overdraw');
      await forgeEntry(ledger.db, forged, savings(u!), -(balance + 1n));
      await forgeEntry(ledger.db, forged, collectionsPool, balance + 1n);
      await sql`update ledger_accounts set balance = -1 where code = ${savings(u!)}`.execute(ledger.db);
      await sql`update ledger_accounts set balance = balance + ${balance + 1n} where code = ${collectionsPool}`.execute(
        ledger.db,
      );
      for (let run = 0; run < 2; run++)
        assert.deepEqual((await incremental(ledger.db)).imbalances, [
          { kind: 'negative_user_account', account: savings(u!), balance: '-1' },
        ]);
    } finally {
      await ledger.close();
    }
  });

  it('never reports an imbalance while postings commit alongside it, and ends where the full check does', async () => {
    const ledger = await openLedgerDatabase();
    try {
      const u = await createUser(ledger.db);
      await post(ledger.db, transfer(uniqueReference('top'), collectionsPool, wallet(u), 100_000n), now());
      const work: Array<Promise<unknown>> = [];
      const checks: Array<Promise<LedgerCheck>> = [];
      for (let i = 0; i < 30; i++) {
        work.push(post(ledger.db, transfer(uniqueReference('vtu'), wallet(u), vtuInFlight, 10n), now()));
        if (i % 3 === 0) checks.push(incremental(ledger.db));
      }
      await Promise.all(work);
      for (const check of await Promise.all(checks)) assert.deepEqual(check.imbalances, []);
      assert.deepEqual(await incremental(ledger.db), await checkLedger(ledger.db));
      for (const row of await carriedAgainstEntries(ledger.db))
        assert.equal(row.carried, row.entries_sum, row.code);
    } finally {
      await ledger.close();
    }
  });

  it('records which kind of check ran', async () => {
    const ledger = await openLedgerDatabase();
    try {
      await busyLedger(ledger.db);
      const at = () => now();
      const quick = await checkAndRecordLedger(ledger.db, at);
      const full = await checkAndRecordLedger(ledger.db, at, { kind: 'full' });
      assert.deepEqual(quick, full);
      const runs = await ledger.db
        .selectFrom('ledger_checks')
        .select(['kind', 'ok', 'entries'])
        .orderBy('id')
        .execute();
      assert.deepEqual(runs, [
        { kind: 'incremental', ok: true, entries: BigInt(quick.entries) },
        { kind: 'full', ok: true, entries: BigInt(full.entries) },
      ]);
    } finally {
      await ledger.close();
    }
  });
});

// Entry ids come from a sequence when a row is inserted, and transactions commit out of id order: a
// checkpoint at the largest id a snapshot sees would skip an entry with a smaller id that commits
// later, for good. Two transactions at once need two connections: PostgreSQL only.
const skip = !onPostgres() && 'needs PostgreSQL (DATABASE_URL): PGlite has one connection';

describe('the incremental check’s horizon with a posting in flight', { skip }, () => {
  let ledger: LedgerDatabase;
  before(async () => {
    ledger = await openLedgerDatabase();
  });
  after(() => ledger?.close());

  /** Opens a transaction that posts and then waits, uncommitted, until `commit` is called. */
  async function postingInFlight(account: string, amount: bigint) {
    let commit!: () => void;
    const released = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let posted!: (id: bigint) => void;
    const entryId = new Promise<bigint>((resolve) => {
      posted = resolve;
    });
    const done = ledger.db.transaction().execute(async (trx) => {
      await post(trx, transfer(uniqueReference('top'), collectionsPool, account, amount), now());
      const { id } = await trx
        .selectFrom('ledger_entries')
        .select((eb) => eb.fn.max('id').as('id'))
        .executeTakeFirstOrThrow();
      posted(BigInt(id));
      await released;
    });
    return { entryId: await entryId, commit, done };
  }

  /** Resolves once a session waits for a lock on a ledger table (the horizon's LOCK TABLE). */
  async function horizonWaiting(stopped: () => boolean): Promise<void> {
    while (!stopped()) {
      const { rows } = await sql<{ n: bigint }>`
        select count(*)::int8 as n from pg_locks l join pg_class c on c.oid = l.relation
        where not l.granted and c.relname in ('ledger_transactions', 'ledger_entries')`.execute(ledger.db);
      if (rows[0]!.n > 0n) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  it('waits for a posting with a lower id to commit, and carries it', async () => {
    const [early, late] = [await createUser(ledger.db), await createUser(ledger.db)];
    const inFlight = await postingInFlight(wallet(early!), 4_000n);
    // A later posting on other accounts commits first, with a higher id.
    await post(ledger.db, transfer(uniqueReference('top'), vtuInFlight, wallet(late!), 3_000n), now());

    const check = checkLedgerIncrementally(ledger.db, now(), { horizonLockTimeoutMs: 60_000 });
    let stop = false;
    const waited = await Promise.race([horizonWaiting(() => stop).then(() => true), check.then(() => false)]);
    stop = true;
    inFlight.commit();
    await inFlight.done;
    assert.ok(waited, 'the horizon was taken without waiting for the posting in flight');
    const result = await check;
    assert.deepEqual(result.imbalances, []);
    assert.ok((await checkpoint(ledger.db)).entry_id > inFlight.entryId);
    for (const row of await carriedAgainstEntries(ledger.db))
      assert.equal(row.carried, row.entries_sum, row.code);
    // Carried: the next run reads nothing of it and still balances that wallet.
    assert.deepEqual(await incremental(ledger.db), await checkLedger(ledger.db));
    assert.equal(await balanceOf(ledger.db, wallet(early!)), 4_000n);
  });

  it('does not move the checkpoint past a posting that stays in flight, and checks all the same', async () => {
    const [early, late] = [await createUser(ledger.db), await createUser(ledger.db)];
    const before = await checkpoint(ledger.db);
    const inFlight = await postingInFlight(wallet(early!), 6_000n);
    await post(ledger.db, transfer(uniqueReference('top'), vtuInFlight, wallet(late!), 2_000n), now());
    try {
      const result = await checkLedgerIncrementally(ledger.db, now(), { horizonLockTimeoutMs: 50 });
      assert.deepEqual(result.imbalances, []);
      const after = await checkpoint(ledger.db);
      assert.equal(after.entry_id, before.entry_id);
      assert.ok(after.entry_id < inFlight.entryId);
    } finally {
      inFlight.commit();
      await inFlight.done;
    }
    assert.deepEqual(await incremental(ledger.db), await checkLedger(ledger.db));
    assert.ok((await checkpoint(ledger.db)).entry_id > inFlight.entryId);
    for (const row of await carriedAgainstEntries(ledger.db))
      assert.equal(row.carried, row.entries_sum, row.code);
  });
});
