import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { alertEmailJob } from '../../src/alerts/alerts.ts';
import { defineJob, noPayload } from '../../src/jobs/job.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';

// A job enqueued inside a transaction exists exactly when the transaction commits (STYLE.md rule 4).
// On PGlite this is also the DESIGN.md pitfall: the first enqueue inside a transaction must not wait
// on pg-boss's own handle, which would hang behind the open transaction. The world is fresh, so the
// first send below is the first this queue ever sees, and it happens inside a transaction.

/** A hang is the failure this file guards against: fail fast instead of waiting for the suite timeout. */
const HANG_GUARD = { timeout: 30_000 };

class Rollback extends Error {}

async function jobById(world: World, id: string): Promise<{ name: string; data: unknown } | undefined> {
  const result = await sql<{ name: string; data: unknown }>`
    select name, data from pgboss.job where id = ${id}
  `.execute(world.ctx.db);
  return result.rows[0];
}

describe(`enqueueing inside a transaction (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  // Bounded too: after a hang, closing waits on the same stuck transaction.
  after(() => world?.close(), HANG_GUARD);

  it('keeps the job when the transaction commits', HANG_GUARD, async () => {
    const committed = randomUUID();
    const id = await world.ctx.db.transaction().execute(async (trx) => {
      const sent = await world.ctx.jobs.send(alertEmailJob, { alertId: committed }, { db: trx });
      assert.ok(sent !== null, 'send returned no id');
      // Visible to the transaction itself...
      const inside = await sql<{
        n: bigint;
      }>`select count(*) as n from pgboss.job where id = ${sent}`.execute(trx);
      assert.equal(inside.rows[0]?.n, 1n);
      if (onPostgres()) {
        // ...and to no one else before the commit (on PGlite another handle would wait for the commit).
        assert.equal(await jobById(world, sent), undefined);
      }
      return sent;
    });
    const job = await jobById(world, id);
    assert.deepEqual(job, { name: alertEmailJob.name, data: { alertId: committed } });
  });

  it('drops the job when the transaction rolls back', HANG_GUARD, async () => {
    const rolledBack = randomUUID();
    let id: string | null = null;
    await assert.rejects(
      world.ctx.db.transaction().execute(async (trx) => {
        id = await world.ctx.jobs.send(alertEmailJob, { alertId: rolledBack }, { db: trx });
        assert.ok(id !== null);
        const inside = await sql<{
          n: bigint;
        }>`select count(*) as n from pgboss.job where id = ${id}`.execute(trx);
        assert.equal(inside.rows[0]?.n, 1n);
        throw new Rollback('roll back');
      }),
      Rollback,
    );
    assert.ok(id !== null);
    assert.equal(await jobById(world, id), undefined);
    // Nor under another id, and the database is usable afterwards: nothing waits on the transaction.
    const count = await sql<{ n: bigint }>`
      select count(*) as n from pgboss.job where name = ${alertEmailJob.name} and data->>'alertId' = ${rolledBack}
    `.execute(world.ctx.db);
    assert.equal(count.rows[0]?.n, 0n);
  });

  it('enqueues outside a transaction too', HANG_GUARD, async () => {
    const plain = randomUUID();
    const id = await world.ctx.jobs.send(alertEmailJob, { alertId: plain });
    assert.ok(id !== null);
    assert.deepEqual(await jobById(world, id), { name: alertEmailJob.name, data: { alertId: plain } });
  });

  it('refuses a queue it does not know instead of creating one', HANG_GUARD, async () => {
    await assert.rejects(world.ctx.jobs.send(defineJob('no.such.queue', noPayload), {}), /unknown job queue/);
  });
});
