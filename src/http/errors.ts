import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isDatabaseUnavailable } from '../db/unavailable.ts';
import { AppError, type ErrorCode } from '../errors.ts';
import { newId } from '../ids.ts';

// The one mapping from error code to HTTP status, and the one error envelope.

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_ERROR':
    case 'IDEMPOTENCY_KEY_REQUIRED':
      return 400;
    case 'UNAUTHENTICATED':
      return 401;
    case 'KYC_TIER_REQUIRED':
    case 'INVALID_PIN':
    case 'PIN_NOT_SET':
    case 'FORBIDDEN':
    case 'LIMIT_EXCEEDED':
    case 'ACCOUNT_FROZEN':
    case 'SECOND_FACTOR_REQUIRED':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'INSUFFICIENT_FUNDS':
    case 'PRICE_CHANGED':
    case 'IDEMPOTENCY_IN_PROGRESS':
    case 'CONFLICT':
      return 409;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'NETWORK_MISMATCH':
    case 'IDEMPOTENCY_KEY_REUSED':
    case 'BELOW_MINIMUM':
    case 'ABOVE_MAXIMUM':
    case 'KYC_PREVIOUS_TIER_REQUIRED':
      return 422;
    case 'PIN_LOCKED':
      return 423;
    case 'RATE_LIMITED':
      return 429;
    case 'INTERNAL':
      return 500;
    case 'UPSTREAM_UNAVAILABLE':
      return 502;
    case 'SERVICE_UNAVAILABLE':
    case 'SERVICE_PAUSED':
      return 503;
  }
}

/** What a 503 asks the client to wait: a restart or failover of the database takes seconds. */
const databaseRetryAfterSeconds = 5;

export type ErrorBody = {
  success: false;
  error: { code: ErrorCode; message: string; errorId?: string; details?: Record<string, unknown> };
};

/**
 * The envelope as /openapi.json documents it, with `code` narrowed to the codes given, so that a
 * generated client can tell them apart. Documentation only: errors are sent pre-serialised, and the
 * app's serializer compiler ignores response schemas.
 */
export function errorEnvelope(codes: readonly [ErrorCode, ...ErrorCode[]]) {
  return z.object({
    success: z.literal(false),
    error: z.object({
      code: z.enum(codes),
      message: z.string(),
      errorId: z
        .string()
        .optional()
        .describe('With INTERNAL: the id under which the server logged the error'),
      details: z.record(z.string(), z.unknown()).optional(),
    }),
  });
}

export type ErrorResponse = { status: number; body: ErrorBody; retryAfterSeconds: number | undefined };

/** The envelope and status of an AppError: the one way a code becomes an answer. */
export function fromAppError(error: AppError): ErrorResponse {
  const body: ErrorBody = { success: false, error: { code: error.code, message: error.message } };
  if (error.details !== undefined) body.error.details = error.details;
  return { status: statusOf(error.code), body, retryAfterSeconds: error.retryAfterSeconds };
}

type ValidationIssue = { path: Array<string | number>; message: string };

function validationIssues(error: FastifyError): ValidationIssue[] {
  const context = (error as { validationContext?: string }).validationContext;
  const prefix = context === 'querystring' ? ['query'] : [];
  return (error.validation ?? []).flatMap((v) => {
    const issuePath = (v.params as { issue?: { path?: Array<string | number> } } | undefined)?.issue?.path;
    const path =
      issuePath ??
      String(v.instancePath ?? '')
        .split('/')
        .filter((s) => s !== '');
    const at = [...prefix, ...path.map((p) => (typeof p === 'number' ? p : String(p)))];
    // zod reports unknown fields on their parent object; the client needs the field itself.
    const unknownKeys = (v.params as { keys?: unknown } | undefined)?.keys;
    if (v.keyword === 'unrecognized_keys' && Array.isArray(unknownKeys)) {
      return unknownKeys.map((key) => ({ path: [...at, String(key)], message: 'unknown field' }));
    }
    return [{ path: at, message: v.message ?? 'invalid' }];
  });
}

/**
 * Turns anything thrown during a request into the envelope. Unknown errors become a bare 500 whose
 * errorId is logged together with the stack, and nothing internal reaches the body.
 */
export function toErrorResponse(error: unknown, request: FastifyRequest): ErrorResponse {
  if (error instanceof AppError) return fromAppError(error);
  const fastifyError = error as FastifyError;
  if (hasZodFastifySchemaValidationErrors(error)) {
    return fromAppError(
      new AppError('VALIDATION_ERROR', 'the input does not match the schema', {
        details: { issues: validationIssues(fastifyError) },
      }),
    );
  }
  // A JSON body that does not parse is refused by the app's own parser (json-body.ts), with an
  // AppError that says why; Fastify's JSON errors never arise.
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return fromAppError(new AppError('PAYLOAD_TOO_LARGE', 'the request body is too large'));
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return fromAppError(new AppError('VALIDATION_ERROR', 'the body must be application/json'));
  }
  const status = fastifyError.statusCode;
  if (status === 429) return fromAppError(new AppError('RATE_LIMITED', 'too many requests'));
  if (status === 413) return fromAppError(new AppError('PAYLOAD_TOO_LARGE', 'the request body is too large'));
  if (typeof status === 'number' && status >= 400 && status < 500) {
    // Malformed requests that Fastify rejects before any handler (bad JSON, bad headers).
    return fromAppError(new AppError('VALIDATION_ERROR', 'the request is malformed'));
  }
  if (isDatabaseUnavailable(error)) {
    // The service's own outage, not a bug: nothing the client can see was done (a transaction that
    // cannot reach the server does not commit), and the same request may be sent again.
    request.log.warn({ err: error }, 'the database is unreachable');
    return fromAppError(
      new AppError('SERVICE_UNAVAILABLE', 'the service cannot reach its database; retry shortly', {
        retryAfterSeconds: databaseRetryAfterSeconds,
      }),
    );
  }
  const errorId = newId();
  request.log.error({ err: error, errorId }, 'unhandled error');
  return {
    status: 500,
    body: { success: false, error: { code: 'INTERNAL', message: 'internal error', errorId } },
    retryAfterSeconds: undefined,
  };
}

export function sendError(reply: FastifyReply, response: ErrorResponse): FastifyReply {
  if (response.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(response.retryAfterSeconds));
  return reply
    .code(response.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(response.body));
}
