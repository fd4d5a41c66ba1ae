import { z } from 'zod';
import { pin } from '../auth/schemas.ts';
import { instantOutput, nairaInput, nairaOutput } from '../money-schemas.ts';
import { nigerianPhone } from '../phone.ts';

// Request and answer shapes of wallet-to-wallet transfers (API.md section 14).

/** The most TRANSFER_MAX can be (config.ts: naira settings stop at ₦1,000,000,000). */
const transferNairaMax = 1_000_000_000;

// The limits are configuration, so the service answers them (422 with details.limit); anything that
// is not naira with at most two decimals is a 400, except an amount too large to be naira exactly,
// which is above any maximum all the same.
const transferAmount = nairaInput('Amount to send, from ₦100 to TRANSFER_MAX', {
  minimum: 100,
  maximum: transferNairaMax,
  zeroAllowed: true,
  ruleRefusesAbove: transferNairaMax,
});

export const lookupRecipientInput = z.object({ phone: nigerianPhone }).strict();
export const lookupRecipientOutput = z.object({
  name: z.string(),
  /** Whether the name is the one Tier 2 verified against the NIN record, not one the user typed. */
  nameVerified: z.boolean(),
});

export const transferToUserInput = z
  .object({
    phone: nigerianPhone,
    amount: transferAmount,
    pin,
    narration: z.string().trim().max(100).optional(),
  })
  .strict();

export const transferOutput = z.object({
  id: z.string(),
  reference: z.string(),
  amount: nairaOutput('Amount sent', { minimum: 100, maximum: transferNairaMax }),
  recipient: z.object({ name: z.string() }),
  createdAt: instantOutput(),
});
