import { z } from 'zod';
import { nigerianPhone } from '../phone.ts';

export const otpCode = z.string().regex(/^\d{6}$/, 'a 6-digit code');
export const pin = z.string().regex(/^\d{4}$/, 'a 4-digit PIN');
const personName = z
  .string()
  .trim()
  .min(1)
  .max(60)
  // NFC first: Yoruba and Igbo names carry tone marks and under-dots ("Adébáyọ̀") that phones may
  // type decomposed; combining marks are allowed after a letter.
  .transform((name) => name.normalize('NFC'))
  .pipe(
    z.string().regex(/^\p{L}\p{M}*(?:[\p{L}\p{M}'’ .-])*$/u, 'letters, spaces, hyphens and apostrophes only'),
  );

export const requestOtpInput = z.object({ phone: nigerianPhone }).strict();
export const requestOtpOutput = z.object({ expiresInSeconds: z.number().int() });

export const tokenPair = z.object({
  accessToken: z.string(),
  refreshToken: z.string(),
  expiresInSeconds: z.number().int(),
});

export const userView = z.object({
  id: z.uuid(),
  phone: z.string(),
  email: z.string().nullable(),
  /** Transactional email goes only to a verified address (verifyEmail). */
  emailVerified: z.boolean(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  /** Tier 2 verified firstName and lastName (API.md section 4): updateProfile can no longer change them. */
  nameVerified: z.boolean(),
  kycTier: z.number().int(),
  hasPin: z.boolean(),
  referralCode: z.string(),
  roles: z.array(z.enum(['user', 'admin'])),
  /** The price level whose markups the user pays (API.md section 16); null: the default prices. */
  priceLevel: z.string().nullable(),
});

export const verifyOtpInput = z
  .object({ phone: nigerianPhone, code: otpCode, referralCode: z.string().trim().min(4).max(32).optional() })
  .strict();
export const verifyOtpOutput = tokenPair.extend({ user: userView });

export const refreshSessionInput = z.object({ refreshToken: z.string().min(20).max(200) }).strict();

export const emptyInput = z.object({}).strict();

export const verifyEmailInput = z.object({ code: z.string().regex(/^\d{6}$/, 'six digits') }).strict();
export const okOutput = z.object({ ok: z.literal(true) });

export const updateProfileInput = z
  .object({
    firstName: personName.optional(),
    lastName: personName.optional(),
    email: z.email().max(254).optional(),
  })
  .strict();

export const setTransactionPinInput = z.object({ pin, otpCode: otpCode.optional() }).strict();
export const setTransactionPinOutput = z.object({ hasPin: z.literal(true) });
