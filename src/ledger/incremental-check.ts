import assert from 'node:assert/strict';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { Imbalance, LedgerCheck } from './check.ts';

// The ledger check from a checkpoint (decision 0053): the same invariants as checkLedger (check.ts),
// reading only the entries past the last checkpoint. A checkpoint is an entry id H below which every
// entry is committed (or never will be), with each account's entries summed up to H, their count and
// their total. A run takes a new H (in a short transaction of its own), then checks and moves the
// checkpoint to it in one transaction.
//
// What a run finds is never left behind by the checkpoint moving on: the carried sums are the
// entries' true sums (facts, not verdicts), so a stored balance that differs from them, a user
// account below zero and a total other than zero are found again by every run from the carried sums;
// a posting that does not sum to zero (or has no entries), being immutable, is kept in
// ledger_check_open_postings and summed again by every run until it is whole.

/**
 * How long taking the horizon waits for the ledger's writers in flight, by default. Below
 * PostgreSQL's deadlock_timeout (1 s by default), so that a wait that meets a writer the other way
 * round ends here, never by the deadlock detector aborting the writer's transaction.
 */
const horizonLockTimeoutMsDefault = 500;

/** Memory each sort or hash of a run may take before spilling to disk (work_mem, local to the run). */
const workMemMb = 64;

/** A high-water mark of the ledger: every entry and transaction up to these ids is committed. */
type Horizon = { entryId: bigint; transactionId: bigint };

/**
 * The ids up to which everything is committed or never will be. Ids come from sequences at insert
 * time and transactions commit out of id order, so the largest id a snapshot sees is not such a mark:
 * an entry with a smaller id may still commit. A SHARE lock on both tables waits for every transaction
 * that has written to them (each holds ROW EXCLUSIVE from its first insert until it ends) and holds
 * off new ones for the moment the maxima take to read; released at once by the commit. Tables in the
 * order postings write them (the transaction row, then its entries). Null when the writers in flight
 * did not finish within lockTimeoutMs: the run then checks without moving the checkpoint.
 */
async function takeHorizon(db: Kysely<DB>, since: Horizon, lockTimeoutMs: number): Promise<Horizon | null> {
  try {
    return await db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        await sql`set local lock_timeout = ${sql.lit(`${lockTimeoutMs}ms`)}`.execute(trx);
        await sql`lock table ledger_transactions, ledger_entries in share mode`.execute(trx);
        const { rows } = await sql<{ entry_id: bigint; transaction_id: bigint }>`
          select coalesce((select max(id) from ledger_entries where id > ${since.entryId}),
                          ${since.entryId})::int8 as entry_id,
                 coalesce((select max(id) from ledger_transactions), 0)::int8 as transaction_id`.execute(trx);
        const row = rows[0]!;
        return { entryId: row.entry_id, transactionId: row.transaction_id };
      });
  } catch (error) {
    if (isLockTimeout(error)) return null;
    throw error;
  }
}

/** PostgreSQL's lock_not_available, which lock_timeout raises. */
const isLockTimeout = (error: unknown): boolean =>
  typeof error === 'object' && error !== null && 'code' in error && error.code === '55P03';

/**
 * Checks the entries past the checkpoint (and every account's stored balance against the carried
 * sums), then moves the checkpoint to a new horizon. Answers as checkLedger does: `entries` counts
 * every entry up to the new checkpoint. Runs one at a time (the checkpoint's row is locked).
 */
export async function checkLedgerIncrementally(
  db: Kysely<DB>,
  now: Date,
  options: { horizonLockTimeoutMs?: number } = {},
): Promise<LedgerCheck> {
  const lockTimeoutMs = options.horizonLockTimeoutMs ?? horizonLockTimeoutMsDefault;
  assert.ok(Number.isInteger(lockTimeoutMs) && lockTimeoutMs > 0, 'the horizon waits a bounded time');
  // The checkpoint as it is now: the horizon is at least there, so only the entries' tail is read.
  const since = await db
    .selectFrom('ledger_checkpoint')
    .select(['entry_id', 'transaction_id'])
    .where('id', '=', 1)
    .executeTakeFirstOrThrow();
  const horizon = await takeHorizon(
    db,
    { entryId: since.entry_id, transactionId: since.transaction_id },
    lockTimeoutMs,
  );
  return db
    .transaction()
    .setIsolationLevel('read committed')
    .execute(async (trx) => {
      const previous = await trx
        .selectFrom('ledger_checkpoint')
        .selectAll()
        .where('id', '=', 1)
        .forUpdate()
        .executeTakeFirstOrThrow();
      // A run that took its horizon before another run moved the checkpoint further checks up to
      // the checkpoint as it is: a checkpoint never goes back.
      const range: Range = {
        from: previous.entry_id,
        to: max(horizon?.entryId ?? previous.entry_id, previous.entry_id),
        fromTransaction: previous.transaction_id,
        toTransaction: max(horizon?.transactionId ?? previous.transaction_id, previous.transaction_id),
      };
      // The aggregates of a run (a range's entries by account and by posting, every account against
      // its carried sum) fit in memory instead of spilling to disk at the default 4 MB.
      await sql`set local work_mem = ${sql.lit(`${workMemMb}MB`)}`.execute(trx);

      const accounts = await compareAccounts(trx, range.from);
      const added = (
        await sql<{ entries: bigint; sum: bigint }>`
          select count(*)::int8 as entries, coalesce(sum(amount), 0)::int8 as sum
          from ledger_entries where id > ${range.from} and id <= ${range.to}`.execute(trx)
      ).rows[0]!;
      const postings = await brokenPostings(trx, range);

      await carryRange(trx, range);
      await trx.deleteFrom('ledger_check_open_postings').execute();
      if (postings.length > 0)
        await trx
          .insertInto('ledger_check_open_postings')
          .values(postings.map((p) => ({ transaction_id: p.id })))
          .execute();
      const entries = previous.entries + added.entries;
      const total = previous.entries_sum + added.sum;
      await trx
        .updateTable('ledger_checkpoint')
        .set({
          entry_id: range.to,
          transaction_id: range.toTransaction,
          entries,
          entries_sum: total,
          advanced_at: now,
        })
        .where('id', '=', 1)
        .execute();

      const imbalances = [...accounts.imbalances, ...postings.map((p) => p.imbalance)];
      if (total !== 0n) imbalances.push({ kind: 'total', sum: String(total) });
      return {
        ok: imbalances.length === 0,
        accounts: accounts.count,
        entries: Number(entries),
        imbalances,
      };
    });
}

/**
 * What a run reads: the entries with id in (from, to], the transactions with id in
 * (fromTransaction, toTransaction]. Committed, and immutable: what they add is final.
 */
type Range = { from: bigint; to: bigint; fromTransaction: bigint; toTransaction: bigint };

/**
 * Every account's stored balance against its carried sum plus every entry past the checkpoint that
 * the statement's snapshot sees (those past the new horizon too: a balance moves in the same commit
 * as its entries), and user accounts below zero. One statement, so one snapshot. Narrow rows: the
 * codes of the few accounts found are read afterwards (a code never changes).
 */
async function compareAccounts(
  trx: Transaction<DB>,
  from: bigint,
): Promise<{ count: number; imbalances: Imbalance[] }> {
  const { rows } = await sql<{ accounts: bigint; flagged: FlaggedAccount[] }>`
    with past_checkpoint as (
      select account_id, sum(amount)::int8 as sum from ledger_entries
      where id > ${from} group by account_id
    ), compared as (
      select a.id, a.kind, a.balance, (coalesce(c.entries_sum, 0) + coalesce(p.sum, 0))::int8 as entries_sum
      from ledger_accounts a
      left join ledger_check_accounts c on c.account_id = a.id
      left join past_checkpoint p on p.account_id = a.id
    )
    select count(*)::int8 as accounts,
           coalesce(jsonb_agg(jsonb_build_object(
             'id', id::text, 'kind', kind, 'balance', balance::text, 'entriesSum', entries_sum::text
           ) order by id) filter (where balance <> entries_sum or (kind = 'user' and balance < 0)),
           '[]'::jsonb) as flagged
    from compared`.execute(trx);
  const { accounts, flagged } = rows[0]!;
  const codes = await codesOf(
    trx,
    flagged.map((a) => BigInt(a.id)),
  );
  const imbalances: Imbalance[] = [];
  for (const a of flagged) {
    const account = codes.get(a.id)!;
    if (a.balance !== a.entriesSum)
      imbalances.push({ kind: 'account', account, balance: a.balance, entriesSum: a.entriesSum });
    if (a.kind === 'user' && BigInt(a.balance) < 0n)
      imbalances.push({ kind: 'negative_user_account', account, balance: a.balance });
  }
  return { count: Number(accounts), imbalances };
}

/**
 * Postings that do not sum to zero, or have no entries. A posting not already open had its entries
 * up to the checkpoint sum to zero (each earlier range was checked so), so its entries in the range
 * alone decide; a transaction of the transactions' range with no entry in the range has none (its
 * entries came after it); an open posting is summed whole, up to the new horizon.
 */
async function brokenPostings(
  trx: Transaction<DB>,
  range: Range,
): Promise<Array<{ id: bigint; imbalance: Imbalance }>> {
  const { rows } = await sql<{ id: bigint; sum: bigint; entries: bigint }>`
    with range_postings as materialized (
      select transaction_id as id, sum(amount)::int8 as sum, count(*)::int8 as entries
      from ledger_entries where id > ${range.from} and id <= ${range.to} group by transaction_id
    )
    select r.id, r.sum, r.entries from range_postings r
    where r.sum <> 0 and not exists (select 1 from ledger_check_open_postings o where o.transaction_id = r.id)
    union all
    select t.id, 0::int8, 0::int8 from ledger_transactions t
    where t.id > ${range.fromTransaction} and t.id <= ${range.toTransaction}
      and not exists (select 1 from range_postings r where r.id = t.id)
    union all
    select o.transaction_id, s.sum, s.entries from ledger_check_open_postings o
    cross join lateral (
      select coalesce(sum(e.amount), 0)::int8 as sum, count(*)::int8 as entries from ledger_entries e
      where e.transaction_id = o.transaction_id and e.id <= ${range.to}
    ) s
    where s.entries = 0 or s.sum <> 0
    order by 1`.execute(trx);
  const references = await referencesOf(
    trx,
    rows.map((p) => p.id),
  );
  return rows.map((p) => {
    const reference = references.get(String(p.id))!;
    return {
      id: p.id,
      imbalance:
        p.entries === 0n
          ? { kind: 'empty_posting', reference }
          : { kind: 'posting', reference, sum: String(p.sum) },
    };
  });
}

/** Adds the range's sums to the carried ones, opening the carried sum of an account new to it. */
async function carryRange(trx: Transaction<DB>, range: Range): Promise<void> {
  await sql`
    merge into ledger_check_accounts c
    using (
      select account_id, sum(amount)::int8 as sum from ledger_entries
      where id > ${range.from} and id <= ${range.to} group by account_id
    ) r on c.account_id = r.account_id
    when matched then update set entries_sum = c.entries_sum + r.sum
    when not matched then insert (account_id, entries_sum) values (r.account_id, r.sum)`.execute(trx);
}

/** An account whose stored balance is off, as the accounts' statement answers it (ids and kobo as text). */
type FlaggedAccount = { id: string; kind: string; balance: string; entriesSum: string };

/** The codes of these accounts, by id as text. */
async function codesOf(trx: Transaction<DB>, ids: bigint[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('ledger_accounts')
    .select(['id', 'code'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [String(row.id), row.code]));
}

/** The references of these postings, by id as text. */
async function referencesOf(trx: Transaction<DB>, ids: bigint[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await trx
    .selectFrom('ledger_transactions')
    .select(['id', 'reference'])
    .where('id', 'in', ids)
    .execute();
  return new Map(rows.map((row) => [String(row.id), row.reference]));
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
