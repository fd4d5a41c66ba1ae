import { type Kysely, sql } from 'kysely';

// Shards #1 … #7 of the hot system accounts (docs/scaling.md section 2, decision 0050): every
// acceptance and settlement of a purchase, and every top-up, locks vtu_in_flight, the provider's
// float, revenue_markup or collections_pool, so each becomes K rows and a transaction posts to one.
// The account's own row is shard 0 and keeps its history. Opened for the default LEDGER_SHARDS (8);
// a start-up with more opens the rest (src/ledger/accounts.ts openLedgerShards). System balances
// may go below zero on one shard: the check constraint holds user accounts only (kind <> 'user' or
// balance >= 0), so no constraint changes. Frozen: the codes are copied, not imported.

const shards = 8;

export async function up(db: Kysely<unknown>): Promise<void> {
  const now = new Date().toISOString();
  const { rows } = await sql<{ code: string }>`select code from ledger_accounts
    where kind = 'system' and strpos(code, '#') = 0
      and (code in ('vtu_in_flight', 'revenue_markup', 'collections_pool')
        or left(code, 15) = 'provider_float:')`.execute(db);
  for (const { code } of rows) {
    for (let shard = 1; shard < shards; shard += 1) {
      await sql`insert into ledger_accounts (code, kind, created_at)
        values (${`${code}#${shard}`}, 'system', ${now})
        on conflict (code) do nothing`.execute(db);
    }
  }
}

export async function down(): Promise<void> {
  throw new Error('the ledger shards migration is not reversible');
}
