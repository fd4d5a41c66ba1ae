import { z } from 'zod';
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

export const walletOperations = [
  defineOperation({
    name: 'getWallet',
    method: 'GET',
    auth: 'user',
    summary: 'Balances of the caller (naira)',
    tags: ['wallet'],
    input: z.object({}).strict(),
    output: walletView,
    errors: [],
    handler: async ({ ctx, caller }) => {
      const b = await userBalances(ctx.db, caller.userId);
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
