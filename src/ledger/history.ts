import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { DateRange } from '../lagos-time.ts';
import { accountShardCodes } from './accounts.ts';

// The history of one account, read from its entries joined to their postings. The ledger owns these
// tables, so domains read an account's history through here rather than writing the SQL themselves.
// A hot system account (accounts.ts isShardedAccount) is read over all its shards: each posting moved
// one of them, so its entries are the account's, though an entry's balance after is its shard's.

export type HistoryEntry<Kind extends string = string> = {
  /** The entry's id: unique, immutable, and one per movement of this account. */
  id: bigint;
  reference: string;
  description: string;
  /** Signed kobo: positive credits the account, negative debits it. */
  amount: bigint;
  balanceAfter: bigint;
  createdAt: Date;
  /** What the reader's classifier made of the entry. */
  kind: Kind;
  /** The posting's metadata, as its domain wrote it. */
  metadata: Record<string, unknown>;
};

/** The columns of an entry that a classifier reads, as SQL over the history's own query. */
export type EntryColumns = {
  reference: RawBuilder<string>;
  /** Signed kobo on this account: positive credits it. */
  amount: RawBuilder<bigint>;
  metadata: RawBuilder<unknown>;
  /** Whether the entry's posting also moves the account of this code: the other side of the movement. */
  postingMoves: (accountCode: string) => RawBuilder<boolean>;
};

/**
 * What a domain reading a history knows about its entries: their kind as SQL over the entry's
 * columns (the ledger knows nothing of the kinds of movement), and which entries it wants.
 */
export type HistoryView<Kind extends string> = {
  kindOf: (entry: EntryColumns) => RawBuilder<Kind>;
  /** Only entries of this kind. */
  kind?: Kind | undefined;
  /** Only entries made in this range. */
  range?: DateRange | undefined;
};

const columns: EntryColumns = {
  reference: sql.ref('t.reference'),
  amount: sql.ref('e.amount'),
  metadata: sql.ref('t.metadata'),
  // One look-up of the entries' key (transaction_id, account_id) per entry it is asked of.
  postingMoves: (accountCode) => sql<boolean>`exists (select 1 from ledger_entries o
    where o.transaction_id = t.id
      and o.account_id in (select id from ledger_accounts
        where code in (${sql.join(accountShardCodes(accountCode).map((code) => sql.lit(code)))})))`,
};

type Handle = Kysely<DB> | Transaction<DB>;

/** A page of history is at most this long, whatever the caller asks. */
export const historyPageSizeMax = 100;

function entriesOf<Kind extends string>(db: Handle, accountCode: string, view: HistoryView<Kind>) {
  let query = db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .where('a.code', 'in', accountShardCodes(accountCode));
  if (view.range?.from !== undefined) query = query.where('e.created_at', '>=', view.range.from);
  if (view.range?.before !== undefined) query = query.where('e.created_at', '<', view.range.before);
  if (view.kind !== undefined) query = query.where(sql<boolean>`${view.kindOf(columns)} = ${view.kind}`);
  return query;
}

function selected<Kind extends string>(db: Handle, accountCode: string, view: HistoryView<Kind>) {
  return entriesOf(db, accountCode, view).select([
    'e.id',
    't.reference',
    't.description',
    'e.amount',
    'e.balance_after',
    'e.created_at',
    't.metadata',
    view.kindOf(columns).as('kind'),
  ]);
}

const toEntry = <Kind extends string>(row: {
  id: bigint;
  reference: string;
  description: string;
  amount: bigint;
  balance_after: bigint;
  created_at: Date;
  metadata: unknown;
  kind: string;
}): HistoryEntry<Kind> => ({
  id: row.id,
  reference: row.reference,
  description: row.description,
  amount: row.amount,
  balanceAfter: row.balance_after,
  createdAt: row.created_at,
  // The classifier's own expression made it: one of its kinds.
  kind: row.kind as Kind,
  // jsonb arrives parsed from pg and PGlite alike; text is parsed for any driver that does not.
  metadata: (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : (row.metadata ?? {})) as Record<
    string,
    unknown
  >,
});

/**
 * The account's entries the view wants, newest first (entry ids grow with every posting, so they
 * order entries of the same instant too), with their total count for paging.
 */
export async function walletHistory<Kind extends string>(
  db: Handle,
  accountCode: string,
  page: { limit: number; offset: number },
  view: HistoryView<Kind>,
): Promise<{ items: HistoryEntry<Kind>[]; total: number }> {
  const limit = Math.min(Math.max(1, page.limit), historyPageSizeMax);
  const rows = await selected(db, accountCode, view)
    .orderBy('e.id', 'desc')
    .limit(limit)
    .offset(page.offset)
    .execute();
  const counted = await entriesOf(db, accountCode, view)
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return { items: rows.map((row) => toEntry<Kind>(row)), total: Number(counted.n) };
}

/** One entry of the account, or undefined when the id is not one of this account's entries. */
export async function historyEntry<Kind extends string>(
  db: Handle,
  accountCode: string,
  entryId: bigint,
  view: HistoryView<Kind>,
): Promise<HistoryEntry<Kind> | undefined> {
  const row = await selected(db, accountCode, view).where('e.id', '=', entryId).executeTakeFirst();
  return row === undefined ? undefined : toEntry<Kind>(row);
}

/** What one posting did to one account: its side of the movement. */
export type AccountMovement = {
  reference: string;
  description: string;
  /** Signed kobo: positive credited the account, negative debited it. */
  amount: bigint;
  /**
   * Signed kobo the posting moved on all the owner's accounts together: what it gave them (positive)
   * or took from them (negative). A savings lock moves the wallet's money into the owner's own savings
   * (0: nothing left them); its early break takes the penalty (the savings' debit less the wallet's
   * credit).
   */
  ownerAmount: bigint;
  createdAt: Date;
  /** The posting's metadata, as its domain wrote it. */
  metadata: Record<string, unknown>;
};

/**
 * The entry the posting of this reference made on the account, or undefined when there is no such
 * posting or it did not move this account: whose movement a reference is, asked by the reference.
 */
export async function accountMovement(
  db: Handle,
  accountCode: string,
  reference: string,
): Promise<AccountMovement | undefined> {
  const row = await db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .where('a.code', 'in', accountShardCodes(accountCode))
    .where('t.reference', '=', reference)
    .select(['t.reference', 't.description', 'e.amount', 'e.created_at', 't.metadata'])
    .select((eb) =>
      eb
        .selectFrom('ledger_entries as owned')
        .innerJoin('ledger_accounts as mine', 'mine.id', 'owned.account_id')
        .whereRef('owned.transaction_id', '=', 't.id')
        .whereRef('mine.user_id', '=', 'a.user_id')
        .select((sum) => sum.fn.sum<bigint | string>('owned.amount').as('total'))
        .as('owner_amount'),
    )
    .executeTakeFirst();
  if (row === undefined) return undefined;
  return {
    reference: row.reference,
    description: row.description,
    amount: row.amount,
    // A system account has no owner: its side is the whole of it.
    ownerAmount: row.owner_amount === null ? row.amount : BigInt(row.owner_amount),
    createdAt: row.created_at,
    metadata: (typeof row.metadata === 'string' ? JSON.parse(row.metadata) : (row.metadata ?? {})) as Record<
      string,
      unknown
    >,
  };
}
