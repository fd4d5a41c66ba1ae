import { z } from 'zod';
import { instantOutput } from '../money-schemas.ts';
import { pageInput } from '../paging.ts';
import { nigerianPhone } from '../phone.ts';

export const kycStatusValue = z.enum(['none', 'pending', 'approved', 'rejected']);

export const kycTierView = z.object({
  tier: z.number().int(),
  status: kycStatusValue,
  reason: z.string().optional(),
  documentId: z.uuid().optional(),
});

export const kycStatusOutput = z.object({ tier: z.number().int(), tiers: z.array(kycTierView) });

/** The one-time state of a face check (getKycLivenessUrl): 256 random bits, URL-safe base64. */
const livenessState = z.string().regex(/^[A-Za-z0-9_-]{16,128}$/, 'the state getKycLivenessUrl gave');

export const submitTier1Input = z
  .object({
    livenessToken: z.string().min(1).max(200),
    // Required with a token from the provider's page; the sandbox's magic tokens need none.
    state: livenessState.optional(),
  })
  .strict();

export const livenessUrlOutput = z.object({
  /** The provider's page, with the state in its query. */
  url: z.string(),
  state: z.string(),
  expiresAt: instantOutput(),
});

export const submitTier2Input = z
  .object({ nin: z.string().regex(/^\d{11}$/, 'an 11-digit NIN'), phone: nigerianPhone })
  .strict();

export const documentTypes = ['passport', 'drivers_licence', 'voters_card', 'nin_slip'] as const;
export const documentMimeTypes = ['image/jpeg', 'image/png', 'application/pdf'] as const;

export const submitTier3Input = z
  .object({
    bankCode: z.string().regex(/^\d{3,6}$/, 'a 3- to 6-digit bank code'),
    accountNumber: z.string().regex(/^\d{10}$/, 'a 10-digit NUBAN account number'),
    documentType: z.enum(documentTypes),
    // Size is enforced on the decoded bytes (413); this only bounds the string itself.
    documentBase64: z
      .string()
      .min(4)
      .max(8 * 1024 * 1024),
    documentMimeType: z.enum(documentMimeTypes),
  })
  .strict();

export const documentUrlInput = z.object({ documentId: z.uuid() }).strict();
export const documentUrlOutput = z.object({ url: z.string(), expiresAt: instantOutput() });

const reviewStatus = z.enum(['pending', 'approved', 'rejected']);

export const listReviewsInput = z
  .object({
    status: reviewStatus.default('pending'),
    ...pageInput,
  })
  .strict();

export const listReviewsOutput = z.object({
  items: z.array(
    z.object({
      submissionId: z.uuid(),
      userId: z.uuid(),
      phone: z.string(),
      firstName: z.string().nullable(),
      lastName: z.string().nullable(),
      tier: z.number().int(),
      status: reviewStatus,
      reason: z.string().nullable(),
      details: z.record(z.string(), z.unknown()),
      documentId: z.uuid().nullable(),
      createdAt: instantOutput(),
      decidedAt: instantOutput().nullable(),
    }),
  ),
  limit: z.number().int(),
  offset: z.number().int(),
  total: z.number().int(),
});

export const reviewInput = z
  .object({
    userId: z.uuid(),
    tier: z.number().int().min(1).max(3),
    decision: z.enum(['approve', 'reject']),
    reason: z.string().trim().min(1).max(500).optional(),
  })
  .strict();
