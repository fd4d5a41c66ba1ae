import type { Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { type Posting, type PostingRequest, post, postBatch, type ShardOptions } from '../ledger/postings.ts';
import type { LimitsApi } from '../limits/module.ts';

// Crediting a wallet with money from outside (a checkout top-up, a bank deposit into a dedicated
// account) happens in two steps, so that one transaction can credit many wallets (a batch of
// webhooks) and still take its ledger locks once, in the one global order (ledger/postings.ts):
// each credit is decided first (its own rows locked and checked, the posting it needs named), then
// the postings of all of them are written together, then each credit finishes with what was written.
//
// A credit is never refused for the person's maximum balance (API.md 17.2): the money has moved at
// the provider. Just before the postings are written, the wallets are locked and each credit split
// at its person's maximum (limits' api): the part over it goes to their held balance, and they are
// told.

export type CreditOutcome = 'credited' | 'already_credited' | 'unknown_reference';

/** A credit decided inside a transaction whose posting is not written yet. */
export type PendingCredit = {
  /** Who is credited how much: the posting's entry for their wallet is this credit's, split at their maximum. */
  credit: { userId: string; amountKobo: bigint };
  /** The posting, whose entries hold everything but the person's wallet entry. */
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
  limits: CreditLimits,
  trx: Transaction<DB>,
  credits: PendingCredit[],
  now: Date,
  shards: ShardOptions,
): Promise<CreditOutcome[]> {
  if (credits.length === 0) return [];
  // Only the first copy of a reference in the batch can be posted: a later one with the same content
  // meets its posting, one with other content is refused for the reference. So only first copies are
  // split at the maximum balance; a later copy takes no room (a charge heard twice must not hold the
  // person's other credits of the batch for room it never took): the same split as the first when
  // it carries the same amount, so that it meets the first's posting, else its whole amount to the
  // wallet, only so that its refused posting is whole.
  const firstOf = new Map<string, number>();
  for (const [i, { posting }] of credits.entries())
    if (!firstOf.has(posting.reference)) firstOf.set(posting.reference, i);
  const firsts = [...firstOf.values()];
  const firstSplits = await limits.splitCredits(
    trx,
    firsts.map((i) => credits[i]!.credit),
  );
  const splitOf = new Map(firsts.map((i, k) => [i, firstSplits[k]!]));
  const splits = credits.map(({ posting, credit }, i) => {
    const first = firstOf.get(posting.reference)!;
    if (first === i) return splitOf.get(i)!;
    const same = credits[first]!.credit;
    return same.userId === credit.userId && same.amountKobo === credit.amountKobo
      ? splitOf.get(first)!
      : { userId: credit.userId, walletKobo: credit.amountKobo, heldKobo: 0n };
  });
  const postings = credits.map(({ posting }, i) => ({
    ...posting,
    entries: [...posting.entries, ...limits.creditEntries(splits[i]!)],
  }));
  const posted =
    postings.length === 1
      ? [await settled(post(trx, postings[0]!, now, shards))]
      : await postBatch(trx, postings, now, shards);
  await limits.announceHeld(
    trx,
    splits.filter(
      (_, i) =>
        posted[i]!.status === 'fulfilled' && (posted[i] as PromiseFulfilledResult<Posting>).value.created,
    ),
    now,
  );
  const outcomes: CreditOutcome[] = [];
  for (const [i, credit] of credits.entries()) outcomes.push(await credit.finish(posted[i]!));
  return outcomes;
}

/** What the credits take of the limits' api: the split at the maximum balance, and the word to the person. */
export type CreditLimits = Pick<LimitsApi, 'splitCredits' | 'creditEntries' | 'announceHeld'>;

/** Decides and writes one credit in the caller's transaction. */
export async function creditOnce(
  limits: CreditLimits,
  trx: Transaction<DB>,
  decision: CreditDecision,
  now: Date,
  shards: ShardOptions,
): Promise<CreditOutcome> {
  if (!isPending(decision)) return decision;
  const [outcome] = await writeCredits(limits, trx, [decision], now, shards);
  return outcome!;
}

async function settled<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  try {
    return { status: 'fulfilled', value: await promise };
  } catch (reason) {
    return { status: 'rejected', reason };
  }
}
