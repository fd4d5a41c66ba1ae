import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { assertMigrated, migrateToLatest, pendingMigrations } from '../../src/db/migrate.ts';

// A process that does not migrate at start-up (MIGRATE_ON_START=0, production's default) refuses a
// database behind the code, naming what is missing, and accepts one ahead of it: the rollback case
// of expand-then-contract, older code on the expanded schema.

const folder = path.resolve(import.meta.dirname, '../../src/db/migrations');
const names = readdirSync(folder)
  .filter((file) => /\.ts$/.test(file))
  .map((file) => file.replace(/\.ts$/, ''))
  .sort();

describe('pendingMigrations and assertMigrated', () => {
  let database: Database;
  let db: Kysely<unknown>;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
    db = database.db as Kysely<unknown>;
  });
  after(() => database.close());

  it('on an empty database: every migration is pending, and the refusal names the first and last', async () => {
    assert.deepEqual(await pendingMigrations(db), names);
    await assert.rejects(assertMigrated(db), (error: Error) => {
      assert.match(error.message, new RegExp(`behind this build by ${names.length} migrations`));
      assert.ok(error.message.includes(names[0]!) && error.message.includes(names.at(-1)!), error.message);
      assert.match(error.message, /npm run migrate/);
      return true;
    });
  });

  it('once migrated: nothing pending, and the database is accepted', async () => {
    await migrateToLatest(db);
    assert.deepEqual(await pendingMigrations(db), []);
    await assertMigrated(db);
  });

  it('one migration behind: named alone', async () => {
    const last = names.at(-1)!;
    await sql`delete from kysely_migration where name = ${last}`.execute(db);
    assert.deepEqual(await pendingMigrations(db), [last]);
    await assert.rejects(assertMigrated(db), new RegExp(`by 1 migration \\(${last}\\)`));
    await sql`insert into kysely_migration (name, timestamp) values (${last}, ${new Date().toISOString()})`.execute(
      db,
    );
  });

  it('ahead of the code (a migration this build does not know): accepted', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('2999-01-01T0000_from_a_newer_build', ${new Date().toISOString()})`.execute(
      db,
    );
    assert.deepEqual(await pendingMigrations(db), []);
    await assertMigrated(db);
    // The older release's migrate job, run again after the rollback, has nothing to do.
    assert.deepEqual(await migrateToLatest(db), []);
  });
});
