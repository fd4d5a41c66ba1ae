import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
import { nigerianPhone } from '../phone.ts';
import { walletTransaction, walletView } from '../wallet/schemas.ts';

// Schemas of the operators' look-up of a person (adminGetUser, issue 40): whom a phone or an id
// names, their account's state and what last moved their wallet, without reading the database.

/** How many of a person's latest wallet movements the look-up gives. */
export const lookupMovementsMax = 50;

export const getUserInput = z
  .object({
    userId: z.uuid().optional().describe('The person’s id (on alerts, disputes, KYC reviews, audit entries)'),
    phone: nigerianPhone
      .optional()
      .describe(
        'The person’s phone as people write it: 0803…, 234803… or +234803… (in a query string, + is %2B)',
      ),
  })
  .strict()
  .superRefine((input, ctx) => {
    const given = (input.userId === undefined ? 0 : 1) + (input.phone === undefined ? 0 : 1);
    if (given !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['userId'],
        message: given === 0 ? 'give userId or phone' : 'give userId or phone, not both',
      });
  });

export const operatorUserView = z.object({
  id: z.uuid(),
  phone: z.string().describe('E.164 (+234…)'),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  email: z.string().nullable(),
  kycTier: z.number().int().describe('The highest KYC tier approved (0: none)'),
  roles: z.array(z.enum(['user', 'admin'])),
  frozen: z.boolean().describe('An operator froze the account: no payment out until it is unfrozen'),
  frozenAt: instantOutput('When the account was frozen; null when it is not').nullable(),
  frozenReason: z
    .string()
    .nullable()
    .describe('The operator’s reason for the freeze (never shown to the person); null when not frozen'),
  frozenBy: z.uuid().nullable().describe('The operator who froze it; null when not frozen'),
  createdAt: instantOutput('When the person first signed in'),
  wallet: walletView,
  movements: z
    .array(walletTransaction)
    .describe(
      `The latest ${lookupMovementsMax} movements of the wallet, newest first, as the person’s own history (listTransactions) gives them`,
    ),
  movementsTotal: z.number().int().describe('How many movements the wallet has in all'),
});
