// The closed catalogue of error codes of API.md section 2, and SERVICE_UNAVAILABLE (decision 0025). Domain code throws AppError with one of
// these; http/errors.ts owns the single mapping from code to HTTP status.

export const errorCodes = [
  'VALIDATION_ERROR',
  'IDEMPOTENCY_KEY_REQUIRED',
  'UNAUTHENTICATED',
  'KYC_TIER_REQUIRED',
  'INVALID_PIN',
  'PIN_NOT_SET',
  'FORBIDDEN',
  'LIMIT_EXCEEDED',
  'ACCOUNT_FROZEN',
  'SECOND_FACTOR_REQUIRED',
  'NOT_FOUND',
  'INSUFFICIENT_FUNDS',
  'PRICE_CHANGED',
  'IDEMPOTENCY_IN_PROGRESS',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'NETWORK_MISMATCH',
  'IDEMPOTENCY_KEY_REUSED',
  'BELOW_MINIMUM',
  'ABOVE_MAXIMUM',
  'KYC_PREVIOUS_TIER_REQUIRED',
  'PIN_LOCKED',
  'RATE_LIMITED',
  'INTERNAL',
  'UPSTREAM_UNAVAILABLE',
  'SERVICE_UNAVAILABLE',
  'SERVICE_PAUSED',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export type ErrorDetails = Record<string, unknown>;

export class AppError extends Error {
  override name = 'AppError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails | undefined;
  /** Seconds for a Retry-After header (RATE_LIMITED, PIN_LOCKED). */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: ErrorDetails; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.code = code;
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

export const notFound = (what: string) => new AppError('NOT_FOUND', `${what} not found`);

/** What refuses a debit of an account an operator froze (API.md 17.4): the same words everywhere. */
export const accountFrozen = () =>
  new AppError('ACCOUNT_FROZEN', 'your account is frozen: nothing can be paid from it; contact support');
