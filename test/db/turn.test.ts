import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { type Database, openDatabase } from '../../src/db/database.ts';

// PGlite runs one statement at a time, and the batchers wait for the database's turn before they
// cut a batch (src/db/batching.ts). The turn must come only after the work queued before it: an open
// transaction, the statements behind it.

describe('the database turn on PGlite', () => {
  let database: Database;
  before(async () => {
    database = await openDatabase({ kind: 'pglite', dataDir: null });
  });
  after(async () => {
    await database?.close();
  });

  it('comes after the transaction and the statements queued before it, and not before', async () => {
    const order: string[] = [];
    let commit!: () => void;
    const holding = new Promise<void>((resolve) => (commit = resolve));
    let begun!: () => void;
    const inside = new Promise<void>((resolve) => (begun = resolve));
    const transaction = database.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      begun();
      await holding;
      order.push('transaction');
    });
    await inside;
    // As pg-boss queries PGlite: on PGlite's own handle.
    const queued = database.pglite!.query('select 2').then(() => order.push('statement'));
    await new Promise((resolve) => setImmediate(resolve));
    const turn = database.turn!().then(() => order.push('turn'));
    // Many event-loop turns, not a time: a turn that did not wait would have come by then.
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    // Committed whatever the assertion says, so that a failure fails rather than hangs.
    const passedEarly = [...order];
    commit();
    assert.deepEqual(passedEarly, [], 'nothing passes an open transaction');
    await Promise.all([transaction, queued, turn]);
    assert.deepEqual(order, ['transaction', 'statement', 'turn']);
  });

  it('is not there on PostgreSQL, where statements run side by side', async () => {
    const postgres = await openDatabase({
      kind: 'postgres',
      url: 'postgres://nobody@127.0.0.1:1/none',
      poolMax: 1,
    });
    assert.equal(postgres.turn, undefined);
    await postgres.close();
  });
});
