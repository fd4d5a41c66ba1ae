import { serviceNames } from '../../../src/shared/display-names.ts';

// Every error code of API.md section 2 in words a person understands: no raw codes on screen.

export type ApiError = {
  code: string;
  message: string;
  details?: Record<string, unknown>;
  status: number;
};

/** Every code of API.md section 2, and OFFLINE (no answer at all). */
const words: Record<string, string> = {
  VALIDATION_ERROR: 'Some of what you entered is not right. Check it and try again.',
  IDEMPOTENCY_KEY_REQUIRED: 'Something went wrong sending that. Please try again.',
  UNAUTHENTICATED: 'Your session has ended. Please sign in again.',
  KYC_TIER_REQUIRED: 'Verify your identity to do this.',
  KYC_PREVIOUS_TIER_REQUIRED: 'Finish the previous verification step first.',
  INVALID_PIN: 'That PIN is not right.',
  PIN_NOT_SET: 'Set your transaction PIN first.',
  PIN_LOCKED: 'Your PIN is locked for 30 minutes after 5 wrong tries. Reset it with a code, or wait.',
  FORBIDDEN: 'You are not allowed to do that.',
  LIMIT_EXCEEDED: 'That is over your daily limit. Try a smaller amount, or again tomorrow.',
  ACCOUNT_FROZEN:
    'Your account is frozen: no money can leave it for now, and nothing was charged. Contact billrail support to have it lifted.',
  SECOND_FACTOR_REQUIRED:
    'This needs the code from your authenticator app: open the screen again to enter it.',
  NOT_FOUND: 'We could not find that.',
  INSUFFICIENT_FUNDS: 'Your wallet balance is too low for this. Fund your wallet and try again.',
  PRICE_CHANGED: 'The price has just changed. Check the new price and try again.',
  IDEMPOTENCY_IN_PROGRESS: 'We are still working on your last request. Wait a moment before trying again.',
  IDEMPOTENCY_KEY_REUSED: 'This request was already sent with different details. Start again.',
  CONFLICT: 'That has already been done or has changed. Refresh and try again.',
  PAYLOAD_TOO_LARGE: 'That file or message is too large.',
  NETWORK_MISMATCH: 'That number belongs to a different network.',
  BELOW_MINIMUM: 'The amount is below the minimum.',
  ABOVE_MAXIMUM: 'The amount is above the maximum.',
  RATE_LIMITED: 'Too many attempts. Please wait a moment and try again.',
  UPSTREAM_UNAVAILABLE: 'The provider is not answering right now. Nothing was charged; try again shortly.',
  INTERNAL: 'Something went wrong on our side. Please try again.',
  SERVICE_PAUSED: 'This service is paused for now. Nothing was charged; please try again later.',
  OFFLINE: 'You are offline. Check your connection and try again.',
};

/** The field a VALIDATION_ERROR is about: `details.field`, or the last name of its first issue's path. */
function invalidField(details: Record<string, unknown>): string | null {
  if (typeof details.field === 'string') return details.field;
  const [first] = Array.isArray(details.issues) ? (details.issues as Array<{ path?: unknown }>) : [];
  const name = Array.isArray(first?.path) ? first.path.at(-1) : undefined;
  return typeof name === 'string' ? name : null;
}

/** What to tell the person, with the limit or what is left where the service said so. */
export function describeError(error: ApiError): string {
  const base = words[error.code] ?? 'Something went wrong. Please try again.';
  const details = error.details ?? {};
  // A phone number is what people most often type wrong: say what one must look like.
  if (error.code === 'VALIDATION_ERROR' && /phone$/i.test(invalidField(details) ?? '')) {
    return 'That is not a Nigerian mobile number. Enter the 11 digits, like 0803 123 4567.';
  }
  const naira = (n: unknown) =>
    typeof n === 'number'
      ? new Intl.NumberFormat('en-NG', { style: 'currency', currency: 'NGN' }).format(n)
      : '';
  // A limit is naira unless details.unit names another (a lock's days, a quantity): never "₦7.00" for 7 days.
  if (details.unit === 'days' && typeof details.limit === 'number') {
    const days = `${details.limit} day${details.limit === 1 ? '' : 's'}`;
    if (error.code === 'BELOW_MINIMUM') return `That is too short: it must be at least ${days}.`;
    if (error.code === 'ABOVE_MAXIMUM') return `That is too long: it can be at most ${days}.`;
  }
  if (details.unit === 'count' && typeof details.limit === 'number') {
    const count = new Intl.NumberFormat('en-NG').format(details.limit);
    if (error.code === 'BELOW_MINIMUM') return `The minimum is ${count}.`;
    if (error.code === 'ABOVE_MAXIMUM') return `The maximum is ${count}.`;
  }
  if (error.code === 'BELOW_MINIMUM' && typeof details.limit === 'number')
    return `The minimum is ${naira(details.limit)}.`;
  if (error.code === 'ABOVE_MAXIMUM' && typeof details.limit === 'number') {
    return typeof details.remaining === 'number'
      ? `That is over your limit of ${naira(details.limit)}; ${naira(details.remaining)} is left today.`
      : `The maximum is ${naira(details.limit)}.`;
  }
  if (error.code === 'PIN_LOCKED' && typeof details.retryAfterSeconds === 'number') {
    const minutes = Math.max(1, Math.ceil(details.retryAfterSeconds / 60));
    return `Your PIN is locked for 30 minutes after 5 wrong tries (${minutes} ${minutes === 1 ? 'minute' : 'minutes'} left). Reset it with a code, or wait.`;
  }
  if (error.code === 'INVALID_PIN' && typeof details.attemptsLeft === 'number') {
    return `That PIN is not right. ${details.attemptsLeft} ${details.attemptsLeft === 1 ? 'try' : 'tries'} left before it locks.`;
  }
  if (error.code === 'LIMIT_EXCEEDED' && typeof details.remaining === 'number') {
    const of = typeof details.limitAmount === 'number' ? ` of ${naira(details.limitAmount)}` : '';
    const left =
      details.remaining > 0
        ? `That is over your daily limit${of}: ${naira(details.remaining)} is left today.`
        : `You have used all of your daily limit${of} today.`;
    return typeof details.upgradeTier === 'number'
      ? `${left} Nothing was charged. Tier ${details.upgradeTier} verification raises the limit.`
      : `${left} Nothing was charged.`;
  }
  if (error.code === 'SERVICE_PAUSED' && typeof details.service === 'string') {
    const service = serviceNames[details.service] ?? 'This service';
    return `${service} is paused for now. Nothing was charged; please try again later.`;
  }
  if (error.code === 'PRICE_CHANGED' && typeof details.amount === 'number') {
    return `The price is now ${naira(details.amount)}. Check it and try again.`;
  }
  if (error.code === 'NETWORK_MISMATCH' && typeof details.detected === 'string') {
    return `That number is ${details.detected === 'unknown' ? 'not on a network we sell' : `an ${details.detected.toUpperCase()} number`}.`;
  }
  return base;
}

/**
 * An SMS code refused (verifyOtp's 401, setTransactionPin's 403, both with `details.attemptsLeft`):
 * wrong with tries left, or no longer usable at all. Never "your session has ended".
 */
export function describeCodeRefusal(error: ApiError): string {
  const attemptsLeft = error.details?.attemptsLeft;
  if (typeof attemptsLeft === 'number' && attemptsLeft > 0) {
    return `That code is not right. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left.`;
  }
  return 'This code can no longer be used (it has expired, was used, or had too many tries). Ask for a new code.';
}
