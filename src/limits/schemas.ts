import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';

// Request and answer shapes of the account limits (API.md 17.2).

const tierNumber = z.number().int().min(0).max(3);

export const getAccountLimitsInput = z.object({}).strict();
export const accountLimitsView = z.object({
  tier: tierNumber,
  dailyDebitLimit: nairaOutput(
    "Today's daily debit limit: the tighter of the tier's and the person's own",
  ).nullable(),
  dailyDebitUsed: nairaOutput('What left the wallet today (Africa/Lagos), refunds given back'),
  dailyDebitRemaining: nairaOutput('What may still leave the wallet today').nullable(),
  maxBalance: nairaOutput("The tier's maximum balance; null is none").nullable(),
  heldBalance: nairaOutput(
    'Credits over the maximum balance, held until the tier rises or the balance falls',
  ),
  dayResetsAt: instantOutput('The next Africa/Lagos midnight, when the day starts again'),
  personalDailyLimit: nairaOutput("The person's own daily limit in force today; null is none").nullable(),
  pendingPersonalDailyLimit: z
    .object({
      amount: nairaOutput('The personal daily limit from `from` on; null lifts it').nullable(),
      from: instantOutput('When it takes effect: the start of an Africa/Lagos day'),
    })
    .optional()
    .meta({ description: 'A raise (or removal) of the personal limit, waiting for the next Lagos day' }),
  nextTier: z
    .object({
      tier: tierNumber,
      dailyDebitLimit: nairaOutput("That tier's daily debit limit; null is none").nullable(),
      maxBalance: nairaOutput("That tier's maximum balance; null is none").nullable(),
    })
    .optional()
    .meta({ description: 'The next tier whose limits are higher, and its limits; absent at the top' }),
});

export const setPersonalDailyLimitInput = z
  .object({
    amount: nairaInput('Your own daily debit limit; null removes it', { zeroAllowed: true }).nullable(),
    pin,
  })
  .strict();
