import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';

// Money is integer kobo in int8. Above 2^53 a JavaScript number silently rounds, so both drivers
// must hand int8 back as an exact bigint (STYLE.md rule 7). The suite runs once per driver.

const BIG = 2n ** 60n + 1n;
const INT8_MAX = 2n ** 63n - 1n;
const INT8_MIN = -(2n ** 63n);

describe(`int8 as bigint on ${onPostgres() ? 'PostgreSQL' : 'PGlite'}`, () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let db: Kysely<unknown>;
  before(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.target);
    db = database.db as unknown as Kysely<unknown>;
    assert.equal(database.kind, onPostgres() ? 'postgres' : 'pglite');
  });
  after(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  it('returns an int8 above 2^53 exactly, from a literal and from a parameter', async () => {
    assert.notEqual(BigInt(Number(BIG)), BIG, 'the value must not survive a trip through a number');
    const literal = await sql<{ v: unknown }>`select ${sql.raw(BIG.toString())}::int8 as v`.execute(db);
    assert.equal(literal.rows[0]?.v, BIG);
    const parameter = await sql<{ v: unknown }>`select ${BIG.toString()}::int8 as v`.execute(db);
    assert.equal(parameter.rows[0]?.v, BIG);
    const bigintParameter = await sql<{ v: unknown }>`select ${BIG}::int8 as v`.execute(db);
    assert.equal(bigintParameter.rows[0]?.v, BIG);
  });

  it('returns small int8 values as bigint too, never as a number or a string', async () => {
    const result = await sql<{ zero: unknown; one: unknown; count: unknown }>`
      select 0::int8 as zero, -1::int8 as one, count(*) as count from generate_series(1, 3)
    `.execute(db);
    assert.deepEqual(result.rows[0], { zero: 0n, one: -1n, count: 3n });
  });

  it('stores and reads int8 at the extremes of a table column exactly', async () => {
    await sql`create table bigint_probe (id int primary key, amount int8 not null)`.execute(db);
    const values = [BIG, -BIG, INT8_MAX, INT8_MIN, 2n ** 53n + 1n];
    await sql`insert into bigint_probe (id, amount) values ${sql.join(
      values.map((v, i) => sql`(${i}, ${v.toString()}::int8)`),
    )}`.execute(db);
    const rows = await sql<{
      id: number;
      amount: unknown;
    }>`select id, amount from bigint_probe order by id`.execute(db);
    assert.deepEqual(
      rows.rows.map((r) => r.amount),
      values,
    );
    // Arithmetic in SQL stays exact too.
    const sum = await sql<{ v: unknown }>`select amount + 1 as v from bigint_probe where id = 0`.execute(db);
    assert.equal(sum.rows[0]?.v, BIG + 1n);
  });

  it('reads a bigint column through the typed query builder exactly', async () => {
    const row = await (database.db as unknown as Kysely<{ bigint_probe: { id: number; amount: bigint } }>)
      .selectFrom('bigint_probe')
      .select('amount')
      .where('id', '=', 0)
      .executeTakeFirstOrThrow();
    assert.equal(typeof row.amount, 'bigint');
    assert.equal(row.amount, BIG);
  });
});
