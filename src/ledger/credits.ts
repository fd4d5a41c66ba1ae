import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';

// What postings credited people, read back by their references: the reconciliation's view of our
// side of money that came in (a bank deposit has no row but its posting). The ledger owns these
// tables, so a domain reads its own postings through here.

/** One posting's credit of a person: their user accounts' entries summed (wallet and held balance). */
export type PostedCredit = { reference: string; userId: string; amountKobo: bigint; at: Date };

type Row = { reference: string; user_id: string; amount: string; created_at: Date | string };

const selectCredits = sql`select t.reference, a.user_id, sum(e.amount)::text as amount, t.created_at
  from ledger_transactions t
  join ledger_entries e on e.transaction_id = t.id
  join ledger_accounts a on a.id = e.account_id and a.kind = 'user'`;

const credited = (rows: Row[]): PostedCredit[] =>
  rows.map((row) => ({
    reference: row.reference,
    userId: row.user_id,
    amountKobo: BigInt(row.amount),
    at: new Date(row.created_at),
  }));

/** The credits of the postings with these references (a reference no posting has is absent). */
export async function postedCreditsOf(
  db: Kysely<DB>,
  references: readonly string[],
): Promise<PostedCredit[]> {
  if (references.length === 0) return [];
  const { rows } = await sql<Row>`${selectCredits}
    where t.reference = any(${[...references]}::text[])
    group by t.reference, a.user_id, t.created_at`.execute(db);
  return credited(rows);
}

/**
 * The credits of bank deposits into dedicated accounts (references `dva:…`) posted in [from, to):
 * the partial index ledger_transactions_dva_idx holds only those postings, so a day is read without
 * scanning the ledger. The prefix is a literal so that the planner can use that index.
 */
export async function bankDepositCreditsBetween(
  db: Kysely<DB>,
  from: Date,
  to: Date,
): Promise<PostedCredit[]> {
  const { rows } = await sql<Row>`${selectCredits}
    where t.reference like 'dva:%' and t.created_at >= ${from} and t.created_at < ${to}
    group by t.reference, a.user_id, t.created_at`.execute(db);
  return credited(rows);
}
