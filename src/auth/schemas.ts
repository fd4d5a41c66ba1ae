import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
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
  /**
   * An operator froze the account (API.md section 17.4): the person signs in and sees everything,
   * credits land, but every payment out is 403 ACCOUNT_FROZEN. Why is not said here (decision 0040).
   */
  frozen: z.boolean().meta({
    description:
      'An operator froze the account: everything can be seen and money still comes in, but every payment out (purchases, social and bulk orders, scheduled runs, transfers) is 403 ACCOUNT_FROZEN until it is unfrozen',
  }),
  ussdEnabled: z.boolean().meta({
    description:
      'The person switched on the USSD channel (API.md 17.6, setUssdEnabled): off by default; while off, dialling the service code from this phone answers how to switch it on',
  }),
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

/** setUssdEnabled (API.md 17.6): the channel on or off, with the PIN as every payment out needs it. */
export const setUssdEnabledInput = z.object({ enabled: z.boolean(), pin }).strict();
export const setUssdEnabledOutput = z.object({ ussdEnabled: z.boolean() });

export const setTransactionPinInput = z.object({ pin, otpCode: otpCode.optional() }).strict();
export const setTransactionPinOutput = z.object({ hasPin: z.literal(true) });

// An administrator's second factor (API.md section 17.4).
export const adminEnrolTotpOutput = z.object({
  secret: z.string().describe('The TOTP secret, base32 (RFC 4648): shown once, never again'),
  otpauthUrl: z.string().describe('otpauth://totp/... for an authenticator app (a QR code of it)'),
});
export const totpCodeInput = z
  .object({ code: z.string().regex(/^\d{6}$/, 'the 6-digit code of the authenticator app') })
  .strict();
export const totpVerifiedOutput = z.object({
  verifiedUntil: instantOutput('Until when admin operations are open to this session'),
});

const operatorReason = z.string().trim().min(1).max(500);

export const freezeUserInput = z
  .object({
    userId: z.uuid(),
    /** The operator's reason, recorded on the account and in the audit log; never shown to the person. */
    reason: operatorReason.meta({
      description:
        'Why, for the operators (kept on the account and in the audit log); never shown to the person',
    }),
  })
  .strict();
export const unfreezeUserInput = z
  .object({
    userId: z.uuid(),
    reason: operatorReason.meta({ description: 'Why, for the operators (kept in the audit log)' }),
  })
  .strict();
export const freezeStateOutput = z.object({
  userId: z.uuid(),
  frozen: z.boolean(),
  /** When the freeze began; null once unfrozen. */
  frozenAt: instantOutput('When the account was frozen; null when it is not').nullable(),
  /** The operator's reason for the freeze; null once unfrozen. */
  reason: z.string().nullable(),
});

// Exactly one of the two (oneOf): a person's sessions, or everyone's.
export const revokeSessionsInput = z.xor([
  z.object({ userId: z.uuid() }).strict(),
  z.object({ all: z.literal(true) }).strict(),
]);
export const revokeSessionsOutput = z.object({
  revoked: z.number().int().meta({ description: 'How many sessions were ended' }),
});

// Another administrator's lost authenticator, four eyes (API.md section 17.4, decision 0039).
export const resetTotpInput = z
  .object({
    adminId: z.uuid().meta({ description: 'The administrator whose authenticator is lost' }),
    reason: operatorReason.meta({
      description: 'Why, and how the administrator asking was confirmed (kept in the audit log)',
    }),
  })
  .strict();
export const resetTotpOutput = z.object({
  adminId: z.uuid(),
  revoked: z.number().int().meta({ description: "How many of the administrator's sessions were ended" }),
});
