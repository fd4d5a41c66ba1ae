import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { publishEvents } from '../events/domain-events.ts';
import { newId } from '../ids.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { lockUserAccounts, peopleWithHeldBalance, userAccount } from '../ledger/accounts.ts';
import { type PostingEntry, postBatch } from '../ledger/postings.ts';
import { limitsOfTier, type TierLimits } from './tier-limits.ts';

// The maximum balance loses nothing (API.md 17.2, decision 0045). A credit is never refused: the
// money has already moved at the provider or in another wallet. The part that would take the
// wallet over the tier's maximum goes to the person's held balance (`wallet_held:<id>`, a user
// account of the ledger, not spendable), split on the balance read under the wallet's lock; it moves
// into the wallet by itself, under the same locks, when the tier rises (kyc.tier_approved) or the
// balance falls far enough (a sweep every minute), as much as there is room for, each kobo once.

export type TiersAmong = (
  db: Kysely<DB> | Transaction<DB>,
  userIds: readonly string[],
) => Promise<Map<string, number>>;

export type HeldBalanceDeps = {
  db: Kysely<DB>;
  jobs: JobQueue;
  limits: TierLimits;
  tiersAmong: TiersAmong;
};

/** A credit to a person, and how it lands: in the wallet up to the maximum, the rest held. */
export type CreditSplit = { userId: string; walletKobo: bigint; heldKobo: bigint };

/**
 * Splits credits at their people's maximum balance, in order (two credits to one person see each
 * other). Locks the wallets of the credited people and `alsoLocked` (every other wallet the posting
 * will move, such as a transfer's sender) first, in the one lock order, then reads their tiers: the
 * caller posts right after, in the same transaction, with `creditEntries`.
 */
export async function splitCredits(
  deps: Pick<HeldBalanceDeps, 'limits' | 'tiersAmong'>,
  trx: Transaction<DB>,
  credits: ReadonlyArray<{ userId: string; amountKobo: bigint }>,
  alsoLocked: readonly string[] = [],
): Promise<CreditSplit[]> {
  const people = [...new Set(credits.map((c) => c.userId))];
  const balances = await lockUserAccounts(trx, [
    ...people.map((id) => userAccount('wallet', id)),
    ...alsoLocked.map((id) => userAccount('wallet', id)),
  ]);
  const tiers = await deps.tiersAmong(trx, people);
  return credits.map(({ userId, amountKobo }) => {
    const code = userAccount('wallet', userId);
    const balance = balances.get(code) ?? 0n;
    const max = limitsOfTier(deps.limits, tiers.get(userId) ?? 0).balanceKobo;
    const room = max === null ? amountKobo : max > balance ? max - balance : 0n;
    const walletKobo = amountKobo < room ? amountKobo : room;
    balances.set(code, balance + walletKobo);
    return { userId, walletKobo, heldKobo: amountKobo - walletKobo };
  });
}

/** The ledger entries that credit a split: the wallet's part and the held part, zeroes left out. */
export const creditEntries = (split: CreditSplit): PostingEntry[] =>
  [
    { account: userAccount('wallet', split.userId), amount: split.walletKobo },
    { account: userAccount('wallet_held', split.userId), amount: split.heldKobo },
  ].filter((entry) => entry.amount !== 0n);

/** Tells the people whose credits were held, in the transaction that posted them. */
export async function announceHeld(
  deps: Pick<HeldBalanceDeps, 'jobs' | 'limits'>,
  trx: Transaction<DB>,
  splits: readonly CreditSplit[],
  now: Date,
): Promise<void> {
  const held = new Map<string, bigint>();
  for (const s of splits) if (s.heldKobo > 0n) held.set(s.userId, (held.get(s.userId) ?? 0n) + s.heldKobo);
  await publishEvents(
    deps.jobs,
    trx,
    [...held].map(([userId, heldKobo]) => ({
      type: 'limits.balance_held' as const,
      userId,
      heldKobo: heldKobo.toString(),
      occurredAt: now.toISOString(),
    })),
  );
}

/**
 * Moves into the wallet as much of the person's held balance as their maximum now leaves room for,
 * in one transaction under both accounts' locks (so each kobo moves once, whoever runs it), and
 * tells them. Returns what moved.
 */
export async function releaseHeld(deps: HeldBalanceDeps, userId: string, now: Date): Promise<bigint> {
  return deps.db.transaction().execute(async (trx) => {
    const wallet = userAccount('wallet', userId);
    const held = userAccount('wallet_held', userId);
    const balances = await lockUserAccounts(trx, [wallet, held]);
    const heldKobo = balances.get(held) ?? 0n;
    if (heldKobo === 0n) return 0n;
    const tier = (await deps.tiersAmong(trx, [userId])).get(userId) ?? 0;
    const max = limitsOfTier(deps.limits, tier).balanceKobo;
    const balance = balances.get(wallet) ?? 0n;
    const room = max === null ? heldKobo : max > balance ? max - balance : 0n;
    const moved = heldKobo < room ? heldKobo : room;
    if (moved === 0n) return 0n;
    const [posted] = await postBatch(
      trx,
      [
        {
          // Decided on the balances read under the locks, not on the reference: a second run finds
          // less held (or no room) and moves only that.
          reference: `held-release:${newId()}`,
          description: 'Held balance released into your wallet',
          entries: [
            { account: held, amount: -moved },
            { account: wallet, amount: moved },
          ],
        },
      ],
      now,
      { referencesUnposted: true },
    );
    if (posted!.status === 'rejected') throw posted!.reason;
    await publishEvents(deps.jobs, trx, [
      {
        type: 'limits.held_released',
        userId,
        releasedKobo: moved.toString(),
        stillHeldKobo: (heldKobo - moved).toString(),
        occurredAt: now.toISOString(),
      },
    ]);
    return moved;
  });
}

/**
 * The release sweep: each run looks at `pageMax` people with a held balance and releases what each
 * has room for. A run goes on after the last person the one before looked at, and starts over past
 * the end, so a first page of people with no room never keeps everyone after them waiting. The place
 * is this process's; another worker's sweep keeps its own (each release is decided under the locks).
 */
export function createReleaseSweep(
  deps: HeldBalanceDeps,
  now: () => Date,
  pageMax: number,
): () => Promise<bigint> {
  let after: string | undefined;
  return async () => {
    const people = await peopleWithHeldBalance(deps.db, pageMax, after);
    after = people.length < pageMax ? undefined : people.at(-1);
    let moved = 0n;
    for (const userId of people) moved += await releaseHeld(deps, userId, now());
    return moved;
  };
}
