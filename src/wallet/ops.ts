import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { userBalances } from '../ledger/accounts.ts';
import { koboToNaira } from '../money.ts';
import { defineOperation } from '../operation.ts';

export const walletView = z.object({
  balance: z.number(),
  lockedSavings: z.number(),
  lockedBonus: z.number(),
  checkinAccrued: z.number(),
  currency: z.literal('NGN'),
});

/** What the wallet's reads need: the balances are the ledger's. */
export type WalletDeps = { db: Kysely<DB> };

/** The wallet operations, closed over the module's deps. */
export const walletOperations = (deps: WalletDeps) => [
  defineOperation({
    name: 'getWallet',
    method: 'GET',
    auth: 'user',
    summary: 'Balances of the caller (naira)',
    tags: ['wallet'],
    input: z.object({}).strict(),
    output: walletView,
    errors: [],
    handler: async ({ caller }) => {
      const b = await userBalances(deps.db, caller.userId);
      return {
        balance: koboToNaira(b.wallet),
        lockedSavings: koboToNaira(b.savings),
        lockedBonus: koboToNaira(b.bonus_locked),
        checkinAccrued: koboToNaira(b.checkin_accrued),
        currency: 'NGN' as const,
      };
    },
  }),
];
