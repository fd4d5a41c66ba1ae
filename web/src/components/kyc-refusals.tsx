import { type ApiError, describeError } from '../api/errors.ts';
import type { Tier } from '../payments/tiers.ts';

// Why a verification did not go through, in words a person can act on. Two kinds of "no" come back
// from the service (src/kyc): a refusal, where nothing was recorded (an error: its code, the 409's
// `details.reason`, the refused field in `details.issues`), and a submission decided against,
// shown by getKycStatus with the service's `reason` sentence.

/** The 409s of submitKycTier1/2/3, by `details.reason`. */
const conflictWords: Record<string, string> = {
  profile_name_missing: 'Add your first and last name, as they are on your NIN, before you submit your NIN.',
  nin_in_use:
    'This NIN is already verified on another billrail account. One NIN can verify only one account: if that account is yours, sign in with its phone number.',
  tier_approved: 'This step is already approved.',
  tier_pending: 'We are already checking this step. We will tell you when it is done.',
  submitted_concurrently: 'This step was sent twice at the same time. Refresh to see where it stands.',
  check_used: 'That face check was already used. Start the face check again.',
};

/** The fields the service may refuse, by their path in `details.issues`. */
const fieldWords: Record<string, string> = {
  'data.livenessToken': 'That face check expired or was already used. Start the face check again.',
  'data.state': 'That face check expired or was already used. Start the face check again.',
  'data.nin': 'Your NIN is 11 digits. Check it and try again.',
  'data.phone': 'Your NIN must be registered with the phone number you sign in with.',
  'data.bankCode': 'Choose your bank from the list.',
  'data.accountNumber': 'Your account number is 10 digits. Check it and try again.',
  'data.documentBase64': 'We could not read that file. Choose the photo or PDF of your document again.',
  'data.documentMimeType':
    'That file is not a JPG or PNG photo or a PDF, or its name says another type. Choose a photo or PDF of your document.',
};

/** The first refused field of a VALIDATION_ERROR, as "data.nin". */
function refusedField(error: ApiError): string | undefined {
  const issues = error.details?.issues;
  if (!Array.isArray(issues)) return undefined;
  for (const issue of issues as Array<{ path?: unknown }>) {
    const path = Array.isArray(issue.path) ? issue.path.join('.') : undefined;
    if (path !== undefined && fieldWords[path] !== undefined) return path;
  }
  return undefined;
}

/** What to say when submitting a tier (or starting its face check) was refused. */
export function describeKycRefusal(error: ApiError): string {
  const reason = error.details?.reason;
  if (error.code === 'CONFLICT' && typeof reason === 'string' && conflictWords[reason] !== undefined)
    return conflictWords[reason];
  if (error.code === 'VALIDATION_ERROR') {
    const field = refusedField(error);
    if (field !== undefined) return fieldWords[field]!;
  }
  if (error.code === 'KYC_PREVIOUS_TIER_REQUIRED') {
    const tier = error.details?.requiredTier;
    return typeof tier === 'number' ? `Finish Tier ${tier} first.` : describeError(error);
  }
  if (error.code === 'PAYLOAD_TOO_LARGE')
    return 'That file is larger than 5 MB. Choose a smaller photo or PDF.';
  if (error.code === 'UPSTREAM_UNAVAILABLE')
    return 'Our verification partner is not answering right now. Nothing was saved: try again in a few minutes.';
  return describeError(error);
}

/** The service's sentences for a submission decided against (src/kyc/service.ts), by how they begin. */
const decided: ReadonlyArray<{ tier: Tier; starts: string; words: (phone: string) => string }> = [
  {
    tier: 1,
    starts: 'liveness check failed',
    words: () =>
      'The face check did not pass. Find good light, hold your phone at eye level, and start the face check again.',
  },
  {
    tier: 2,
    starts: 'no NIN record was found',
    words: () => 'No NIN record was found for that number. Check the 11 digits and try again.',
  },
  {
    tier: 2,
    starts: 'the name on the NIN record does not match',
    words: () =>
      'The name on your NIN record is not the name on your profile. Spell your first and last name as on your NIN, then try again.',
  },
  {
    tier: 2,
    starts: 'the phone number on the NIN record',
    words: (phone) =>
      `Your NIN is registered with another phone number, not ${phone}. Sign in with the number on your NIN, or have NIMC update it, then try again.`,
  },
  {
    tier: 3,
    starts: 'the bank account was not found',
    words: () => 'We could not find that bank account. Check the bank and the 10-digit account number.',
  },
  {
    tier: 3,
    starts: 'the bank account name does not match',
    words: () =>
      'That bank account is not in your name. Use an account in the name you verified with your NIN.',
  },
];

/**
 * Why a tier did not pass. The service's own sentences become advice; anything else is a reviewer's
 * reason, written for the person, and shown as it is.
 */
export function describeTierReason(tier: Tier, reason: string | undefined, phone: string): string {
  if (reason === undefined || reason.trim() === '') return 'It did not pass. You can try again.';
  const known = decided.find((d) => d.tier === tier && reason.startsWith(d.starts));
  return known ? known.words(phone) : `Our team said: ${reason}`;
}
