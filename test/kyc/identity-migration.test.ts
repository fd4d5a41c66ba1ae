import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Kysely, sql } from 'kysely';
import { up } from '../../src/db/migrations/2026-11-29T0900_kyc_identity.ts';
import { onPostgres } from '../helpers/database.ts';
import { createWorld, type World } from '../helpers/world.ts';
import { kycUser, submissions, userAtTier } from './kyc-support.ts';

// The migration that made one NIN one account and the names verified, over data written before it:
// the NIN hashes move from details to their column (a NIN approved on two accounts before stays
// with the first), and users already at Tier 2 get their verified names from the NIN record.

describe(`the kyc identity migration over earlier data (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  before(async () => {
    world = await createWorld();
  });
  after(() => world.close());

  it('backfills the NIN hashes and the verified names, keeping the first holder of a shared NIN', async () => {
    const db = world.ctx.db;
    const renamed = await userAtTier(
      world,
      2,
      await kycUser(world, { firstName: 'Adebayo', lastName: 'Ogunlesi' }),
    );
    const sameName = await userAtTier(
      world,
      2,
      await kycUser(world, { firstName: 'Adaeze', lastName: 'Okafor' }),
    );
    const shared = await userAtTier(world, 2);
    const tier1 = await userAtTier(world, 1, await kycUser(world, { firstName: 'Chidi', lastName: 'Eze' }));

    // Back to the state before the migration: the NIN's hash only in details, no columns, a renamed
    // profile, a record in capitals, and the same NIN approved on two accounts.
    await sql`update kyc_submissions set details = jsonb_set(details, '{ninHash}', to_jsonb(nin_hash))
      where nin_hash is not null`.execute(db);
    await sql`alter table kyc_submissions drop column nin_hash`.execute(db);
    await sql`alter table users drop column name_verified_at`.execute(db);
    await db
      .updateTable('users')
      .set({ first_name: 'Billrail', last_name: 'Customer Care' })
      .where('id', '=', renamed.userId)
      .execute();
    await sql`update kyc_submissions
      set details = jsonb_set(details, '{ninName}', '{"firstName": "ADAEZE", "middleName": null, "lastName": "OKAFOR"}')
      where user_id = ${sameName.userId} and tier = 2`.execute(db);
    await sql`update kyc_submissions set details = jsonb_set(details, '{ninHash}', to_jsonb(
        (select details->>'ninHash' from kyc_submissions where user_id = ${renamed.userId} and tier = 2)))
      where user_id = ${shared.userId} and tier = 2`.execute(db);

    await up(db as unknown as Kysely<unknown>);

    const users = await db
      .selectFrom('users')
      .select(['id', 'first_name', 'last_name', 'name_verified_at'])
      .where('id', 'in', [renamed.userId, sameName.userId, shared.userId, tier1.userId])
      .execute();
    const byId = new Map(users.map((u) => [u.id, u]));
    const names = (id: string) => [byId.get(id)?.first_name, byId.get(id)?.last_name];
    assert.deepEqual(names(renamed.userId), ['Adebayo', 'Ogunlesi'], 'a rename after approval is undone');
    assert.deepEqual(
      names(sameName.userId),
      ['Adaeze', 'Okafor'],
      'the profile spelling of the same name stays',
    );
    assert.deepEqual(names(tier1.userId), ['Chidi', 'Eze']);
    for (const id of [renamed.userId, sameName.userId, shared.userId]) {
      assert.ok(byId.get(id)?.name_verified_at instanceof Date, id);
    }
    assert.equal(byId.get(tier1.userId)?.name_verified_at, null);

    const hashOf = async (userId: string) =>
      (
        await db
          .selectFrom('kyc_submissions')
          .select('nin_hash')
          .where('user_id', '=', userId)
          .where('tier', '=', 2)
          .executeTakeFirstOrThrow()
      ).nin_hash;
    const [first] = await submissions(world, renamed.userId, 2);
    assert.equal(await hashOf(renamed.userId), first?.details.ninHash, 'the first holder keeps the NIN');
    assert.equal(await hashOf(shared.userId), null, 'the later account stays approved without holding it');
    assert.match((await hashOf(sameName.userId)) ?? '', /^[0-9a-f]{64}$/);
  });
});
