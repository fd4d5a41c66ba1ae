import { type Kysely, sql } from 'kysely';

// Bulk orders (API.md section 16): one person's airtime or data for up to 100 numbers, accepted whole
// or refused whole. Each line is its own purchase (vtu_transactions, the vtu domain's); the order
// keeps which purchase each line became, in the order the lines were given, and reads their states
// through the vtu module's api. The row is written by the transaction that debits the lines
// (src/vtu/accept.ts acceptPurchasesTogether), so an order exists exactly when its lines were
// charged.

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('bulk_orders')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id'))
    .addColumn('service', 'text', (c) => c.notNull().check(sql`service in ('airtime', 'data')`))
    // Kobo: what the lines were charged together at acceptance.
    .addColumn('total', 'bigint', (c) => c.notNull().check(sql`total > 0`))
    // [{phone, transactionId}] in the order given: at most 100 (src/bulk-orders/schemas.ts).
    .addColumn('lines', 'jsonb', (c) =>
      c.notNull().check(sql`jsonb_typeof(lines) = 'array' and jsonb_array_length(lines) between 1 and 100`),
    )
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  // The list reads a user's orders newest first.
  await db.schema
    .createIndex('bulk_orders_user_created_idx')
    .on('bulk_orders')
    .columns(['user_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('bulk_orders').execute();
}
