import { setTimeout as delay } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../db/schema.ts';
import type { UssdScreen } from '../providers/ussd/ussd-gateway.ts';
import { keyedHash } from '../shared/keyed-hash.ts';

// A gateway repeats a callback it got no answer to, and may send it again while the first is still
// running. Each step (a session and its exact inputs) is claimed once (ussd_steps, insert on conflict
// do nothing): the claimer computes the answer and stores it; a later repeat is answered the stored
// screen (a wrong PIN is then counted once, a payment made once), and a repeat that arrives while the
// claimer works waits for its answer, briefly, since the gateway's own patience is short. The step is
// known by a keyed hash of its inputs under the pepper: the PIN among them is never stored, and a
// stolen table cannot be searched for it without the pepper.

/** What the steps are stored and told apart by. */
export type StepDeps = { db: Kysely<DB>; pepper: string };

export type StepKey = { gateway: string; sessionId: string; inputs: readonly string[] };

/** How long a repeat waits for the claimer's answer before saying it is still being worked on. */
export const repeatWaitMs = 1_500;
/** How often the waiting repeat looks at the claim again. */
const repeatPollMs = 50;

const stepHash = (pepper: string, key: StepKey): string =>
  keyedHash(pepper, 'ussd-step', `${key.gateway}\0${key.sessionId}`, key.inputs.join('*'));

/**
 * Records the session at its first step, and that it was seen now; answers when it started (its
 * payments' references are dated then, so that every repeat derives the same one) and whose phone
 * started it (a later step from another phone under the same session id is not that session's).
 */
export async function touchSession(
  db: Kysely<DB>,
  session: { gateway: string; sessionId: string; phone: string; userId: string | null; serviceCode: string },
  now: Date,
): Promise<{ startedAt: Date; phone: string }> {
  const row = await db
    .insertInto('ussd_sessions')
    .values({
      gateway: session.gateway,
      session_id: session.sessionId,
      phone: session.phone,
      user_id: session.userId,
      service_code: session.serviceCode,
      started_at: now,
      last_seen_at: now,
    })
    .onConflict((oc) => oc.columns(['gateway', 'session_id']).doUpdateSet({ last_seen_at: now }))
    .returning(['started_at', 'phone'])
    .executeTakeFirstOrThrow();
  return { startedAt: new Date(row.started_at), phone: row.phone };
}

/**
 * Answers the step once: the first to claim it computes the answer with `compute` and stores it;
 * any other call replays the stored answer, waiting for it at most repeatWaitMs.
 */
export async function answerOnce(
  deps: StepDeps,
  key: StepKey,
  now: Date,
  compute: () => Promise<UssdScreen>,
  stillWorking: UssdScreen,
): Promise<{ screen: UssdScreen; replayed: boolean }> {
  const textHash = stepHash(deps.pepper, key);
  const claimed = await deps.db
    .insertInto('ussd_steps')
    .values({ gateway: key.gateway, session_id: key.sessionId, text_hash: textHash, created_at: now })
    .onConflict((oc) => oc.columns(['gateway', 'session_id', 'text_hash']).doNothing())
    .returning('text_hash')
    .executeTakeFirst();
  if (claimed === undefined)
    return { screen: await storedAnswer(deps, key, textHash, stillWorking), replayed: true };
  let screen: UssdScreen;
  try {
    screen = await compute();
  } catch (error) {
    // Nothing was decided (the database, a bug): the claim is let go, so that the gateway's repeat
    // tries again instead of waiting on an answer that will never come.
    await deps.db
      .deleteFrom('ussd_steps')
      .where('gateway', '=', key.gateway)
      .where('session_id', '=', key.sessionId)
      .where('text_hash', '=', textHash)
      .execute()
      .catch(() => undefined);
    throw error;
  }
  await deps.db
    .updateTable('ussd_steps')
    .set({ answer_type: screen.type, answer_screen: screen.text })
    .where('gateway', '=', key.gateway)
    .where('session_id', '=', key.sessionId)
    .where('text_hash', '=', textHash)
    .execute();
  return { screen, replayed: false };
}

async function storedAnswer(
  deps: StepDeps,
  key: StepKey,
  textHash: string,
  stillWorking: UssdScreen,
): Promise<UssdScreen> {
  const waitUntil = Date.now() + repeatWaitMs;
  for (;;) {
    const row = await deps.db
      .selectFrom('ussd_steps')
      .select(['answer_type', 'answer_screen'])
      .where('gateway', '=', key.gateway)
      .where('session_id', '=', key.sessionId)
      .where('text_hash', '=', textHash)
      .executeTakeFirst();
    if (row?.answer_type != null && row.answer_screen !== null)
      return { type: row.answer_type, text: row.answer_screen };
    if (Date.now() >= waitUntil) return stillWorking;
    await delay(repeatPollMs);
  }
}

/**
 * Retention (90 days, RETENTION_USSD_SESSIONS_DAYS): one batch of the steps made before the cutoff,
 * then of the sessions last seen before it. A session's steps are never newer than its last sight, so
 * the steps go first and a session is never left without its own while it is kept.
 */
export async function purgeUssdSessions(db: Kysely<DB>, before: Date, batchMax: number): Promise<number> {
  const steps = await sql`
    delete from ussd_steps where (gateway, session_id, text_hash) in (
      select gateway, session_id, text_hash from ussd_steps where created_at < ${before} limit ${batchMax})`.execute(
    db,
  );
  const stepsDeleted = Number(steps.numAffectedRows ?? 0n);
  if (stepsDeleted >= batchMax) return stepsDeleted;
  const sessions = await sql`
    delete from ussd_sessions where (gateway, session_id) in (
      select gateway, session_id from ussd_sessions where last_seen_at < ${before}
      limit ${batchMax - stepsDeleted})`.execute(db);
  return stepsDeleted + Number(sessions.numAffectedRows ?? 0n);
}
