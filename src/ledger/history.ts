import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';

// The history of one account, read from its entries joined to their postings. The ledger owns these
// tables, so domains read an account's history through here rather than writing the SQL themselves.

export type HistoryEntry = {
  /** The entry's id: unique, immutable, and one per movement of this account. */
  id: bigint;
  reference: string;
  description: string;
  /** Signed kobo: positive credits the account, negative debits it. */
  amount: bigint;
  balanceAfter: bigint;
  createdAt: Date;
};

type Handle = Kysely<DB> | Transaction<DB>;

/** A page of history is at most this long, whatever the caller asks. */
export const historyPageSizeMax = 100;

function entriesOf(db: Handle, accountCode: string) {
  return db
    .selectFrom('ledger_entries as e')
    .innerJoin('ledger_accounts as a', 'a.id', 'e.account_id')
    .innerJoin('ledger_transactions as t', 't.id', 'e.transaction_id')
    .where('a.code', '=', accountCode);
}

const toEntry = (row: {
  id: bigint;
  reference: string;
  description: string;
  amount: bigint;
  balance_after: bigint;
  created_at: Date;
}): HistoryEntry => ({
  id: row.id,
  reference: row.reference,
  description: row.description,
  amount: row.amount,
  balanceAfter: row.balance_after,
  createdAt: row.created_at,
});

/**
 * The account's entries, newest first (entry ids grow with every posting, so they order entries of
 * the same instant too), with the total count for paging.
 */
export async function walletHistory(
  db: Handle,
  accountCode: string,
  page: { limit: number; offset: number },
): Promise<{ items: HistoryEntry[]; total: number }> {
  const limit = Math.min(Math.max(1, page.limit), historyPageSizeMax);
  const rows = await entriesOf(db, accountCode)
    .select(['e.id', 't.reference', 't.description', 'e.amount', 'e.balance_after', 'e.created_at'])
    .orderBy('e.id', 'desc')
    .limit(limit)
    .offset(page.offset)
    .execute();
  const counted = await entriesOf(db, accountCode)
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  return { items: rows.map(toEntry), total: Number(counted.n) };
}

/** One entry of the account, or undefined when the id is not one of this account's entries. */
export async function historyEntry(
  db: Handle,
  accountCode: string,
  entryId: bigint,
): Promise<HistoryEntry | undefined> {
  const row = await entriesOf(db, accountCode)
    .select(['e.id', 't.reference', 't.description', 'e.amount', 'e.balance_after', 'e.created_at'])
    .where('e.id', '=', entryId)
    .executeTakeFirst();
  return row === undefined ? undefined : toEntry(row);
}
