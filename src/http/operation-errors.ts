import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { type ErrorCode, errorCodes } from '../errors.ts';
import { newId } from '../ids.ts';
import type { AnyOperation } from '../operation.ts';
import { type ErrorResponse, errorEnvelope, statusOf } from './errors.ts';

// Which error codes an operation can answer: those its rules raise (its `errors`) and those the
// router and the app raise for every operation of its kind. The same list documents the operation's
// error responses in /openapi.json and is checked against every error a handler raises.

/** What the router and the app answer for any operation of this kind, whatever its rules. */
function routerErrorCodes(op: AnyOperation): ErrorCode[] {
  return [
    // Schema validation (and malformed requests), the rate limiter, unknown errors, and the
    // database out of reach.
    'VALIDATION_ERROR',
    'RATE_LIMITED',
    'INTERNAL',
    'SERVICE_UNAVAILABLE',
    ...(op.auth === 'public' ? [] : (['UNAUTHENTICATED'] as const)),
    ...(op.auth === 'admin' ? (['FORBIDDEN'] as const) : []),
    // An admin session whose TOTP is not verified (ADMIN_SECOND_FACTOR=totp, API.md section 17.4).
    ...(op.auth === 'admin' && op.skipsSecondFactor !== true ? (['SECOND_FACTOR_REQUIRED'] as const) : []),
    // Only a request with a body can be too large: Fastify reads no body for a GET.
    ...(op.method === 'POST'
      ? ([
          'IDEMPOTENCY_KEY_REQUIRED',
          'IDEMPOTENCY_IN_PROGRESS',
          'IDEMPOTENCY_KEY_REUSED',
          'PAYLOAD_TOO_LARGE',
        ] as const)
      : []),
  ];
}

/** Every code the operation can answer, in the order of the catalogue (API.md section 2). */
export function operationErrorCodes(op: AnyOperation): ErrorCode[] {
  const codes = new Set<ErrorCode>([...routerErrorCodes(op), ...op.errors]);
  return errorCodes.filter((code) => codes.has(code));
}

/**
 * The route's error responses: one per status, each the envelope with `code` an enum of exactly the
 * codes that answer with that status.
 */
export function errorResponseSchemas(codes: readonly ErrorCode[]): Record<number, z.ZodType> {
  const byStatus = new Map<number, [ErrorCode, ...ErrorCode[]]>();
  for (const code of codes) {
    const status = statusOf(code);
    const same = byStatus.get(status);
    if (same === undefined) byStatus.set(status, [code]);
    else same.push(code);
  }
  return Object.fromEntries(
    [...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([status, same]) => [
        status,
        errorEnvelope(same).describe(`${STATUS_CODES[status] ?? 'Error'}: ${same.join(', ')}`),
      ]),
  );
}

export type ErrorCodeCheck = (response: ErrorResponse, request: FastifyRequest) => ErrorResponse;

/**
 * Checks an error a handler raised against the codes the operation can answer. An undeclared code
 * means /openapi.json lies to the clients generated from it: it is logged at error level and, in
 * production, answered as it is. With `strict` (NODE_ENV=test) it becomes a 500 naming the code, so
 * that any test reaching that error path fails until the operation declares it.
 */
export function errorCodeCheck(
  op: AnyOperation,
  codes: readonly ErrorCode[],
  strict: boolean,
): ErrorCodeCheck {
  const answerable = new Set(codes);
  return (response, request) => {
    const { code } = response.body.error;
    if (answerable.has(code)) return response;
    const errorId = newId();
    request.log.error(
      { operation: op.name, code, errorId },
      'the operation answered an error code it does not declare; add it to its errors',
    );
    if (!strict) return response;
    return {
      status: 500,
      body: {
        success: false,
        error: {
          code: 'INTERNAL',
          message: `${op.name} answered ${code}, which its errors in defineOperation leave out`,
          errorId,
        },
      },
      retryAfterSeconds: undefined,
    };
  };
}

type JsonObject = Record<string, unknown>;

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The object at `keys` under `value`, or undefined where the path stops. */
function at(value: unknown, ...keys: string[]): JsonObject | undefined {
  let current = value;
  for (const key of keys) current = isObject(current) ? current[key] : undefined;
  return isObject(current) ? current : undefined;
}

/**
 * Moves the schema of every error response of an OpenAPI document into components.schemas, one per
 * set of codes (`Error_NOT_FOUND`, `Error_VALIDATION_ERROR_or_IDEMPOTENCY_KEY_REQUIRED`, ...), and
 * refers to it. Every operation answers 400, 429 and 500, and most share the rest, so some twenty
 * envelopes stand for over three hundred copies that would make the document four times its size.
 * Changes the document in place: @fastify/swagger builds it afresh for this.
 */
export function shareErrorSchemas(document: { paths?: unknown; components?: unknown }): void {
  const components = isObject(document.components) ? document.components : {};
  const schemas = isObject(components.schemas) ? components.schemas : {};
  for (const pathItem of Object.values(at(document, 'paths') ?? {})) {
    for (const operation of Object.values(isObject(pathItem) ? pathItem : {})) {
      for (const [status, response] of Object.entries(at(operation, 'responses') ?? {})) {
        const media = at(response, 'content', 'application/json');
        const codes = at(media, 'schema', 'properties', 'error', 'properties', 'code')?.enum;
        if (media === undefined || Number(status) < 400 || !Array.isArray(codes)) continue;
        const name = `Error_${codes.join('_or_')}`;
        assert.ok(
          schemas[name] === undefined || isDeepStrictEqual(schemas[name], media.schema),
          `two different error envelopes would be named ${name}`,
        );
        schemas[name] = media.schema;
        media.schema = { $ref: `#/components/schemas/${name}` };
      }
    }
  }
  components.schemas = schemas;
  document.components = components;
}
