import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/ids.ts';
import { onPostgres } from '../helpers/database.ts';
import { type ApiResponse, createWorld, post, type SignedIn, signIn, type World } from '../helpers/world.ts';

// Races of saveBeneficiary. PGlite runs one transaction at a time, so there these prove the rules
// only in sequence; on PostgreSQL the saves overlap for real, split across two services on one
// database (two processes' pools), where the limit of 100 holds only if it is decided under a lock
// that every save of the user waits for, and one recipient saved twice at once must stay one row.

async function services(): Promise<World[]> {
  const world = await createWorld();
  if (!onPostgres()) return [world];
  return [world, await createWorld({ sameDatabaseAs: world })];
}

/** `count` saves at once, alternating between the services. */
function concurrently(
  worlds: World[],
  user: SignedIn,
  count: number,
  data: (i: number) => Record<string, unknown>,
): Promise<ApiResponse[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      post(worlds[i % worlds.length]!, 'saveBeneficiary', data(i), { token: user.accessToken }),
    ),
  );
}

async function rowsOf(world: World, user: SignedIn) {
  return world.ctx.db
    .selectFrom('beneficiaries')
    .select(['recipient', 'label'])
    .where('user_id', '=', user.userId)
    .execute();
}

describe(`beneficiary races (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let worlds: World[];
  let world: World;
  before(async () => {
    worlds = await services();
    world = worlds[0]!;
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  it('20 saves of new recipients at once, at 90 kept, end at exactly 100 and refuse the rest', async () => {
    const user = await signIn(world);
    const now = world.ctx.clock.now();
    await world.ctx.db
      .insertInto('beneficiaries')
      .values(
        Array.from({ length: 90 }, (_, i) => ({
          id: newId(),
          user_id: user.userId,
          service: 'cable',
          label: `Card ${i}`,
          recipient: `70000${String(i).padStart(5, '0')}`,
          network: null,
          details: null,
          created_at: now,
          updated_at: now,
        })),
      )
      .execute();

    const answers = await concurrently(worlds, user, 20, (i) => ({
      service: 'cable',
      label: `New ${i}`,
      recipient: `80000${String(i).padStart(5, '0')}`,
    }));
    const statuses = answers.map((a) => (a.body.success ? 200 : `${a.status} ${a.body.error.code}`));
    assert.equal(statuses.filter((s) => s === 200).length, 10, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === '422 ABOVE_MAXIMUM').length, 10, JSON.stringify(statuses));
    assert.equal((await rowsOf(world, user)).length, 100);
  });

  it('one recipient saved 20 times at once is one row, with one of the labels sent', async () => {
    const user = await signIn(world);
    const answers = await concurrently(worlds, user, 20, (i) => ({
      service: 'airtime',
      label: `Mum ${i}`,
      // The same number in its three shapes.
      recipient: ['08031234567', '2348031234567', '+2348031234567'][i % 3],
    }));
    const failed = answers.filter((a) => !a.body.success);
    assert.deepEqual(failed, []);
    const ids = new Set(answers.map((a) => (a.body.success ? (a.body.data as { id: string }).id : '')));
    assert.equal(ids.size, 1);
    const rows = await rowsOf(world, user);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.recipient, '+2348031234567');
    assert.match(rows[0]!.label, /^Mum \d+$/);
  });
});
