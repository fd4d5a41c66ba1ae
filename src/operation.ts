import type { z } from 'zod';
import type { WithCommit } from './db/unit-of-work.ts';
import type { ErrorCode } from './errors.ts';

// An operation of the /_serverFn contract, declared by a domain's ops.ts. The domain knows nothing
// about Fastify: http/router.ts turns each Operation into a route with validation, auth,
// idempotency, rate limiting and the envelope.

export type Role = 'user' | 'admin';

export type Caller = {
  userId: string;
  sessionId: string;
  phone: string;
  roles: Role[];
  /**
   * Until when the session's admin second factor (TOTP) holds; null or past: not verified (API.md
   * section 17.4). Absent for a caller not read from a session.
   */
  secondFactorUntil?: Date | null;
};

export type OperationAuth = 'public' | 'user' | 'admin';

export type OperationArgs<I, A extends OperationAuth> = {
  input: I;
  caller: A extends 'public' ? Caller | null : Caller;
  ip: string;
  /** The request's User-Agent, as sent (a sign-in from a new device is told by it). */
  userAgent: string | undefined;
  /**
   * POST only: the request's Idempotency-Key answer, to write in the transaction that commits the
   * operation's result (db/unit-of-work.ts). Unused, the router completes the key after the
   * handler returns.
   */
  withCommit?: WithCommit;
};

export type Operation<
  I extends z.ZodType = z.ZodType,
  O extends z.ZodType = z.ZodType,
  A extends OperationAuth = OperationAuth,
> = {
  name: string;
  method: 'GET' | 'POST';
  auth: A;
  summary: string;
  /**
   * What /openapi.json says of the operation, where the summary is not enough; the summary
   * otherwise. Either way followed by who may call it and how (http/openapi-document.ts).
   */
  description?: string;
  tags: string[];
  input: I;
  output: O;
  /**
   * The error codes this operation's own rules raise (API.md section 2). The router adds the ones
   * every operation of its kind can get (validation, rate limit, internal error; authentication,
   * role, Idempotency-Key and body size where they apply) and documents them all in /openapi.json.
   * An answer with a code in neither list is logged as an error, and fails the request under
   * NODE_ENV=test, so the tests of error paths keep this list true.
   */
  errors: readonly ErrorCode[];
  /** Defaults to 64 KiB (API.md section 1). */
  bodyLimitBytes?: number;
  /**
   * POST only; true by default. False for an operation whose answer carries credentials (tokens):
   * none of its answers is kept under the Idempotency-Key for replay (API.md section 3), because
   * anyone who learnt the key and the body would be handed them. The key is held only while the
   * operation runs (a concurrent twin gets 409 IDEMPOTENCY_IN_PROGRESS) and released when it ends,
   * so the same key sent again runs the operation again, and it must refuse a second use on its
   * own (a used code, a rotated refresh token). Such an operation cannot take `withCommit`.
   */
  storesAnswer?: boolean;
  /**
   * The phone (E.164, from the validated input) that an anonymous operation acts on: the router
   * then limits its requests per phone (RATE_LIMIT_PHONE_PER_MINUTE) as well as per address, so
   * that people sharing a carrier address can sign in while one phone cannot be hammered from many.
   */
  rateLimitPhone?: (input: z.output<I>) => string;
  /**
   * Admin operations only: true for the second factor's own operations (enrol, confirm, verify),
   * which need the admin role but not a verified second factor (API.md section 17.4).
   */
  skipsSecondFactor?: boolean;
  handler: (args: OperationArgs<z.output<I>, A>) => Promise<z.input<O>>;
};

/** Identity function that keeps the input and output types of one operation tied together. */
export function defineOperation<I extends z.ZodType, O extends z.ZodType, A extends OperationAuth>(
  op: Operation<I, O, A>,
): Operation<I, O, A> {
  return op;
}

// Operations are stored together, so the generic parameters are erased at the registry.
// biome-ignore lint/suspicious/noExplicitAny: the registry holds operations of every shape.
export type AnyOperation = Operation<any, any, any>;
