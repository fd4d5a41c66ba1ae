import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { onPostgres } from '../helpers/database.ts';
import { type ApiResponse, createWorld, ok, type World } from '../helpers/world.ts';
import {
  eventJobs,
  expectError,
  getStatus,
  kycTierOfMe,
  kycUser,
  matchingNin,
  submissions,
  submitTier2,
  type TierView,
  userAtTier,
} from './kyc-support.ts';

// One NIN verifies one person (API.md section 8): an NIN approved on one account is refused on
// another with 409 CONFLICT and nothing changes, whatever the provider says, however many accounts
// submit it at once (a unique index decides, across services on PostgreSQL). The phone on the NIN
// record must be the phone given: the sandbox's NINs starting with 8 carry another phone.

/** Two services on one database on PostgreSQL (another process's pool); the one world on PGlite. */
async function services(): Promise<World[]> {
  const world = await createWorld();
  if (!onPostgres()) return [world];
  return [world, await createWorld({ sameDatabaseAs: world })];
}

/** An 11-digit NIN starting with 8: the sandbox's record carries another phone. */
const otherPhoneNin = () => `8${matchingNin().slice(1)}`;

function assertNoServerErrors(answers: ApiResponse[]): void {
  assert.deepEqual(
    answers.filter((a) => a.status >= 500).map((a) => `${a.status} ${JSON.stringify(a.body)}`),
    [],
    'no submission may answer 5xx',
  );
}

describe(`one NIN, one person (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let worlds: World[];
  let world: World;
  before(async () => {
    worlds = await services();
    world = worlds[0]!;
  });
  after(async () => {
    for (const w of worlds.slice().reverse()) await w.close();
  });

  it('refuses an NIN approved on another account with 409 CONFLICT, changing nothing', async () => {
    const nin = matchingNin();
    const first = await userAtTier(world, 1);
    assert.equal((await submitTier2(world, first, { nin })).status, 200);
    assert.equal(await kycTierOfMe(world, first), 2);
    const eventsBefore = await eventJobs(world, first.userId);

    // Same name, same NIN, another account: what the issue saw approved twice.
    const second = await userAtTier(world, 1);
    const statusBefore = await getStatus(world, second);
    const error = expectError(await submitTier2(world, second, { nin }), 409, 'CONFLICT');
    assert.match(error.message ?? '', /another account/);
    assert.equal(await kycTierOfMe(world, second), 1);
    assert.deepEqual(await getStatus(world, second), statusBefore);
    assert.deepEqual(await submissions(world, second.userId, 2), [], 'no tier-2 row for the second account');
    assert.deepEqual(
      (await eventJobs(world, second.userId)).filter((e) => e.tier === 2),
      [],
      'no tier-2 decision published for the second account',
    );
    // The first account keeps its approval, untouched.
    assert.equal(await kycTierOfMe(world, first), 2);
    assert.deepEqual(
      (await submissions(world, first.userId, 2)).map((r) => r.status),
      ['approved'],
    );
    assert.deepEqual(await eventJobs(world, first.userId), eventsBefore);
  });

  it('lets an account submit its own NIN again after a rejection, and a rejected NIN claims nothing', async () => {
    const nin = otherPhoneNin();
    const owner = await userAtTier(world, 1);
    assert.equal(ok(await submitTier2(world, owner, { nin })).status, 'rejected');
    // Its own NIN again: rejected again for the record's phone, not refused as "another account".
    assert.equal(ok(await submitTier2(world, owner, { nin })).status, 'rejected');
    // A rejected submission does not hold the NIN against anyone else either.
    const other = await userAtTier(world, 1);
    assert.equal(ok(await submitTier2(world, other, { nin })).status, 'rejected');
  });

  it('rejects an NIN whose record carries another phone (starting with 8), with the reason', async () => {
    const user = await userAtTier(world, 1);
    const nin = otherPhoneNin();
    const view = ok(await submitTier2(world, user, { nin }));
    assert.equal(view.status, 'rejected');
    assert.match(view.reason ?? '', /phone/i);
    assert.deepEqual((await getStatus(world, user)).tiers[1], view);
    assert.equal(await kycTierOfMe(world, user), 1);
    const [row] = await submissions(world, user.userId, 2);
    assert.equal(row?.status, 'rejected');
    assert.ok(!row?.detailsText.includes(nin), 'the NIN is not stored in clear');
  });

  it('approves when the record carries the account phone in another format (compared in E.164)', async () => {
    // The sandbox's NINs starting with 8 carry 07000000008: the phone of this account, stored as
    // +2347000000008.
    const user = await userAtTier(world, 1, await kycUser(world, undefined, '07000000008'));
    assert.deepEqual(ok(await submitTier2(world, user, { nin: otherPhoneNin() })), {
      tier: 2,
      status: 'approved',
    });
  });

  for (const round of [1, 2, 3]) {
    it(`two accounts submitting one NIN at the same moment: exactly one approved (round ${round})`, async () => {
      const nin = matchingNin();
      const [a, b] = [await userAtTier(world, 1), await userAtTier(world, 1)];
      const answers = await Promise.all([
        submitTier2(worlds[0]!, a, { nin }),
        submitTier2(worlds[worlds.length - 1]!, b, { nin }),
      ]);
      assertNoServerErrors(answers);
      const approved = answers.filter((x) => x.status === 200);
      assert.equal(approved.length, 1, JSON.stringify(answers.map((x) => x.body)));
      assert.equal(ok(approved[0] as ApiResponse<TierView>).status, 'approved');
      const refused = answers.filter((x) => x.status !== 200);
      for (const answer of refused) expectError(answer, 409, 'CONFLICT');
      const tiers = [await kycTierOfMe(world, a), await kycTierOfMe(world, b)].sort();
      assert.deepEqual(tiers, [1, 2]);
      const rows = [...(await submissions(world, a.userId, 2)), ...(await submissions(world, b.userId, 2))];
      assert.deepEqual(
        rows.map((r) => r.status),
        ['approved'],
      );
    });
  }

  it('eight accounts submitting one NIN at once across the services: one approved, seven 409', async () => {
    const nin = matchingNin();
    const users = [];
    for (let i = 0; i < 8; i++) users.push(await userAtTier(world, 1));
    const answers = await Promise.all(
      users.map((u, i) => submitTier2(worlds[i % worlds.length]!, u, { nin })),
    );
    assertNoServerErrors(answers);
    assert.deepEqual(
      answers.map((x) => x.status).sort(),
      [200, 409, 409, 409, 409, 409, 409, 409],
      JSON.stringify(answers.map((x) => x.body)),
    );
    for (const answer of answers.filter((x) => x.status === 409)) expectError(answer, 409, 'CONFLICT');
    const tiers = [];
    for (const u of users) tiers.push(await kycTierOfMe(world, u));
    assert.equal(tiers.filter((t) => t === 2).length, 1);
  });
});
