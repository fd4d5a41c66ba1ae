import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { FileMigrationProvider, Migrator } from 'kysely/migration';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { migrateToLatest } from '../../src/db/migrate.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';

// Decision 0038 renamed funding_transfers to float_top_ups. A database migrated before it holds
// top-ups, pending ones among them that reconciliation still has to resolve: after the migration
// they are the rows of float_top_ups, and every constraint and index named after the table follows
// it, still holding.

const migrationFolder = path.resolve(import.meta.dirname, '../../src/db/migrations');
const renaming = '2026-12-07T0900_float_top_ups';

describe(`the float top-ups' table rename (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let test: TestDatabase;
  let database: Database;
  let db: Kysely<unknown>;
  before(async () => {
    test = await createTestDatabase({ empty: true });
    database = await openDatabase(test.target);
    db = database.db as Kysely<unknown>;
  });
  after(async () => {
    await database.close();
    await test.drop();
  });

  it('keeps the rows stored before it, and the names and rules of the table follow it', async () => {
    const migrator = new Migrator({ db, provider: new FileMigrationProvider({ fs, path, migrationFolder }) });
    const names = (await migrator.getMigrations()).map((m) => m.name);
    const before = names[names.indexOf(renaming) - 1]!;
    const { error } = await migrator.migrateTo(before);
    assert.equal(error, undefined);
    await sql`
      insert into funding_transfers
        (id, reference, provider, amount, bank_code, account_number, account_name, reason, status,
         created_at, updated_at)
      values ('0193d9a0-0000-7000-8000-000000000001', 'fund-0123456789abcdef01234567', 'bills', 500000,
              '058', '0123456789', 'BILLS LTD', 'float', 'pending', now(), now())`.execute(db);

    await migrateToLatest(db);

    const { rows } = await sql<{ reference: string; status: string; amount: string }>`
      select reference, status, amount::text from float_top_ups`.execute(db);
    assert.deepEqual(rows, [
      { reference: 'fund-0123456789abcdef01234567', status: 'pending', amount: '500000' },
    ]);
    const { rows: old } = await sql<{ name: string }>`
      select conname as name from pg_constraint where conname like 'funding\\_transfers%'
      union all select indexname from pg_indexes where indexname like 'funding\\_transfers%'
      union all select tablename from pg_tables where tablename = 'funding_transfers'`.execute(db);
    assert.deepEqual(old, [], 'nothing is named after the old table');
    const { rows: indexes } = await sql<{ name: string }>`
      select indexname as name from pg_indexes where tablename = 'float_top_ups' order by 1`.execute(db);
    assert.deepEqual(
      indexes.map((i) => i.name),
      [
        'float_top_ups_pending_idx',
        'float_top_ups_pkey',
        'float_top_ups_provider_idx',
        'float_top_ups_reference_key',
      ],
    );
    // The rules hold under their new names: a second row of the same reference, a closed row
    // with no closing time.
    await assert.rejects(
      sql`insert into float_top_ups select * from float_top_ups`.execute(db),
      /float_top_ups_pkey|float_top_ups_reference_key/,
    );
    await assert.rejects(
      sql`update float_top_ups set status = 'failed'`.execute(db),
      /float_top_ups_closed_consistent/,
    );
  });
});
