import { type Kysely, sql } from 'kysely';

// A dispute's `charged` on a wallet movement is now what the movement took from the person's accounts
// together, not from the wallet alone (src/disputes/movements.ts). A savings lock moved the wallet's
// money into the person's own savings: it charged nothing, and refunding its amount paid them twice
// (the lock still returns it). The open disputes are measured again the new way; resolved ones are
// history and stay as they were decided.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    update disputes as d
    set charged = greatest(0, -coalesce((
      select sum(e.amount)
      from ledger_entries e
      join ledger_accounts a on a.id = e.account_id
      join ledger_transactions t on t.id = e.transaction_id
      where t.reference = d.reference and a.user_id = d.user_id
    ), 0))
    where d.movement = 'wallet' and d.status = 'open'
  `.execute(db);
}

export async function down(): Promise<void> {
  // The old figure was the wrong one: nothing to restore.
}
