import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import { AppError, notFound } from '../errors.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { broadcastPushJob } from './jobs.ts';

// Broadcasts and polls (API.md sections 10 and 11). A broadcast is one row for every user, shown
// while its window is open and pushed to every subscribed device by batched jobs; its poll's votes are one row per user (the primary key refuses a second
// vote, also one sent at the same instant).

export type PollView = {
  id: string;
  question: string;
  options: Array<{ id: string; text: string; votes: number }>;
  myVote: string | null;
};

export type BroadcastView = {
  id: string;
  title: string;
  body: string;
  createdAt: string;
  startsAt: string;
  endsAt: string | null;
  poll?: PollView;
};

export type NewBroadcast = {
  title: string;
  body: string;
  startsAt?: Date | undefined;
  endsAt?: Date | undefined;
  poll?: { question: string; options: string[] } | undefined;
};

const invalid = (field: string, message: string) =>
  new AppError('VALIDATION_ERROR', message, { details: { issues: [{ path: ['data', field], message }] } });

export async function createBroadcast(
  db: Kysely<DB>,
  jobs: JobQueue,
  adminId: string,
  input: NewBroadcast,
  now: Date,
): Promise<BroadcastView> {
  const startsAt = input.startsAt ?? now;
  if (input.endsAt !== undefined && input.endsAt <= startsAt) {
    throw invalid('endsAt', 'endsAt must come after startsAt');
  }
  if (input.endsAt !== undefined && input.endsAt <= now)
    throw invalid('endsAt', 'endsAt must be in the future');
  const options = input.poll?.options ?? [];
  if (new Set(options.map((o) => o.toLowerCase())).size !== options.length) {
    throw invalid('poll', 'the poll options must differ');
  }
  const id = newId();
  const poll =
    input.poll === undefined
      ? undefined
      : {
          id: newId(),
          question: input.poll.question,
          options: options.map((text) => ({ id: newId(), text })),
        };
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('broadcasts')
      .values({
        id,
        title: input.title,
        body: input.body,
        created_by: adminId,
        created_at: now,
        starts_at: startsAt,
        ends_at: input.endsAt ?? null,
      })
      .execute();
    // The push fan-out's first page, when the broadcast opens (pushes.ts).
    await jobs.send(broadcastPushJob, { broadcastId: id, after: null }, { db: trx, startAfter: startsAt });
    if (poll === undefined) return;
    await trx
      .insertInto('polls')
      .values({ id: poll.id, broadcast_id: id, question: poll.question })
      .execute();
    await trx
      .insertInto('poll_options')
      .values(poll.options.map((o, position) => ({ id: o.id, poll_id: poll.id, position, text: o.text })))
      .execute();
  });
  return {
    id,
    title: input.title,
    body: input.body,
    createdAt: now.toISOString(),
    startsAt: startsAt.toISOString(),
    endsAt: input.endsAt?.toISOString() ?? null,
    ...(poll === undefined
      ? {}
      : { poll: { ...poll, options: poll.options.map((o) => ({ ...o, votes: 0 })), myVote: null } }),
  };
}

/** The broadcasts open now, newest first, with their polls' tallies and the caller's vote. */
export async function listActiveBroadcasts(
  db: Kysely<DB>,
  userId: string,
  page: { limit: number; offset: number },
  now: Date,
): Promise<{ items: BroadcastView[]; total: number }> {
  const open = db
    .selectFrom('broadcasts')
    .where('starts_at', '<=', now)
    .where((eb) => eb.or([eb('ends_at', 'is', null), eb('ends_at', '>', now)]));
  const rows = await open
    .selectAll()
    .orderBy('starts_at', 'desc')
    .orderBy('id', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
  const counted = await open
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('n'))
    .executeTakeFirstOrThrow();
  const polls = await pollsOf(
    db,
    rows.map((r) => r.id),
    userId,
  );
  return {
    items: rows.map((row) => {
      const poll = polls.get(row.id);
      return {
        id: row.id,
        title: row.title,
        body: row.body,
        createdAt: row.created_at.toISOString(),
        startsAt: row.starts_at.toISOString(),
        endsAt: row.ends_at?.toISOString() ?? null,
        ...(poll === undefined ? {} : { poll }),
      };
    }),
    total: Number(counted.n),
  };
}

/** The polls of these broadcasts by broadcast id, with each option's votes and the user's vote. */
async function pollsOf(
  db: Kysely<DB>,
  broadcastIds: string[],
  userId: string,
): Promise<Map<string, PollView>> {
  if (broadcastIds.length === 0) return new Map();
  const { rows } = await sql<{
    broadcast_id: string;
    poll_id: string;
    question: string;
    option_id: string;
    text: string;
    votes: string | number;
    mine: boolean;
  }>`
    select p.broadcast_id, p.id as poll_id, p.question, o.id as option_id, o.text,
      (select count(*) from poll_votes v where v.option_id = o.id) as votes,
      exists (select 1 from poll_votes v where v.option_id = o.id and v.user_id = ${userId}) as mine
    from polls p join poll_options o on o.poll_id = p.id
    where p.broadcast_id = any(${broadcastIds}::uuid[])
    order by p.id, o.position`.execute(db);
  const polls = new Map<string, PollView>();
  for (const row of rows) {
    let poll = polls.get(row.broadcast_id);
    if (poll === undefined) {
      poll = { id: row.poll_id, question: row.question, options: [], myVote: null };
      polls.set(row.broadcast_id, poll);
    }
    poll.options.push({ id: row.option_id, text: row.text, votes: Number(row.votes) });
    if (row.mine) poll.myVote = row.option_id;
  }
  return polls;
}

/**
 * Records the user's vote: an unknown poll, or an option not of this poll, is 404; a poll whose
 * broadcast is not open now, or a second vote, is 409 CONFLICT. Answers the poll with its tallies.
 */
export async function votePoll(
  db: Kysely<DB>,
  userId: string,
  pollId: string,
  optionId: string,
  now: Date,
): Promise<PollView> {
  const poll = await db
    .selectFrom('polls as p')
    .innerJoin('broadcasts as b', 'b.id', 'p.broadcast_id')
    .select(['p.broadcast_id', 'b.starts_at', 'b.ends_at'])
    .where('p.id', '=', pollId)
    .executeTakeFirst();
  if (poll === undefined) throw notFound('poll');
  const option = await db
    .selectFrom('poll_options')
    .select('id')
    .where('id', '=', optionId)
    .where('poll_id', '=', pollId)
    .executeTakeFirst();
  if (option === undefined) throw notFound('poll option');
  if (poll.starts_at > now || (poll.ends_at !== null && poll.ends_at <= now)) {
    throw new AppError('CONFLICT', 'the poll is not open for voting now');
  }
  const voted = await db
    .insertInto('poll_votes')
    .values({ poll_id: pollId, user_id: userId, option_id: optionId, created_at: now })
    .onConflict((oc) => oc.columns(['poll_id', 'user_id']).doNothing())
    .returning('option_id')
    .executeTakeFirst();
  if (voted === undefined) throw new AppError('CONFLICT', 'you have already voted in this poll');
  return (await pollsOf(db, [poll.broadcast_id], userId)).get(poll.broadcast_id)!;
}
