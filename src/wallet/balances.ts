import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { userBalances } from '../ledger/accounts.ts';
import { koboToNaira } from '../money.ts';
import type { walletView } from './schemas.ts';

// A wallet's balances as the API gives them (naira): the person's own (getWallet) and an operator's
// view of them (the wallet's api, adminGetUser).

export type WalletView = z.input<typeof walletView>;

/** The user's balances, read from their ledger accounts in one statement. */
export async function walletBalances(db: Kysely<DB>, userId: string): Promise<WalletView> {
  const b = await userBalances(db, userId);
  return {
    balance: koboToNaira(b.wallet),
    lockedSavings: koboToNaira(b.savings),
    lockedBonus: koboToNaira(b.bonus_locked),
    checkinAccrued: koboToNaira(b.checkin_accrued),
    heldBalance: koboToNaira(b.wallet_held),
    currency: 'NGN',
  };
}
