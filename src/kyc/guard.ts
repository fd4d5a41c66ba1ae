import { AppError } from '../errors.ts';

/**
 * The tier gate for money operations: purchases need Tier 1, wallet transfers and dedicated
 * accounts Tier 2. Throws 403 KYC_TIER_REQUIRED with details.requiredTier.
 */
export async function requireKycTier(
  kycTierOf: (userId: string) => Promise<number>,
  userId: string,
  requiredTier: 1 | 2 | 3,
): Promise<void> {
  requireTier(await kycTierOf(userId), requiredTier);
}

/** The gate itself, for a caller that has read the user's tier already. */
export function requireTier(tier: number, requiredTier: 1 | 2 | 3): void {
  if (tier < requiredTier) {
    throw new AppError('KYC_TIER_REQUIRED', `this needs KYC tier ${requiredTier} (you have ${tier})`, {
      details: { requiredTier, currentTier: tier },
    });
  }
}
