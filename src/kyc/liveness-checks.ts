import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { AppError } from '../errors.ts';
import { newId } from '../ids.ts';
import { keyedHash, newToken, sha256Hex } from '../shared/keyed-hash.ts';

// Tier 1 face checks belong to the person who started them (decision 0006, "Liveness checks").
// getKycLivenessUrl starts one with a 256-bit one-time state (stored as its SHA-256); the provider's
// page hands the state back beside its liveness token, and submitKycTier1 takes a widget's token
// only with the state of a check the caller started, unused and unexpired. Each token is accepted
// once (its keyed hash is unique), whoever submits it and whatever the provider would say again.

/** How long a started check waits for its token. */
export const LIVENESS_CHECK_TTL_SECONDS = 30 * 60;

/** The sandbox provider's magic tokens (API.md section 8): they need no check, only the sandbox. */
export const SANDBOX_LIVENESS_TOKENS: readonly string[] = ['sandbox-pass', 'sandbox-fail'];

/**
 * The most face checks one user may have started and not used at once (another tab, a retry): a new
 * one retires the oldest, so calling getKycLivenessUrl in a loop keeps a handful of rows, not one per
 * call.
 */
export const LIVENESS_CHECKS_OPEN_MAX = 5;

export type StartedCheck = { state: string; expiresAt: Date };

/**
 * Starts a check for the user. The user's checks that were never used go when they have expired or
 * are older than the newest LIVENESS_CHECKS_OPEN_MAX - 1 (used ones stay: their token hashes keep
 * each token to one use).
 */
export async function startLivenessCheck(
  db: Kysely<DB>,
  clock: Clock,
  userId: string,
): Promise<StartedCheck> {
  const now = clock.now();
  const state = newToken();
  const expiresAt = new Date(now.getTime() + LIVENESS_CHECK_TTL_SECONDS * 1000);
  await db
    .deleteFrom('kyc_liveness_checks')
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb('expires_at', '<=', now),
        eb(
          'id',
          'not in',
          eb
            .selectFrom('kyc_liveness_checks')
            .select('id')
            .where('user_id', '=', userId)
            .where('used_at', 'is', null)
            .where('expires_at', '>', now)
            .orderBy('created_at', 'desc')
            .orderBy('id', 'desc')
            .limit(LIVENESS_CHECKS_OPEN_MAX - 1),
        ),
      ]),
    )
    .execute();
  await db
    .insertInto('kyc_liveness_checks')
    .values({
      id: newId(),
      state_hash: sha256Hex(state),
      user_id: userId,
      created_at: now,
      expires_at: expiresAt,
      used_at: null,
      token_hash: null,
    })
    .execute();
  return { state, expiresAt };
}

export const livenessTokenHash = (pepper: string, token: string): string =>
  keyedHash(pepper, 'liveness-token', 'kyc', token);

const stateRefused = (message: string) =>
  new AppError('VALIDATION_ERROR', message, {
    details: { issues: [{ path: ['data', 'state'], message }] },
  });
// details.reason as for every submission's 409 (service.ts): either way the face check must be done again.
const tokenUsed = () =>
  new AppError('CONFLICT', 'this liveness token was already used; do the face check again', {
    details: { reason: 'check_used' },
  });
const checkUsed = () =>
  new AppError('CONFLICT', 'this face check was already submitted; start a new one', {
    details: { reason: 'check_used' },
  });

/**
 * Refuses, before the provider is asked (which would spend the token), a token with no state, a
 * state that is not of a live check of this user's, a used check, or a token already accepted
 * (tokenHash null: a sandbox magic token, never kept as spent).
 */
export async function assertCheckOpen(
  db: Kysely<DB>,
  now: Date,
  userId: string,
  state: string | undefined,
  tokenHash: string | null,
): Promise<void> {
  if (state === undefined) {
    // Both fields are named: the token is not one that counts alone (a client that sent an unknown
    // token without a state, as before states existed, still sees data.livenessToken refused).
    const message = 'a token from the face-check page counts only with the state getKycLivenessUrl gave';
    throw new AppError('VALIDATION_ERROR', message, {
      details: {
        issues: [
          { path: ['data', 'state'], message: 'required with a token from the face-check page' },
          { path: ['data', 'livenessToken'], message: 'not a token that counts without its check' },
        ],
      },
    });
  }
  const check = await db
    .selectFrom('kyc_liveness_checks')
    .select(['user_id', 'expires_at', 'used_at'])
    .where('state_hash', '=', sha256Hex(state))
    .executeTakeFirst();
  // Another person's check reads as unknown: a state says nothing about who started it.
  if (check === undefined || check.user_id !== userId || check.expires_at.getTime() <= now.getTime()) {
    throw stateRefused('not a face check you started, or it expired; start a new one');
  }
  if (check.used_at !== null) throw checkUsed();
  if (tokenHash === null) return;
  const spent = await db
    .selectFrom('kyc_liveness_checks')
    .select('id')
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
  if (spent !== undefined) throw tokenUsed();
}

/**
 * Marks the check used with its token, in the transaction that records the decision: the one
 * submission that gets here first wins, a concurrent one finds the check used (409) or the token's
 * unique hash taken (409 from the unique violation).
 */
export async function useCheck(
  trx: Transaction<DB>,
  now: Date,
  userId: string,
  state: string,
  tokenHash: string | null,
): Promise<void> {
  const used = await trx
    .updateTable('kyc_liveness_checks')
    .set({ used_at: now, token_hash: tokenHash })
    .where('state_hash', '=', sha256Hex(state))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (used.numUpdatedRows === 0n) throw checkUsed();
}
