import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../db/schema.ts';
import { userBalances } from '../ledger/accounts.ts';
import { koboToNaira } from '../money.ts';
import { nairaOutput } from '../money-schemas.ts';
import { defineOperation } from '../operation.ts';

export const walletView = z.object({
  balance: nairaOutput('Spendable balance'),
  lockedSavings: nairaOutput('Held in savings locks until they mature or are broken'),
  lockedBonus: nairaOutput('Referral bonus, locked for good'),
  checkinAccrued: nairaOutput('Check-in rewards accrued, withdrawable from the minimum on'),
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
