import assert from 'node:assert/strict';
import { hash, randomInt } from 'node:crypto';
import { type Kysely, sql, type Transaction } from 'kysely';
import { type BatchResults, fulfilled, rejected } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import {
  isCreditOnlyAccount,
  isUserAccount,
  ledgerShardsMax,
  logicalAccount,
  shardAccount,
} from './accounts.ts';

// Double-entry postings. A posting is one ledger transaction of two or more entries that sum to
// zero, under a reference that is unique forever: posting the same reference with the same content
// again returns the first posting, with other content it is an error. Balances live on the account
// rows and move in the same database transaction as the entries; a user account's balance can
// never go below zero (conditional UPDATE here, CHECK constraint in the schema).

export type PostingEntry = { account: string; amount: bigint };

export type PostingRequest = {
  reference: string;
  description: string;
  entries: PostingEntry[];
  metadata?: Record<string, string | number | boolean | null>;
};

export type Posting = {
  id: bigint;
  reference: string;
  /** False when the reference had already been posted with the same content. */
  created: boolean;
};

export class InsufficientBalanceError extends Error {
  override name = 'InsufficientBalanceError';
  readonly account: string;
  constructor(account: string) {
    super(`account ${account} cannot go below zero`);
    this.account = account;
  }
}

export class ReferenceConflictError extends Error {
  override name = 'ReferenceConflictError';
  readonly reference: string;
  constructor(reference: string) {
    super(`reference ${reference} was already posted with different content`);
    this.reference = reference;
  }
}

export class UnknownAccountError extends Error {
  override name = 'UnknownAccountError';
  constructor(account: string) {
    super(`ledger account ${account} does not exist`);
  }
}

const ENTRIES_MAX = 16;

function contentHash(request: PostingRequest): string {
  // Entries are summed per account and sorted, so the same movement written in another order is
  // the same content. Accounts are named by their logical code, never a shard's: a retried posting
  // lands on whichever shard its transaction drew, and must still be the same content (created:
  // false), not a ReferenceConflictError. Hashes stored before shards existed named shard 0, whose
  // code is the logical one, so they still match.
  const perAccount = new Map<string, bigint>();
  for (const e of request.entries) {
    const account = logicalAccount(e.account);
    perAccount.set(account, (perAccount.get(account) ?? 0n) + e.amount);
  }
  const canonical = [...perAccount.entries()]
    .filter(([, amount]) => amount !== 0n)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([account, amount]) => `${account}=${amount}`)
    .join(';');
  // One-shot: a Hash object (a stream) per posting was garbage on every purchase, twice.
  return hash('sha256', `${request.description}\n${canonical}`, 'hex');
}

/**
 * A posting's entries netted per account, zeroes dropped, in the one lock order every posting uses,
 * each hot system account moved to the transaction's shard of it.
 */
function netInLockOrder(request: PostingRequest, shard: number): Array<[string, bigint]> {
  const perAccount = new Map<string, bigint>();
  for (const e of request.entries) {
    const account = shardAccount(e.account, shard);
    perAccount.set(account, (perAccount.get(account) ?? 0n) + e.amount);
  }
  const lockOrder = (code: string) => `${isUserAccount(code) ? 0 : 1}${code}`;
  return [...perAccount.entries()]
    .filter(([, amount]) => amount !== 0n)
    .sort(([a], [b]) => (lockOrder(a) < lockOrder(b) ? -1 : lockOrder(a) > lockOrder(b) ? 1 : 0));
}

function validate(request: PostingRequest): void {
  assert.ok(request.reference.length > 0 && request.reference.length <= 200, 'a posting needs a reference');
  assert.ok(request.entries.length >= 2, 'a posting needs at least two entries');
  assert.ok(request.entries.length <= ENTRIES_MAX, 'too many entries in one posting');
  let sum = 0n;
  const perAccount = new Map<string, bigint>();
  for (const e of request.entries) {
    assert.equal(typeof e.amount, 'bigint', 'ledger amounts are bigint kobo');
    assert.notEqual(e.amount, 0n, 'a ledger entry moves a non-zero amount');
    sum += e.amount;
    perAccount.set(e.account, (perAccount.get(e.account) ?? 0n) + e.amount);
  }
  assert.equal(sum, 0n, 'the entries of a posting must sum to zero');
  for (const [account, amount] of perAccount) {
    assert.ok(!(amount < 0n && isCreditOnlyAccount(account)), `${account} can never be moved out`);
  }
  // Entries are netted per account before they are written; a posting whose entries cancel out on
  // every account would store a transaction with no entries, which moves nothing.
  assert.ok(
    [...perAccount.values()].some((amount) => amount !== 0n),
    'a posting must move money between at least two accounts',
  );
}

export type ShardOptions = {
  /**
   * How many rows each hot system account is kept in (LEDGER_SHARDS, accounts.ts isShardedAccount);
   * 1 when absent: shard 0 only. The transaction draws one of them at random and every hot account of
   * its postings goes to that one, so that it still locks one row per account, in the one order
   * (decision 0050). At random rather than a slot per process: a process runs several transactions
   * at once (acceptances, settlements, top-ups), and processes may be fewer than shards.
   */
  shards?: number | undefined;
};

/** The shard of every hot system account this transaction posts to. */
function drawShard(options: ShardOptions): number {
  const shards = options.shards ?? 1;
  assert.ok(Number.isInteger(shards) && shards >= 1, 'an account is kept in one shard at least');
  assert.ok(shards <= ledgerShardsMax, 'readers sum the shards up to ledgerShardsMax only');
  return shards === 1 ? 0 : randomInt(shards);
}

/**
 * Marks the transaction as the one posting to the ledger, refusing a second posting in it. Every
 * transaction takes its ledger locks once, in the one global order (users' accounts by code, then
 * system accounts by code). A second posting in the same transaction would lock a user's account
 * while holding the system accounts of the first (the collections pool, purchases in flight), which
 * is the order a deadlock needs: several postings of one transaction go through one postBatch.
 *
 * The mark is a property of the transaction object itself (each db.transaction() makes a new one),
 * so it ends with the transaction and this module keeps no state. A setting local to the database
 * transaction would do the same, but at the cost of a round trip inside every transaction that
 * moves money, for a check of the code's own discipline.
 */
const ledgerLocksTaken = Symbol('ledger locks taken');

function takeLedgerLocksOnce(trx: Transaction<DB>): void {
  const marked = trx as Transaction<DB> & { [ledgerLocksTaken]?: true };
  assert.ok(
    marked[ledgerLocksTaken] !== true,
    'a transaction posts to the ledger once: several postings go through one postBatch, in the one lock order',
  );
  marked[ledgerLocksTaken] = true;
}

/**
 * Posts a balanced movement. Runs inside the given transaction, or opens one when given the root
 * handle, so that callers can compose it with their own writes (debit + record + enqueue). A
 * transaction posts once: several postings of one transaction go through postBatch.
 */
export async function post(
  db: Kysely<DB> | Transaction<DB>,
  request: PostingRequest,
  now: Date,
  options: ShardOptions = {},
): Promise<Posting> {
  validate(request);
  const shard = drawShard(options);
  if (!db.isTransaction)
    return db.transaction().execute((trx) => postInTransaction(trx, request, now, shard));
  // Inside the caller's transaction a failed posting must leave nothing behind even when the caller
  // catches the error (say InsufficientBalanceError) and commits its other writes: without the
  // savepoint, the reference row and the balance updates made before the failure would commit
  // without their entries, and the reference could never be posted again.
  const trx = db as Transaction<DB>;
  takeLedgerLocksOnce(trx);
  await sql`savepoint ledger_posting`.execute(trx);
  let posting: Posting;
  try {
    posting = await postInTransaction(trx, request, now, shard);
  } catch (error) {
    try {
      await sql`rollback to savepoint ledger_posting`.execute(trx);
    } catch (rollbackError) {
      throw new AggregateError([error, rollbackError], 'a failed posting could not be rolled back');
    }
    throw error;
  }
  await sql`release savepoint ledger_posting`.execute(trx);
  return posting;
}

async function postInTransaction(
  trx: Transaction<DB>,
  request: PostingRequest,
  now: Date,
  shard: number,
): Promise<Posting> {
  const hash = contentHash(request);
  // A concurrent posting of the same reference waits on the unique index here and then sees ours.
  const inserted = await trx
    .insertInto('ledger_transactions')
    .values({
      reference: request.reference,
      description: request.description,
      content_hash: hash,
      metadata: JSON.stringify(request.metadata ?? {}),
      created_at: now,
    })
    .onConflict((oc) => oc.column('reference').doNothing())
    .returning('id')
    .executeTakeFirst();

  if (inserted === undefined) {
    const existing = await trx
      .selectFrom('ledger_transactions')
      .select(['id', 'content_hash'])
      .where('reference', '=', request.reference)
      .executeTakeFirstOrThrow();
    if (existing.content_hash !== hash) throw new ReferenceConflictError(request.reference);
    return { id: existing.id, reference: request.reference, created: false };
  }

  // Sum per account, then update in one fixed order so that two postings touching the same accounts
  // lock them in the same order and cannot deadlock: user accounts first, then system accounts, each
  // by code. System accounts (the collections pool, purchases in flight) are in nearly every posting:
  // locked last, they are held for the least time, and a refusal for want of funds comes before it.
  const ordered = netInLockOrder(request, shard);

  const entries: Array<{ account_id: bigint; amount: bigint; balance_after: bigint }> = [];
  for (const [code, amount] of ordered) {
    // One conditional UPDATE: a user account moves only if it stays at or above zero.
    const updated = await trx
      .updateTable('ledger_accounts')
      .set({ balance: sql`balance + ${amount}` } as never)
      .where('code', '=', code)
      .where((eb) => eb.or([eb('kind', '=', 'system'), eb(sql`balance + ${amount}`, '>=', 0)]))
      .returning(['id', 'balance'])
      .executeTakeFirst();
    if (updated === undefined) {
      const exists = await trx
        .selectFrom('ledger_accounts')
        .select('id')
        .where('code', '=', code)
        .executeTakeFirst();
      throw exists === undefined ? new UnknownAccountError(code) : new InsufficientBalanceError(code);
    }
    entries.push({ account_id: updated.id, amount, balance_after: updated.balance });
  }

  await trx
    .insertInto('ledger_entries')
    .values(entries.map((e) => ({ ...e, transaction_id: inserted.id, created_at: now })))
    .execute();
  return { id: inserted.id, reference: request.reference, created: true };
}

/**
 * Posts many movements in the caller's transaction with two or three statements whatever their
 * number (the group commit of purchases and their settlements, src/db/batching.ts): decidePostings, then
 * at once writePostings. Each is decided on its own, in the order given, exactly as post() would one
 * after the other: one refused for want of funds, for an unknown account or a reference posted with
 * other content leaves nothing behind and does not touch the rest. A reference already posted with
 * the same content answers created: false.
 */
export async function postBatch(
  trx: Transaction<DB>,
  requests: PostingRequest[],
  now: Date,
  options: DecideOptions = {},
): Promise<BatchResults<Posting>> {
  return writePostings(trx, await decidePostings(trx, requests, now, options));
}

export type DecideOptions = ShardOptions & {
  /**
   * The caller knows no posting carries these references yet (made just now, or derived from a
   * row it holds locked in a state that has posted nothing): the read of earlier postings is
   * skipped. Should one exist after all, the unique index refuses it and the batch fails whole.
   */
  referencesUnposted?: boolean;
  /**
   * The caller's own rules, decided with the balances: `prepare` runs once the user accounts are
   * locked (so it reads state those locks serialise: what the same users did before), then
   * `admit(i)` for each posting the balances allow, in order; an Error refuses that posting as want
   * of funds would, leaving nothing of it behind, and null accepts it (the rule counts it then).
   */
  admission?: { prepare(): Promise<void>; admit(index: number): Error | null } | undefined;
};

type Decision =
  | {
      kind: 'new';
      /** `after` is null for a system account: its balance is known only under its lock (writePostings). */
      entries: Array<{ id: bigint; amount: bigint; after: bigint | null }>;
    }
  | { kind: 'done' };

/** Postings decided and not yet written: the accounts that can refuse are locked by now. */
export type DecidedPostings = {
  requests: PostingRequest[];
  hashes: string[];
  decisions: Array<Decision | Error>;
  posted: Map<string, { id: bigint | null; hash: string }>;
  now: Date;
  /** Whether each posting will be written (or was already): false for a refused one. */
  accepted: boolean[];
};

/**
 * Decides a batch of postings: locks the user accounts involved (which can refuse for want of funds)
 * in post()'s order and decides every balance in memory under those locks. System accounts cannot
 * refuse, so they are only read here; writePostings locks them, in the same order, in its one
 * statement. A caller with writes of its own makes them between the two, so that the system
 * accounts' rows (purchases in flight, the collections pool: in nearly every posting) are held from
 * the last statement to the commit and no longer: transactions that share them then overlap.
 */
export async function decidePostings(
  trx: Transaction<DB>,
  requests: PostingRequest[],
  now: Date,
  options: DecideOptions = {},
): Promise<DecidedPostings> {
  for (const request of requests) validate(request);
  takeLedgerLocksOnce(trx);
  const hashes = requests.map(contentHash);
  // One shard for the whole batch, drawn before the lock read: per posting, a batch of 20 would lock
  // up to 20 rows of each hot account and collide with every other batch (docs/scaling.md section 2).
  const shard = drawShard(options);
  const nets = requests.map((request) => netInLockOrder(request, shard));
  const earlier =
    options.referencesUnposted === true || requests.length === 0
      ? []
      : await trx
          .selectFrom('ledger_transactions')
          .select(['id', 'reference', 'content_hash'])
          .where('reference', 'in', [...new Set(requests.map((r) => r.reference))])
          .execute();
  const posted = new Map(
    earlier.map((row) => [row.reference, { id: row.id as bigint | null, hash: row.content_hash }]),
  );
  const codes = [...new Set(nets.flatMap((net) => net.map(([code]) => code)))];
  const users = codes.filter(isUserAccount);
  const others = codes.filter((code) => !isUserAccount(code));
  // One statement: the user accounts locked in post()'s order, the others read without a lock.
  const read =
    codes.length === 0
      ? []
      : (
          await statement<{ id: bigint; code: string; kind: string; balance: bigint }>(
            'ledger.lock-accounts',
          )`
            with locked as materialized (
              select id, code, kind, balance from ledger_accounts
              where code = any(${users}::text[])
              order by code collate "C" for update
            )
            select * from locked
            union all
            select id, code, kind, balance from ledger_accounts
            where code = any(${others}::text[])`.execute(trx)
        ).rows;
  const accounts = new Map(read.map((row) => [row.code, row]));
  await options.admission?.prepare();

  const decisions = requests.map((request, i): Decision | Error => {
    const before = posted.get(request.reference);
    if (before !== undefined) {
      return before.hash === hashes[i] ? { kind: 'done' } : new ReferenceConflictError(request.reference);
    }
    const net = nets[i]!;
    const unknown = net.find(([code]) => !accounts.has(code));
    if (unknown !== undefined) return new UnknownAccountError(unknown[0]);
    const short = net.find(([code, amount]) => {
      const account = accounts.get(code)!;
      return account.kind !== 'system' && account.balance + amount < 0n;
    });
    if (short !== undefined) return new InsufficientBalanceError(short[0]);
    const refused = options.admission?.admit(i) ?? null;
    if (refused !== null) return refused;
    // Posted (in memory): a later request of this batch sees its balances and its reference.
    posted.set(request.reference, { id: null, hash: hashes[i]! });
    return {
      kind: 'new',
      entries: net.map(([code, amount]) => {
        const account = accounts.get(code)!;
        if (account.kind === 'system') return { id: account.id, amount, after: null };
        account.balance += amount;
        return { id: account.id, amount, after: account.balance };
      }),
    };
  });
  return {
    requests,
    hashes,
    decisions,
    posted,
    now,
    accepted: decisions.map((d) => !(d instanceof Error)),
  };
}

/**
 * Writes decided postings with one statement: the transactions, the balances and the entries. The
 * system accounts are locked there, in post()'s order, and each of their entries gets its balance
 * after from the balance found under the lock. No ON CONFLICT: a reference posted by a concurrent
 * transaction since the decision fails the whole batch (which its caller retries item by item)
 * rather than posting it twice.
 */
export async function writePostings(
  trx: Transaction<DB>,
  batch: DecidedPostings,
): Promise<BatchResults<Posting>> {
  const { requests, hashes, decisions, posted, now } = batch;
  const fresh = requests.flatMap((request, i) => {
    const decision = decisions[i]!;
    return decision instanceof Error || decision.kind !== 'new'
      ? []
      : [{ request, hash: hashes[i]!, decision }];
  });
  if (fresh.length > 0) {
    const deltas = new Map<bigint, bigint>();
    for (const { decision } of fresh)
      for (const e of decision.entries) deltas.set(e.id, (deltas.get(e.id) ?? 0n) + e.amount);
    const systemIds = [
      ...new Set(
        fresh.flatMap(({ decision }) => decision.entries.filter((e) => e.after === null).map((e) => e.id)),
      ),
    ];
    const entries = fresh.flatMap(({ request, decision }) =>
      decision.entries.map((e) => ({ reference: request.reference, ...e })),
    );
    // One text whatever the batch (lists go in as arrays): prepared once per connection.
    const written = await statement<{ id: bigint; reference: string }>('ledger.write-postings')`
      with locked as materialized (
        select id, balance from ledger_accounts
        where id = any(${systemIds}::bigint[])
        order by code collate "C" for update
      ), tx as (
        insert into ledger_transactions (reference, description, content_hash, metadata, created_at)
        select t.reference, t.description, t.content_hash, t.metadata::jsonb, ${now}::timestamptz
        from unnest(${fresh.map((f) => f.request.reference)}::text[], ${fresh.map((f) => f.request.description)}::text[],
          ${fresh.map((f) => f.hash)}::text[], ${fresh.map((f) => JSON.stringify(f.request.metadata ?? {}))}::text[])
          with ordinality as t(reference, description, content_hash, metadata, position)
        order by t.position
        returning id, reference
      ), balances as (
        -- Joined to locked so that the system accounts are locked, in order, before any is updated:
        -- the order the statement's parts run in is otherwise PostgreSQL's to choose.
        update ledger_accounts as a set balance = a.balance + v.delta
        from unnest(${[...deltas.keys()]}::bigint[], ${[...deltas.values()]}::bigint[]) as v(id, delta)
        left join locked on locked.id = v.id
        where a.id = v.id
      ), entries as (
        insert into ledger_entries (transaction_id, account_id, amount, balance_after, created_at)
        select tx.id, e.account_id, e.amount,
          coalesce(e.balance_after, locked.balance + sum(e.amount) over (partition by e.account_id order by e.position)),
          ${now}::timestamptz
        from unnest(${entries.map((e) => e.reference)}::text[], ${entries.map((e) => e.id)}::bigint[],
          ${entries.map((e) => e.amount)}::bigint[], ${entries.map((e) => e.after)}::bigint[])
          with ordinality as e(reference, account_id, amount, balance_after, position)
        join tx on tx.reference = e.reference
        left join locked on locked.id = e.account_id
      )
      select id, reference from tx`.execute(trx);
    for (const row of written.rows) posted.get(row.reference)!.id = row.id;
  }
  return requests.map((request, i) => {
    const decision = decisions[i]!;
    if (decision instanceof Error) return rejected(decision);
    return fulfilled({
      id: posted.get(request.reference)!.id!,
      reference: request.reference,
      created: decision.kind === 'new',
    });
  });
}
