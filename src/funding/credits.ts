import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { type Posting, type PostingRequest, post, postBatch } from '../ledger/postings.ts';

// Crediting a wallet with money from outside (a checkout top-up, a bank deposit into a dedicated
// account) happens in two steps, so that one transaction can credit many wallets (a batch of
// webhooks) and still take its ledger locks once, in the one global order (ledger/postings.ts):
// each credit is decided first (its own rows locked and checked, the posting it needs named), then
// the postings of all of them are written together, then each credit finishes with what was written.

export type CreditOutcome = 'credited' | 'already_credited' | 'unknown_reference';

/** A credit decided inside a transaction whose posting is not written yet. */
export type PendingCredit = {
  posting: PostingRequest;
  /** Finishes the credit in the same transaction, given its posting as written (or refused). */
  finish(posted: PromiseSettledResult<Posting>): Promise<CreditOutcome>;
};

/** A credit that needs no posting answers at once; another waits for writeCredits. */
export type CreditDecision = CreditOutcome | PendingCredit;

export const isPending = <Done extends string>(decision: Done | PendingCredit): decision is PendingCredit =>
  typeof decision !== 'string';

/**
 * Writes the postings of decided credits, then finishes each, in order. One credit goes through
 * post(), which waits for a concurrent posting of the same reference and answers with it; several
 * go through one postBatch, which locks every wallet before the collections pool.
 */
export async function writeCredits(
  trx: Transaction<DB>,
  credits: PendingCredit[],
  now: Date,
): Promise<CreditOutcome[]> {
  if (credits.length === 0) return [];
  const posted =
    credits.length === 1
      ? [await settled(post(trx, credits[0]!.posting, now))]
      : await postBatch(
          trx,
          credits.map((credit) => credit.posting),
          now,
        );
  const outcomes: CreditOutcome[] = [];
  for (const [i, credit] of credits.entries()) outcomes.push(await credit.finish(posted[i]!));
  return outcomes;
}

/** Decides and writes one credit in the caller's transaction. */
export async function creditOnce(
  trx: Transaction<DB>,
  decision: CreditDecision,
  now: Date,
): Promise<CreditOutcome> {
  if (!isPending(decision)) return decision;
  const [outcome] = await writeCredits(trx, [decision], now);
  return outcome!;
}

async function settled<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  try {
    return { status: 'fulfilled', value: await promise };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}
