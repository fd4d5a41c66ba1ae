import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { isPrepared, prepared, preparedName, type StatementName } from '../../src/db/prepared.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { createWorld } from '../helpers/world.ts';
import { bought, buyer, mtn } from '../vtu/purchase-support.ts';

// The purchase path's statements are marked `prepared` (src/db/prepared.ts): on PostgreSQL each is
// prepared once per connection and run by name from then on; unmarked statements are not, for their
// text may vary with their arguments. On either database a marked statement answers as it would
// unmarked.

describe(`prepared statements (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let testDatabase: TestDatabase;
  let database: Database;
  before(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.target);
  });
  after(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  const marked = (ids: number[]) =>
    prepared<{
      n: number;
    }>`select n from unnest(${ids}::integer[]) as t(n) where n > ${1}::integer order by n`;

  it('answers as the same statement unmarked, whatever the number of values', async () => {
    for (const ids of [[1, 2, 3], [5], [], [9, 8, 7, 6, 5, 4, 3, 2]]) {
      const { rows } = await marked(ids).execute(database.db);
      const plain = await sql<{ n: number }>`
        select n from unnest(${ids}::integer[]) as t(n) where n > ${1}::integer order by n`.execute(
        database.db,
      );
      assert.deepEqual(rows, plain.rows);
    }
  });

  it('names only marked statements, by their text', () => {
    const text = marked([1]).compile(database.db).sql;
    const name = preparedName(text);
    assert.ok(name !== undefined);
    assert.equal(preparedName(marked([1, 2, 3]).compile(database.db).sql), name, 'one text for any values');
    assert.notEqual(preparedName(text.replace('n > $2', 'n >= $2')), name, 'another text, another name');
    assert.equal(preparedName(text.replace('/* prepared */ ', '')), undefined, 'unmarked: not named');
  });

  it('on PostgreSQL: a marked statement is prepared on the connection, and its plan reused', async (t) => {
    if (!onPostgres()) {
      t.skip('PGlite has no named statements to look at');
      return;
    }
    await database.db.transaction().execute(async (trx) => {
      // PostgreSQL plans a prepared statement for its values five times, then may keep one plan.
      for (let run = 0; run < 7; run++) await marked([1, 2, run]).execute(trx);
      await sql`select ${1}::integer as unmarked`.execute(trx);
      const { rows } = await sql<{ name: string; generic_plans: bigint }>`
        select name, generic_plans from pg_prepared_statements`.execute(trx);
      assert.deepEqual(
        rows.map((r) => r.name),
        [preparedName(marked([]).compile(trx).sql)],
        'only the marked statement, under its name',
      );
      assert.ok(rows[0]!.generic_plans > 0n, 'its later runs use the plan kept');
    });
  });

  it('on PostgreSQL: a purchase prepares exactly the statements the list says, and no other', async (t) => {
    if (!onPostgres()) {
      t.skip('PGlite has no named statements to look at');
      return;
    }
    // One connection, so that every statement of the purchase runs on the session looked at.
    const world = await createWorld({ poolMax: 1 });
    try {
      const user = await buyer(world, 1_000);
      assert.equal(
        (await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 })).status,
        'success',
      );
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(
        world.ctx.db,
      );
      const named = new Set(rows.flatMap((r) => /\/\* ([a-z]+\.[a-z-]+) \*\//.exec(r.statement)?.[1] ?? []));
      const ran: StatementName[] = [
        'auth.callers-by-token',
        'auth.buyer-states',
        'auth.pin-states-shared',
        // The freeze, read under the wallet's lock by the debit rule every purchase runs (decision 0040).
        'auth.frozen-among',
        // The CBN daily limit's reads and its write of the day's sum, under the same lock (decision 0044).
        'auth.tiers-among',
        'limits.rows-of',
        'limits.count-debits',
        'catalogue.markups',
        'idempotency.take-keys',
        'idempotency.complete-keys',
        'ledger.lock-accounts',
        'ledger.write-postings',
        'vtu.record-purchases',
        'vtu.claim-candidates',
        'vtu.claim',
        'vtu.settlement-purchases',
        'vtu.settlement-states',
        // The provider float's reservation: locked and added to by the claim, released by the
        // settlement (decision 0051).
        'vtu.claim-locks',
        'vtu.float-reservations',
        'vtu.float-reserve',
        'vtu.float-release',
      ];
      assert.equal(rows.length, named.size, 'every prepared statement is one of the list, each once');
      assert.deepEqual(
        [...named].sort(),
        ran.filter(isPrepared).sort(),
        'prepared: the statements the list marks, and none it plans each run',
      );
    } finally {
      await world.close();
    }
  });
});
