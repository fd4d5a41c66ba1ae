import { type Kysely, sql } from 'kysely';

// "Transfer" means a wallet-to-wallet transfer only (decision 0038): the payments that top up a VTU
// provider's float are float top-ups, so their table is float_top_ups. A rename, not a copy, so the
// rows already stored (pending ones included, which reconciliation still resolves) stay where the
// code looks. The constraints and indexes named after the table follow it, so that a constraint's
// name in an error or a plan says which table it is. Which constraints exist depends on the
// PostgreSQL version (18 names its not-null constraints too), so they are renamed by prefix.

const renamed = async (db: Kysely<unknown>, from: string, to: string): Promise<void> => {
  await sql`alter table ${sql.id(from)} rename to ${sql.id(to)}`.execute(db);
  await sql`
    do $$
    declare c record;
    begin
      for c in select conname from pg_constraint
               where conrelid = ${sql.lit(to)}::regclass and conname like ${sql.lit(`${from}\\_%`)}
      loop
        execute format('alter table %I rename constraint %I to %I', ${sql.lit(to)}, c.conname,
                       ${sql.lit(to)} || substr(c.conname, ${sql.lit(from.length + 1)}));
      end loop;
    end $$`.execute(db);
  await sql`alter index ${sql.id(`${from}_pending_idx`)} rename to ${sql.id(`${to}_pending_idx`)}`.execute(
    db,
  );
  await sql`alter index ${sql.id(`${from}_provider_idx`)} rename to ${sql.id(`${to}_provider_idx`)}`.execute(
    db,
  );
};

export async function up(db: Kysely<unknown>): Promise<void> {
  await renamed(db, 'funding_transfers', 'float_top_ups');
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await renamed(db, 'float_top_ups', 'funding_transfers');
}
