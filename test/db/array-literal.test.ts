import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type Kysely, sql } from 'kysely';
import { arrayLiteral, type Database, openDatabase, withArrayLiterals } from '../../src/db/database.ts';
import { prepared } from '../../src/db/prepared.ts';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';

// The service makes the text of array parameters itself (src/db/array-literal.ts) where
// node-postgres would: the text must be node-postgres's, character for character, and PostgreSQL
// must read back exactly the elements sent.

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue(value: unknown): unknown;
};

/** Strings with what the array syntax treats specially: quotes, backslashes, commas, braces, blanks, NULL. */
const awkwardString = fc.oneof(
  fc.string({ unit: fc.constantFrom('"', '\\', ',', '{', '}', ' ', 'a', 'é', '₦', '\n', "'") }),
  fc.constantFrom('', 'NULL', 'null', ' padded ', '{}', '"', '\\'),
  fc.string(),
);
const element = fc.oneof(
  awkwardString,
  fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
);

describe('array literals', () => {
  it('are the text node-postgres makes of the same array', () => {
    fc.assert(
      fc.property(fc.array(element, { maxLength: 30 }), (values) => {
        assert.equal(arrayLiteral(values), prepareValue(values));
      }),
      { numRuns: 2_000 },
    );
  });

  it('leave arrays with any other element to node-postgres', () => {
    for (const other of [new Date(0), Buffer.from('ab'), ['nested'], { a: 1 }]) {
      assert.equal(arrayLiteral(['plain', other]), undefined);
      const values = ['x', ['plain', other], 1n];
      assert.equal(withArrayLiterals(values), values, 'nothing converted: the same values');
    }
  });

  it('turn only the arrays among the values into text', () => {
    const values = ['a', ['b', null, 7n], 3, null];
    const converted = withArrayLiterals(values);
    assert.deepEqual(converted, ['a', '{"b",NULL,"7"}', 3, null]);
    assert.deepEqual(values, ['a', ['b', null, 7n], 3, null], 'the caller’s values are left as they were');
  });
});

describe(`array parameters on ${onPostgres() ? 'PostgreSQL' : 'PGlite'}`, () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let db: Kysely<unknown>;
  before(async () => {
    testDatabase = await createTestDatabase();
    database = await openDatabase(testDatabase.target);
    db = database.db as unknown as Kysely<unknown>;
  });
  after(async () => {
    await database?.close();
    await testDatabase?.drop();
  });

  const texts = [
    '',
    'NULL',
    'a "quoted" one',
    'back\\slash',
    'comma, {brace}',
    ' padded ',
    '₦1,000',
    'line\nbreak',
  ];
  const amounts = [0n, -1n, 2n ** 60n + 1n, -(2n ** 63n), 2n ** 63n - 1n];

  it('come back as the elements sent, nulls included, planned each run and prepared', async () => {
    for (const statement of [sql, prepared]) {
      const { rows } = await statement<{ texts: unknown; amounts: unknown; ids: unknown }>`
        select ${[...texts, null]}::text[] as texts, ${[...amounts, null]}::int8[]::text[] as amounts,
          ${['0190b3a4-7c2e-7000-8000-000000000001']}::uuid[] as ids`.execute(db);
      assert.deepEqual(rows[0]?.texts, [...texts, null]);
      assert.deepEqual(rows[0]?.amounts, [...amounts.map(String), null], 'read as int8, exact');
      assert.deepEqual(rows[0]?.ids, ['0190b3a4-7c2e-7000-8000-000000000001']);
    }
  });

  it('unnest into rows as node-postgres’s text of them did', async () => {
    const { rows } = await sql<{ text: string | null; amount: bigint | null; position: string }>`
      select t.text, t.amount, t.position::text from unnest(${[...texts, null]}::text[], ${[...amounts, 1n, 2n, 3n, null]}::int8[])
        with ordinality as t(text, amount, position) order by t.position`.execute(db);
    assert.deepEqual(
      rows.map((r) => r.text),
      [...texts, null],
    );
    assert.deepEqual(
      rows.map((r) => r.amount),
      [...amounts, 1n, 2n, 3n, null],
    );
  });
});
