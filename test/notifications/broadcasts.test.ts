import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { advanceClock } from '../auth/support.ts';
import { onPostgres } from '../helpers/database.ts';
import {
  createWorld,
  get,
  ok,
  post,
  type SignedIn,
  signIn,
  signInAgain,
  uniquePhone,
  type World,
} from '../helpers/world.ts';
import { expectError } from '../kyc/kyc-support.ts';

// Broadcasts and polls: one row per broadcast whatever the number of users, one vote per user and
// poll, also under concurrent votes.

type Poll = {
  id: string;
  question: string;
  options: Array<{ id: string; text: string; votes: number }>;
  myVote: string | null;
};
type Broadcast = {
  id: string;
  title: string;
  body: string;
  createdAt: string;
  startsAt: string;
  endsAt: string | null;
  poll?: Poll;
};

describe(`broadcasts and polls (${onPostgres() ? 'PostgreSQL' : 'PGlite'})`, () => {
  let world: World;
  let admin: SignedIn;
  const adminPhone = uniquePhone();
  before(async () => {
    world = await createWorld({ env: { ADMIN_PHONES: adminPhone } });
    admin = await signIn(world, adminPhone);
  });
  after(() => world.close());

  const create = (data: Record<string, unknown>, by: SignedIn = admin) =>
    post<Broadcast>(world, 'adminCreateBroadcast', data, { token: by.accessToken });
  const active = async (user: SignedIn) =>
    ok(
      await get<{ items: Broadcast[]; total: number }>(
        world,
        'listBroadcasts',
        { limit: 100 },
        { token: user.accessToken },
      ),
    );
  const vote = (user: SignedIn, pollId: string, optionId: string) =>
    post<Poll>(world, 'votePoll', { pollId, optionId }, { token: user.accessToken });

  it('refuses non-admins (403) and malformed broadcasts (400), creating nothing', async () => {
    const user = await signIn(world);
    expectError(await create({ title: 'Hi', body: 'x' }, user), 403, 'FORBIDDEN');
    const bad: Array<Record<string, unknown>> = [
      { title: '', body: 'x' },
      { title: 'T', body: 'x', poll: { question: 'Q?', options: ['only one'] } },
      { title: 'T', body: 'x', poll: { question: 'Q?', options: ['1', '2', '3', '4', '5', '6', '7'] } },
      { title: 'T', body: 'x', poll: { question: 'Q?', options: ['Yes', 'yes'] } },
      { title: 'T', body: 'x', startsAt: '2030-01-02T00:00:00Z', endsAt: '2030-01-01T00:00:00Z' },
      { title: 'T', body: 'x', endsAt: 'tomorrow' },
      // Year 0 (which the database refuses) and past 9999: a 400, never a 500 (found by the fuzz).
      { title: 'T', body: 'x', startsAt: '0000-02-29T16:05:14+08:30' },
      { title: 'T', body: 'x', endsAt: '+010000-01-01T00:00:00Z' },
      { title: 'T', body: 'x', audience: 'all' },
    ];
    for (const data of bad) expectError(await create(data), 400, 'VALIDATION_ERROR');
    const rows = await world.ctx.db.selectFrom('broadcasts').select('id').execute();
    assert.equal(rows.length, 0);
  });

  it('shows an open broadcast to every user from one row, with tallies and the caller’s vote', async () => {
    const created = ok(
      await create({
        title: 'New: savings locks',
        body: 'Lock and earn peace of mind.',
        poll: { question: 'Like it?', options: ['Yes', 'No', 'Maybe'] },
      }),
    );
    assert.deepEqual(
      created.poll!.options.map((o) => [o.text, o.votes]),
      [
        ['Yes', 0],
        ['No', 0],
        ['Maybe', 0],
      ],
    );
    const users = await Promise.all(Array.from({ length: 3 }, () => signIn(world)));
    const rows = await world.ctx.db.selectFrom('broadcasts').select('id').execute();
    assert.equal(rows.length, 1, 'one row, not one per user');
    const [first] = users;
    const seen = (await active(first!)).items.find((b) => b.id === created.id)!;
    assert.equal(seen.poll!.myVote, null);
    const yes = created.poll!.options[0]!.id;
    const after = ok(await vote(first!, created.poll!.id, yes));
    assert.equal(after.myVote, yes);
    assert.deepEqual(
      after.options.map((o) => o.votes),
      [1, 0, 0],
    );
    expectError(await vote(first!, created.poll!.id, created.poll!.options[1]!.id), 409, 'CONFLICT');
    const other = (await active(users[1]!)).items.find((b) => b.id === created.id)!;
    assert.deepEqual([other.poll!.myVote, other.poll!.options[0]!.votes], [null, 1]);
  });

  it('404 for an unknown poll or an option of another poll; 409 outside the window', async () => {
    const a = ok(await create({ title: 'A', body: 'a', poll: { question: 'A?', options: ['x', 'y'] } }));
    const b = ok(await create({ title: 'B', body: 'b', poll: { question: 'B?', options: ['x', 'y'] } }));
    const later = ok(
      await create({
        title: 'Later',
        body: 'soon',
        startsAt: new Date(world.ctx.clock.now().getTime() + 3_600_000).toISOString(),
        endsAt: new Date(world.ctx.clock.now().getTime() + 7_200_000).toISOString(),
        poll: { question: 'L?', options: ['x', 'y'] },
      }),
    );
    let user = await signIn(world);
    expectError(await vote(user, randomUUID(), a.poll!.options[0]!.id), 404, 'NOT_FOUND');
    expectError(await vote(user, a.poll!.id, b.poll!.options[0]!.id), 404, 'NOT_FOUND');
    assert.ok(!(await active(user)).items.some((x) => x.id === later.id), 'not shown before it starts');
    expectError(await vote(user, later.poll!.id, later.poll!.options[0]!.id), 409, 'CONFLICT');
    await advanceClock(world, 3_601);
    user = await signInAgain(world, user.phone);
    assert.ok((await active(user)).items.some((x) => x.id === later.id));
    ok(await vote(user, later.poll!.id, later.poll!.options[1]!.id));
    await advanceClock(world, 3_600);
    user = await signInAgain(world, user.phone);
    assert.ok(!(await active(user)).items.some((x) => x.id === later.id), 'not shown after it ends');
    const late = await signIn(world);
    expectError(await vote(late, later.poll!.id, later.poll!.options[0]!.id), 409, 'CONFLICT');
  });

  it('50 users voting at once are all counted; one user voting 10 times at once is counted once', async () => {
    admin = await signInAgain(world, adminPhone);
    const poll = ok(await create({ title: 'Race', body: 'r', poll: { question: 'R?', options: ['a', 'b'] } }))
      .poll!;
    // The voters sign in ten at a time: the race under test is the votes, and fifty sign-ins at once
    // on a busy machine can outlast the sandbox SMS's timeout (a 502 the person would retry).
    const voters: SignedIn[] = [];
    for (let group = 0; group < 5; group += 1)
      voters.push(...(await Promise.all(Array.from({ length: 10 }, () => signIn(world)))));
    const answers = await Promise.all(voters.map((v, i) => vote(v, poll.id, poll.options[i % 2]!.id)));
    assert.ok(answers.every((a) => a.status === 200));
    const same = await Promise.all(
      Array.from({ length: 10 }, () => vote(voters[0]!, poll.id, poll.options[1]!.id)),
    );
    assert.equal(same.filter((a) => a.status === 200).length, 0, 'already voted');
    const fresh = await signIn(world);
    const once = await Promise.all(
      Array.from({ length: 10 }, () => vote(fresh, poll.id, poll.options[1]!.id)),
    );
    assert.equal(once.filter((a) => a.status === 200).length, 1);
    for (const a of once.filter((x) => x.status !== 200)) expectError(a, 409, 'CONFLICT');
    const tallies = (await active(fresh)).items.find((b) => b.poll?.id === poll.id)!.poll!;
    assert.deepEqual(
      tallies.options.map((o) => o.votes),
      [25, 26],
    );
    assert.equal(tallies.myVote, poll.options[1]!.id);
  });
});
