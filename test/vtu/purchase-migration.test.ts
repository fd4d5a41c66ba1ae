import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { bought, buyer, mtn } from './purchase-support.ts';

// The purchase path's statements are prepared once per connection (src/db/prepared.ts). PostgreSQL
// refuses a prepared statement whose result columns changed, so they name their columns: a column
// added to the purchases table by a migration, while processes that prepared them keep running,
// must not stop a single purchase.

describe(`purchases across a migration (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('a column added to vtu_transactions while the service runs: purchases still settle', async () => {
    const user = await buyer(world, 5_000);
    // Prepared on the connections they ran on.
    for (let i = 0; i < 3; i++) {
      const done = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
      assert.equal(done.status, 'success');
    }
    await sql`alter table vtu_transactions add column added_later text`.execute(world.ctx.db);
    for (let i = 0; i < 3; i++) {
      const done = await bought(world, user, 'buyAirtime', { network: 'mtn', phone: mtn('5'), amount: 100 });
      assert.equal(
        done.status,
        'success',
        'accepted by the statements prepared before, then sent and settled',
      );
    }
  });
});
