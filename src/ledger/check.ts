import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';

// The ledger's invariants, checked from the raw entries: every account's stored balance equals the
// sum of its entries, every posting sums to zero, and so all entries together sum to zero.

export type Imbalance =
  | { kind: 'account'; account: string; balance: string; entriesSum: string }
  | { kind: 'posting'; reference: string; sum: string }
  | { kind: 'total'; sum: string }
  | { kind: 'empty_posting'; reference: string }
  | { kind: 'negative_user_account'; account: string; balance: string };

export type LedgerCheck = { ok: boolean; accounts: number; entries: number; imbalances: Imbalance[] };

export async function checkLedger(db: Kysely<DB>): Promise<LedgerCheck> {
  // Read everything in one snapshot so that postings committing meanwhile cannot fake an imbalance.
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const accounts = await sql<{ code: string; kind: string; balance: bigint; entries_sum: bigint }>`
        select a.code, a.kind, a.balance, coalesce(sum(e.amount), 0)::int8 as entries_sum
        from ledger_accounts a left join ledger_entries e on e.account_id = a.id
        group by a.id order by a.id`.execute(trx);
      const postings = await sql<{ reference: string; sum: bigint }>`
        select t.reference, sum(e.amount)::int8 as sum
        from ledger_transactions t join ledger_entries e on e.transaction_id = t.id
        group by t.id having sum(e.amount) <> 0`.execute(trx);
      const empty = await sql<{ reference: string }>`
        select t.reference from ledger_transactions t
        where not exists (select 1 from ledger_entries e where e.transaction_id = t.id)`.execute(trx);
      const totals = await sql<{ entries: bigint; sum: bigint }>`
        select count(*)::int8 as entries, coalesce(sum(amount), 0)::int8 as sum from ledger_entries`.execute(
        trx,
      );

      const imbalances: Imbalance[] = [];
      for (const a of accounts.rows) {
        if (a.balance !== a.entries_sum) {
          imbalances.push({
            kind: 'account',
            account: a.code,
            balance: String(a.balance),
            entriesSum: String(a.entries_sum),
          });
        }
        if (a.kind === 'user' && a.balance < 0n) {
          imbalances.push({ kind: 'negative_user_account', account: a.code, balance: String(a.balance) });
        }
      }
      for (const p of postings.rows)
        imbalances.push({ kind: 'posting', reference: p.reference, sum: String(p.sum) });
      for (const p of empty.rows) imbalances.push({ kind: 'empty_posting', reference: p.reference });
      const total = totals.rows[0] ?? { entries: 0n, sum: 0n };
      if (total.sum !== 0n) imbalances.push({ kind: 'total', sum: String(total.sum) });
      return {
        ok: imbalances.length === 0,
        accounts: accounts.rows.length,
        entries: Number(total.entries),
        imbalances,
      };
    });
}
