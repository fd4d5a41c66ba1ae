import { type Kysely, sql } from 'kysely';

// Issue 19: the services the specification routes but names no operation for (API.md section 14).
//
// - vtu_transactions.direction: airtime-to-cash runs through the purchase path as a credit: nothing
//   is debited when it is accepted, and the wallet is credited the payout once the provider confirms.
//   `amount` is then the payout (what moves on the wallet, as for a debit), `wholesale` the airtime's
//   face value and `markup` zero.
// - vtu_transactions.refunded: a social order the panel filled in part (`Partial`) succeeds with the
//   unfilled share refunded; what went back is kept beside what was charged.
// - airtime_cash_payouts: the system account the payouts come from, so that the ledger check covers
//   them (it runs below zero by what was paid out, which the provider's settlements make good).
// - wallet_transfers: one row per wallet-to-wallet transfer (the posting carries the money; the row
//   carries who, and the sender's daily total is summed from it under the sender's wallet lock).

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('vtu_transactions')
    .addColumn('direction', 'text', (c) =>
      c.notNull().defaultTo('debit').check(sql`direction in ('debit', 'credit')`),
    )
    .addColumn('refunded', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`refunded >= 0`))
    .execute();
  await sql`alter table vtu_transactions add constraint vtu_transactions_refunded_max check (refunded <= amount)`.execute(
    db,
  );
  // A debit's price is the provider's plus ours; a credit's payout is a share of the airtime.
  await sql`alter table vtu_transactions drop constraint vtu_transactions_amount_parts`.execute(db);
  await sql`alter table vtu_transactions add constraint vtu_transactions_amount_parts
    check (direction = 'credit' or amount = wholesale + markup)`.execute(db);
  await sql`alter table vtu_transactions add constraint vtu_transactions_credit_parts
    check (direction = 'debit' or (markup = 0 and amount <= wholesale and refunded = 0))`.execute(db);
  await sql`insert into ledger_accounts (code, kind, created_at)
    values ('airtime_cash_payouts', 'system', ${new Date().toISOString()})
    on conflict (code) do nothing`.execute(db);

  await db.schema
    .createTable('wallet_transfers')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('reference', 'text', (c) => c.notNull().unique())
    .addColumn('sender_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('recipient_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('narration', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('wallet_transfers_not_to_self', sql`sender_id <> recipient_id`)
    .execute();
  await db.schema
    .createIndex('wallet_transfers_sender_idx')
    .on('wallet_transfers')
    .columns(['sender_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('wallet_transfers').execute();
  await db.schema.alterTable('vtu_transactions').dropColumn('refunded').dropColumn('direction').execute();
}
