import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../src/db/schema.ts';
import {
  type CommitWriter,
  inUnitOfWork,
  type WithCommit,
  writeWithCommit,
} from '../../src/db/unit-of-work.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';

// The unit of work (src/db/unit-of-work.ts): what is asked to commit with an operation's result is
// written by the transaction that commits the result, one statement per writer however many results
// the transaction holds, and is gone with it when it rolls back.

describe(`the unit of work (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let db: Kysely<DB>;
  const statements: number[] = [];

  /** A writer that stores each row in a scratch table with one statement, counting its calls. */
  const noteWriter: CommitWriter<string> = async (trx, notes) => {
    statements.push(notes.length);
    await sql`insert into uow_notes (note) select unnest(${notes}::text[])`.execute(trx);
  };
  const noting = (prefix: string): WithCommit & { wasCommitted(): boolean } => {
    let done = false;
    return {
      writeFor: (result) => ({ writer: noteWriter, row: `${prefix}:${String(result)}` }),
      committed: () => {
        done = true;
      },
      wasCommitted: () => done,
    };
  };
  const notes = async () =>
    (await sql<{ note: string }>`select note from uow_notes order by note`.execute(db)).rows.map(
      (r) => r.note,
    );

  before(async () => {
    world = await createWorld();
    db = world.ctx.db;
    await sql`create table uow_notes (note text not null)`.execute(db);
  });
  after(() => world?.close());

  it('writes the result with the work and tells once committed', async () => {
    const hook = noting('a');
    const result = await inUnitOfWork(db, hook, async (trx) => {
      await sql`insert into uow_notes (note) values ('work')`.execute(trx);
      return 42;
    });
    assert.equal(result, 42);
    assert.ok(hook.wasCommitted());
    assert.deepEqual(await notes(), ['a:42', 'work']);
  });

  it('writes nothing, and tells nothing, when the work rolls back', async () => {
    await sql`delete from uow_notes`.execute(db);
    const hook = noting('b');
    await assert.rejects(
      inUnitOfWork(db, hook, async (trx) => {
        await sql`insert into uow_notes (note) values ('work')`.execute(trx);
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(hook.wasCommitted(), false);
    assert.deepEqual(await notes(), []);
  });

  it('writes the rows of many results with one statement per writer', async () => {
    await sql`delete from uow_notes`.execute(db);
    statements.length = 0;
    const hooks = ['x', 'y', 'z'].map(noting);
    await db.transaction().execute((trx: Transaction<DB>) =>
      writeWithCommit(
        trx,
        hooks.map((hook, i) => hook.writeFor(i)),
      ),
    );
    assert.deepEqual(statements, [3]);
    assert.deepEqual(await notes(), ['x:0', 'y:1', 'z:2']);
  });
});
