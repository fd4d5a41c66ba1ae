import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { AnyOperation, Caller } from '../operation.ts';
import { canonicalJson } from './canonical-json.ts';
import { sendError, toErrorResponse } from './errors.ts';
import {
  completionWithCommit,
  type IdempotencyRequest,
  type IdempotencyStore,
  type KeyHold,
  type RouterCompletion,
  requestHash,
} from './idempotency-store.ts';
import { operationDescription } from './openapi-document.ts';
import {
  type ErrorCodeCheck,
  errorCodeCheck,
  errorResponseSchemas,
  operationErrorCodes,
} from './operation-errors.ts';

// Turns each Operation into `/_serverFn/<name>`: bearer auth (onRequest, before the body is even
// read), the Idempotency-Key check, zod validation of the query or `{data}` body, rate limiting,
// the handler, the output schema (which strips anything internal) and the envelope. Each route
// documents its error responses from the codes the operation declares, and checks every error its
// handler raises against them (operation-errors.ts).

export const BODY_LIMIT_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** Hash of the operation and the body as sent, taken before validation transforms it. */
    requestHash: string;
  }
}

const idempotencyKey = z.uuid();

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([A-Za-z0-9_-]{20,200})$/i.exec(header);
  return match?.[1] ?? null;
}

/** Input nested deeper than this is refused before anything walks it recursively. */
const INPUT_DEPTH_MAX = 32;

/**
 * What no schema reliably catches, found without recursion: nesting deep enough to overflow the
 * recursive walks of hashing and validation (a 500), and NUL characters, which PostgreSQL refuses in
 * text and jsonb (a 500 too, from any string field a schema lets through).
 */
function unsafeInput(
  value: unknown,
  root: Array<string | number>,
): { path: Array<string | number>; message: string } | null {
  const pending: Array<{ value: unknown; path: Array<string | number> }> = [{ value, path: root }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value === 'string') {
      if (next.value.includes('\u0000'))
        return { path: next.path, message: 'NUL characters are not allowed' };
      continue;
    }
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.path.length - root.length >= INPUT_DEPTH_MAX) {
      return { path: next.path, message: `nested deeper than ${INPUT_DEPTH_MAX} levels` };
    }
    const isArray = Array.isArray(next.value);
    for (const [name, child] of Object.entries(next.value)) {
      const path = [...next.path, isArray ? Number(name) : name];
      if (name.includes('\u0000')) return { path, message: 'NUL characters are not allowed' };
      pending.push({ value: child, path });
    }
  }
  return null;
}

/** What the router needs beside the operations; the operations bring their own deps. */
export type RouterDeps = {
  idempotency: IdempotencyStore;
  /** The caller behind a bearer token (the auth module's api). */
  authenticate: (accessToken: string) => Promise<Caller | null>;
  clock: Clock;
  /**
   * Under test an undeclared error code fails the request, so every test of an error path checks
   * the declarations /openapi.json is built from.
   */
  strictErrorCodes: boolean;
};

export function registerOperations(
  app: FastifyInstance,
  operations: readonly AnyOperation[],
  deps: RouterDeps,
): void {
  const names = new Set<string>();
  for (const op of operations) {
    if (names.has(op.name)) throw new Error(`operation ${op.name} is declared twice`);
    names.add(op.name);
    registerOperation(app, op, deps);
  }
}

function registerOperation(app: FastifyInstance, op: AnyOperation, deps: RouterDeps): void {
  const { authenticate, strictErrorCodes } = deps;
  const isPost = op.method === 'POST';
  const success = z.object({ success: z.literal(true), data: op.output });
  const answerable = operationErrorCodes(op);
  const checkErrorCode = errorCodeCheck(op, answerable, strictErrorCodes);
  const schema = {
    summary: op.summary,
    description: operationDescription(op),
    tags: op.tags,
    operationId: op.name,
    // An empty list says "no authentication" explicitly, rather than leaving a client to guess.
    security: op.auth === 'public' ? [] : [{ bearer: [] }],
    ...(isPost ? { body: z.object({ data: op.input }).strict() } : { querystring: op.input }),
    ...(isPost
      ? {
          headers: z.looseObject({
            'idempotency-key': idempotencyKey.describe('A fresh UUID per logical request'),
          }),
        }
      : {}),
    response: { 200: success, ...errorResponseSchemas(answerable) },
  };

  app.withTypeProvider<ZodTypeProvider>().route({
    method: op.method,
    url: `/_serverFn/${op.name}`,
    bodyLimit: op.bodyLimitBytes ?? BODY_LIMIT_BYTES,
    schema,
    // The header schema above documents the key; the check below gives it its own error code.
    attachValidation: false,
    onRequest: async (request, reply) => {
      request.caller = null;
      if (op.auth === 'public') return;
      const token = bearerToken(request);
      const caller = token === null ? null : await authenticate(token);
      if (caller === null) {
        return sendError(
          reply,
          toErrorResponse(new AppError('UNAUTHENTICATED', 'a valid bearer token is required'), request),
        );
      }
      if (op.auth === 'admin' && !caller.roles.includes('admin')) {
        return sendError(
          reply,
          toErrorResponse(new AppError('FORBIDDEN', 'this operation is for administrators'), request),
        );
      }
      request.caller = caller;
    },
    preValidation: async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (isPost && !idempotencyKey.safeParse(key).success) {
        return sendError(
          reply,
          toErrorResponse(
            new AppError('IDEMPOTENCY_KEY_REQUIRED', 'send an Idempotency-Key header with a UUID'),
            request,
          ),
        );
      }
      const unsafe = unsafeInput(isPost ? request.body : request.query, isPost ? [] : ['query']);
      if (unsafe !== null) {
        return sendError(
          reply,
          toErrorResponse(
            new AppError('VALIDATION_ERROR', 'the input does not match the schema', {
              details: { issues: [unsafe] },
            }),
            request,
          ),
        );
      }
      if (!isPost) return;
      // The body as sent, not the schema's output: 0803... and +234803... are different requests.
      const data = (request.body as { data?: unknown } | null | undefined)?.data;
      request.requestHash = requestHash(op.name, canonicalJson(data ?? null));
    },
    handler: async (request, reply) => handle(deps, op, checkErrorCode, request, reply),
  });
}

type Outcome = { status: number; body: string; retryAfterSeconds: number | undefined };

/** The envelope of a successful answer, as sent and as stored under its idempotency key. */
const successBody = (op: AnyOperation, result: unknown): string =>
  JSON.stringify({ success: true, data: op.output.parse(result) });

async function run(
  op: AnyOperation,
  checkErrorCode: ErrorCodeCheck,
  request: FastifyRequest,
  input: unknown,
  completion?: RouterCompletion,
): Promise<Outcome> {
  try {
    const result = await op.handler({
      input,
      caller: request.caller,
      ip: request.ip,
      userAgent: request.headers['user-agent'],
      ...(completion === undefined ? {} : { withCommit: completion }),
    });
    // A body already committed with the operation (a purchase's key) is the one sent, parsed once.
    const body = completion?.committedBody() ?? successBody(op, result);
    return { status: 200, body, retryAfterSeconds: undefined };
  } catch (error) {
    const response = checkErrorCode(toErrorResponse(error, request), request);
    return {
      status: response.status,
      body: JSON.stringify(response.body),
      retryAfterSeconds: response.retryAfterSeconds,
    };
  }
}

function send(reply: FastifyReply, outcome: Outcome): FastifyReply {
  if (outcome.retryAfterSeconds !== undefined) reply.header('retry-after', String(outcome.retryAfterSeconds));
  return reply
    .code(outcome.status)
    .type('application/json; charset=utf-8')
    .serializer((s: string) => s)
    .send(outcome.body);
}

async function handle(
  { idempotency, clock }: RouterDeps,
  op: AnyOperation,
  checkErrorCode: ErrorCodeCheck,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (op.method === 'GET') return send(reply, await run(op, checkErrorCode, request, request.query));

  const body = request.body as { data: unknown };
  const key: IdempotencyRequest = {
    scope: request.caller?.userId ?? 'anonymous',
    key: String(request.headers['idempotency-key']).toLowerCase(),
    operation: op.name,
    requestHash: request.requestHash,
  };
  const begun = await idempotency.begin(key, clock.now());
  switch (begun.kind) {
    case 'replay':
      reply.header('idempotent-replayed', 'true');
      return send(reply, {
        status: begun.response.status,
        body: begun.response.body,
        retryAfterSeconds: undefined,
      });
    case 'in_progress':
      return sendError(
        reply,
        toErrorResponse(
          new AppError('IDEMPOTENCY_IN_PROGRESS', 'a request with this Idempotency-Key is still running'),
          request,
        ),
      );
    case 'mismatch':
      return sendError(
        reply,
        toErrorResponse(
          new AppError(
            'IDEMPOTENCY_KEY_REUSED',
            'this Idempotency-Key was used with another operation or body',
          ),
          request,
        ),
      );
    case 'started':
      break;
  }
  const { hold } = begun;
  if (op.storesAnswer === false)
    return send(reply, await runUnstored(op, idempotency, checkErrorCode, request, hold));
  const completion = completionWithCommit(idempotency, key, (result) => successBody(op, result));
  let outcome: Outcome;
  try {
    outcome = await run(op, checkErrorCode, request, body.data, completion);
  } catch (error) {
    await idempotency.release(hold);
    throw error;
  }
  // Completed with the operation's own commit: the body stored is the answer run gave.
  if (completion.committedBody() !== undefined && outcome.status === 200) return send(reply, outcome);
  // Neither a 5xx nor a 429 is stored: nothing was done, and the client is told to retry, which
  // it may do with the same key once the wait is over.
  if (outcome.status >= 500 || outcome.status === 429) {
    await idempotency.release(hold);
    return send(reply, outcome);
  }
  try {
    await idempotency.complete(key, { status: outcome.status, body: outcome.body });
  } catch (error) {
    // The answer could not be stored (the database went out of reach): the client gets a 503 and
    // retries. A refusal changed nothing, so its key is given back to run again; a success keeps
    // its key held (until stale) rather than risk running twice.
    if (outcome.status >= 400) await idempotency.release(hold);
    throw error;
  }
  return send(reply, outcome);
}

/**
 * An operation whose answers carry credentials (Operation.storesAnswer false): the key held while it
 * runs is released whatever the outcome, so no answer of it can ever be replayed to anyone.
 */
async function runUnstored(
  op: AnyOperation,
  idempotency: IdempotencyStore,
  checkErrorCode: ErrorCodeCheck,
  request: FastifyRequest,
  hold: KeyHold,
): Promise<Outcome> {
  try {
    return await run(op, checkErrorCode, request, (request.body as { data: unknown }).data);
  } finally {
    await idempotency.release(hold);
  }
}
