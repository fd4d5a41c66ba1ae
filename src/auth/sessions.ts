import { type Kysely, sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Batching } from '../db/batching.ts';
import { statement } from '../db/prepared.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import type { Caller } from '../operation.ts';
import { newToken, sha256Hex } from '../shared/keyed-hash.ts';
import { rolesOf } from './users.ts';

// Sessions: an opaque access token (15 minutes) and a refresh token (30 days), both stored only as
// SHA-256. Refreshing rotates the refresh token; presenting a rotated one again means it was stolen
// or replayed, so the whole session is revoked.

export const ACCESS_TTL_SECONDS = 15 * 60;
export const REFRESH_TTL_SECONDS = 30 * 24 * 60 * 60;

export type TokenPair = { accessToken: string; refreshToken: string; expiresInSeconds: number };

type Deps = { db: Kysely<DB>; clock: Clock };

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

async function issueTokens(db: Kysely<DB>, sessionId: string, now: Date): Promise<TokenPair> {
  const accessToken = newToken();
  const refreshToken = newToken();
  await db
    .insertInto('access_tokens')
    .values({
      token_hash: sha256Hex(accessToken),
      session_id: sessionId,
      expires_at: after(now, ACCESS_TTL_SECONDS),
    })
    .execute();
  await db
    .insertInto('refresh_tokens')
    .values({
      token_hash: sha256Hex(refreshToken),
      session_id: sessionId,
      expires_at: after(now, REFRESH_TTL_SECONDS),
      rotated_at: null,
    })
    .execute();
  return { accessToken, refreshToken, expiresInSeconds: ACCESS_TTL_SECONDS };
}

export async function startSession(deps: Deps, userId: string): Promise<TokenPair> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const sessionId = newId();
    await trx
      .insertInto('sessions')
      .values({
        id: sessionId,
        user_id: userId,
        created_at: now,
        expires_at: after(now, REFRESH_TTL_SECONDS),
        revoked_at: null,
        revoked_reason: null,
      })
      .execute();
    return issueTokens(trx, sessionId, now);
  });
}

const invalidRefresh = () =>
  new AppError('UNAUTHENTICATED', 'the refresh token is invalid, expired or revoked');

export async function refreshSession(deps: Deps, refreshToken: string): Promise<TokenPair> {
  const now = deps.clock.now();
  const outcome = await deps.db.transaction().execute(async (trx) => {
    // FOR UPDATE: two concurrent refreshes with one token are a reuse, and exactly one may win.
    const row = await trx
      .selectFrom('refresh_tokens as r')
      .innerJoin('sessions as s', 's.id', 'r.session_id')
      .select([
        'r.token_hash',
        'r.session_id',
        'r.expires_at',
        'r.rotated_at',
        's.revoked_at',
        's.expires_at as session_expires_at',
      ])
      .where('r.token_hash', '=', sha256Hex(refreshToken))
      .forUpdate()
      .executeTakeFirst();
    if (row === undefined || row.revoked_at !== null) return { kind: 'invalid' as const };
    if (row.rotated_at !== null) {
      await revoke(trx, row.session_id, now, 'refresh_token_reuse');
      return { kind: 'reused' as const };
    }
    if (row.expires_at <= now || row.session_expires_at <= now) return { kind: 'invalid' as const };
    await trx
      .updateTable('refresh_tokens')
      .set({ rotated_at: now })
      .where('token_hash', '=', row.token_hash)
      .execute();
    // The previous access token dies with the rotation: one live access token per session.
    await trx.deleteFrom('access_tokens').where('session_id', '=', row.session_id).execute();
    return { kind: 'ok' as const, tokens: await issueTokens(trx, row.session_id, now) };
  });
  // The revocation above must commit, so the error is raised only after the transaction.
  if (outcome.kind !== 'ok') throw invalidRefresh();
  return outcome.tokens;
}

async function revoke(db: Kysely<DB>, sessionId: string, now: Date, reason: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
  await db.deleteFrom('access_tokens').where('session_id', '=', sessionId).execute();
}

export async function signOut(deps: Deps, sessionId: string): Promise<void> {
  await deps.db.transaction().execute((trx) => revoke(trx, sessionId, deps.clock.now(), 'signed_out'));
}

/**
 * The callers of many access tokens (by hash) in one query: the router's batched authentication,
 * which runs for nearly every request.
 */
export async function callersOf(
  deps: Deps & { adminPhones: ReadonlySet<string> },
  tokenHashes: string[],
): Promise<Map<string, Caller>> {
  // Every authenticated request: prepared once per connection (the hashes go in as one array).
  const { rows } = await statement<{
    token_hash: string;
    session_id: string;
    user_id: string;
    phone: string;
    second_factor_until: Date | null;
  }>('auth.callers-by-token')`
    select a.token_hash, s.id as session_id, u.id as user_id, u.phone, s.second_factor_until
    from access_tokens a join sessions s on s.id = a.session_id join users u on u.id = s.user_id
    where a.token_hash = any(${tokenHashes}::text[]) and a.expires_at > ${deps.clock.now()}::timestamptz
      and s.revoked_at is null`.execute(deps.db);
  return new Map(
    rows.map((row) => [
      row.token_hash,
      {
        userId: row.user_id,
        sessionId: row.session_id,
        phone: row.phone,
        roles: rolesOf(row.phone, deps.adminPhones),
        secondFactorUntil: row.second_factor_until,
      },
    ]),
  );
}

/**
 * Resolves a bearer token to its caller, or null when it is unknown, expired or revoked. Batched:
 * the tokens presented in one turn are looked up together.
 */
export function createAuthenticator(
  deps: Deps & { adminPhones: ReadonlySet<string> },
  batching: Batching,
): (accessToken: string) => Promise<Caller | null> {
  // Reads only: several batches may run at once on a pool.
  const load = batching.loader((hashes: string[]) => callersOf(deps, hashes), {
    batchMax: 200,
    concurrency: 4,
  });
  return async (accessToken) => (await load(sha256Hex(accessToken))) ?? null;
}

/** Deletes tokens and sessions that can no longer be used (run by a job). */
export async function purgeExpiredSessions(deps: Deps): Promise<void> {
  const now = deps.clock.now();
  await deps.db.deleteFrom('access_tokens').where('expires_at', '<=', now).execute();
  await deps.db.deleteFrom('refresh_tokens').where('expires_at', '<=', now).execute();
  // An expired session can never be refreshed again; its remaining tokens go with it (cascade).
  await deps.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

/**
 * An operator ends sessions at once (API.md 17.4, decision 0040): one person's, or everyone's but
 * the calling operator's own `sparedSessionId` (so the operator is not locked out mid-incident).
 * Each session not revoked yet is marked revoked (it can no longer be refreshed) and its access
 * tokens are deleted, in one statement: every request reads its token's row (callersOf, no cache in
 * any process), so the next request with one is 401 on every process. Answers how many sessions
 * were ended (one expired but not purged yet counts too: its last access token may still be alive).
 */
export async function revokeSessions(
  db: Kysely<DB> | Transaction<DB>,
  target: { userId: string } | { all: true; sparedSessionId: string },
  now: Date,
): Promise<number> {
  const whose =
    'userId' in target ? sql`user_id = ${target.userId}::uuid` : sql`id <> ${target.sparedSessionId}::uuid`;
  const { rows } = await sql<{ revoked: string | number | bigint }>`
    with ended as (
      update sessions set revoked_at = ${now}::timestamptz, revoked_reason = 'revoked_by_operator'
      where revoked_at is null and ${whose}
      returning id
    ), tokens as (
      delete from access_tokens where session_id in (select id from ended)
    )
    select count(*) as revoked from ended`.execute(db);
  return Number(rows[0]!.revoked);
}
