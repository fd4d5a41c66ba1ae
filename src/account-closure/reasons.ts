import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../db/schema.ts';
import { balancesOf, lockedUserBalance, userAccount } from '../ledger/accounts.ts';
import type { AccountClosureModuleDeps } from './deps.ts';
import type { ClosureReason } from './schemas.ts';

// What stops an account closing (API.md 17.3): every reason that applies, each read through the
// domain that owns it. A request is decided, and a closing re-decided at its effective time, under
// the person's wallet lock (lockedReasons): the lock every purchase, transfer, savings lock and
// credit of theirs takes for its posting, in the ledger's one order (wallet, then held balance).
// A purchase accepted before it is then counted (recorded in its debit's transaction), and one after
// it waits, to find a request that an empty wallet let through and the closing that follows, still
// an empty wallet, which it cannot pay from.

type Handle = Kysely<DB> | Transaction<DB>;

/** The domains' reads a reason needs (module.ts says whose each is). */
export type ReasonReads = Pick<
  AccountClosureModuleDeps,
  'processingPurchasesOf' | 'openDisputesOf' | 'activeLocksOf' | 'openSchedulesOf'
>;

/** The reasons, in the contract's order, given the balances (kobo) and the other domains' state. */
async function reasonsGiven(
  deps: ReasonReads,
  db: Handle,
  userId: string,
  balances: { walletKobo: bigint; heldKobo: bigint },
): Promise<ClosureReason[]> {
  // One after the other: in a transaction they share its one connection.
  const processing = await deps.processingPurchasesOf(db, userId);
  const disputes = await deps.openDisputesOf(db, userId);
  const locks = await deps.activeLocksOf(db, userId);
  const schedules = await deps.openSchedulesOf(db, userId);
  const applies: Record<ClosureReason, boolean> = {
    balance_not_zero: balances.walletKobo !== 0n,
    held_balance: balances.heldKobo !== 0n,
    purchases_processing: processing > 0,
    open_dispute: disputes > 0,
    active_savings: locks > 0,
    active_schedules: schedules > 0,
  };
  return (Object.keys(applies) as ClosureReason[]).filter((reason) => applies[reason]);
}

/**
 * The reasons, decided in the caller's transaction with the person's wallet and held balance locked
 * to its end (so that no movement of theirs commits in between). Lock nothing of the ledger before.
 */
export async function lockedReasons(
  deps: ReasonReads,
  trx: Transaction<DB>,
  userId: string,
): Promise<ClosureReason[]> {
  const walletKobo = await lockedUserBalance(trx, userAccount('wallet', userId));
  const heldKobo = await lockedUserBalance(trx, userAccount('wallet_held', userId));
  return reasonsGiven(deps, trx, userId, { walletKobo, heldKobo });
}

/** The reasons as they stand, read without a lock: what the person is shown before they ask. */
export async function currentReasons(
  deps: ReasonReads,
  db: Kysely<DB>,
  userId: string,
): Promise<ClosureReason[]> {
  const wallet = userAccount('wallet', userId);
  const held = userAccount('wallet_held', userId);
  const balances = await balancesOf(db, [wallet, held]);
  return reasonsGiven(deps, db, userId, {
    walletKobo: balances.get(wallet) ?? 0n,
    heldKobo: balances.get(held) ?? 0n,
  });
}
