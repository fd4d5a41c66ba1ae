import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AuditEntry } from '../audit/module.ts';
import type { Clock } from '../clock.ts';
import { type CommitWrite, type CommitWriter, writeWithCommit } from '../db/unit-of-work.ts';
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
import type { PhoneRateLimit } from './phone-rate-limit.ts';

// Turns each Operation into `/_serverFn/<name>`: bearer auth (onRequest, before the body is even
// read), the Idempotency-Key check, rate limiting per caller, zod validation of the query or
// `{data}` body, the limit per phone of the sign-in operations, the handler, the output schema
// (which strips anything internal) and the envelope. Each route documents its error responses from
// the codes the operation declares, and checks every error its handler raises against them
// (operation-errors.ts).

export const BODY_LIMIT_BYTES = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
    /** Hash of the operation and the body as sent, taken before validation transforms it. */
    requestHash: string;
    /** Admin operations: who called (an admin, or a user refused for the role), for the audit row. */
    auditActor: Caller | null;
    /** Admin operations: the audit row is written (with the operation's commit, or on its own). */
    audited: boolean;
  }
}

const idempotencyKey = z.uuid();

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return null;
  const match = /^Bearer ([A-Za-z0-9_-]{20,200})$/i.exec(header);
  return match?.[1] ?? null;
}

const halfSurrogate = 'half of a surrogate pair (not Unicode text) is not allowed';

/** Input nested deeper than this is refused before anything walks it recursively. */
const INPUT_DEPTH_MAX = 32;

/**
 * What no schema reliably catches, found without recursion: nesting deep enough to overflow the
 * recursive walks of hashing and validation (a 500), NUL characters, which PostgreSQL refuses in
 * text and jsonb, and half of a surrogate pair, which jsonb refuses (a 500 too, from any string
 * field a schema lets through, once it reaches an event, a notification or the audit trail).
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
      if (!next.value.isWellFormed()) return { path: next.path, message: halfSurrogate };
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
      if (!name.isWellFormed()) return { path, message: halfSurrogate };
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
  /** The per-phone limit of the operations that declare `rateLimitPhone` (phone-rate-limit.ts). */
  limitPerPhone: PhoneRateLimit;
  /**
   * The trail every admin operation's answer is written to (the audit module's api): an allowed
   * POST's row with its commit, any other answer's on its own (API.md section 17.4).
   */
  audit: { writeWithCommit: CommitWriter<AuditEntry>; record: (entry: AuditEntry) => Promise<void> };
  /**
   * The administrators' second factor (ADMIN_SECOND_FACTOR): whether admin operations need the
   * session verified by a TOTP, and whether an admin has confirmed one (auth's api), said on refusal.
   */
  secondFactor: { required: boolean; enrolled: (userId: string) => Promise<boolean> };
};

export function registerOperations(
  app: FastifyInstance,
  operations: readonly AnyOperation[],
  deps: RouterDeps,
): void {
  const names = new Set<string>();
  // One writer for every admin POST's commit, so that the writes of one transaction group by it.
  const audited: AuditedCompletionWriter = async (trx, rows) => {
    await writeWithCommit(
      trx,
      rows.map((row) => row.key),
    );
    await deps.audit.writeWithCommit(
      trx,
      rows.map((row) => row.entry),
    );
  };
  for (const op of operations) {
    if (names.has(op.name)) throw new Error(`operation ${op.name} is declared twice`);
    names.add(op.name);
    registerOperation(app, op, deps, audited);
  }
}

/** An admin POST's write with its commit: the Idempotency-Key's answer and the audit row together. */
type AuditedCompletionWriter = CommitWriter<{ key: CommitWrite; entry: AuditEntry }>;

function registerOperation(
  app: FastifyInstance,
  op: AnyOperation,
  deps: RouterDeps,
  audited: AuditedCompletionWriter,
): void {
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
      request.auditActor = null;
      request.audited = false;
      if (op.auth === 'public') return;
      const token = bearerToken(request);
      const caller = token === null ? null : await authenticate(token);
      if (caller === null) {
        return sendError(
          reply,
          toErrorResponse(new AppError('UNAUTHENTICATED', 'a valid bearer token is required'), request),
        );
      }
      if (op.auth === 'admin') {
        // From here on every answer is audited (onSend below), a refusal of the role included.
        request.auditActor = caller;
        const refusal = await adminRefusal(op, caller, deps);
        if (refusal !== null) return sendError(reply, toErrorResponse(refusal, request));
      }
      request.caller = caller;
    },
    ...(op.auth === 'admin' ? { onSend: auditOnSend(op, deps) } : {}),
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
    ...phoneLimitHook(op, deps.limitPerPhone),
    handler: async (request, reply) => handle(deps, op, checkErrorCode, request, reply, audited),
  });
}

/**
 * Why an admin operation is refused to this caller before its body is read: not an administrator
 * (403 FORBIDDEN), or a session whose second factor is not verified (403 SECOND_FACTOR_REQUIRED,
 * `details.enrolled` false when there is no confirmed TOTP to verify with yet). The second factor's
 * own operations need the role only.
 */
async function adminRefusal(op: AnyOperation, caller: Caller, deps: RouterDeps): Promise<AppError | null> {
  if (!caller.roles.includes('admin'))
    return new AppError('FORBIDDEN', 'this operation is for administrators');
  if (!deps.secondFactor.required || op.skipsSecondFactor === true) return null;
  const until = caller.secondFactorUntil;
  if (until != null && until > deps.clock.now()) return null;
  const enrolled = await deps.secondFactor.enrolled(caller.userId);
  return new AppError(
    'SECOND_FACTOR_REQUIRED',
    enrolled
      ? 'verify the second factor first (adminVerifyTotp)'
      : 'enrol a second factor first (adminEnrolTotp, then adminConfirmTotp)',
    { details: { enrolled } },
  );
}

/** The audit row of an admin operation's answer (audit/trail.ts redacts the input). */
function auditEntry(
  op: AnyOperation,
  request: FastifyRequest,
  outcome: string,
  clock: Clock,
): AuditEntry | null {
  // Unset when an app-wide hook answered before the route's (a rate limit): nobody known to name.
  const actor = request.auditActor;
  if (actor == null) return null;
  const input = op.method === 'POST' ? (request.body as { data?: unknown } | undefined)?.data : request.query;
  return { at: clock.now(), adminId: actor.userId, operation: op.name, input, outcome, ip: request.ip };
}

/** The code of an error envelope as sent, for the audit row's outcome. */
function errorCodeOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The audit row of every admin answer not already written with the operation's commit: refusals
 * (the role, the second factor, validation, the Idempotency-Key, the rate limit, the rules), GETs
 * (reads of people's data), replays, and answers not stored. Written before the answer leaves: a
 * read whose row cannot be written is not answered (the error replaces it). A failure's row that
 * cannot be written is logged and the failure answered as it is.
 */
function auditOnSend(op: AnyOperation, deps: RouterDeps) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (request.audited === true) return payload;
    request.audited = true;
    const status = reply.statusCode;
    const outcome =
      status === 200
        ? reply.getHeader('idempotent-replayed') === 'true'
          ? 'replayed'
          : 'ok'
        : (errorCodeOf(payload) ?? `HTTP_${status}`);
    const entry = auditEntry(op, request, outcome, deps.clock);
    if (entry === null) return payload;
    try {
      await deps.audit.record(entry);
    } catch (error) {
      if (status < 400) throw error;
      request.log.error({ err: error, operation: op.name, outcome }, 'an admin answer could not be audited');
    }
    return payload;
  };
}

/**
 * An admin POST's completion: its Idempotency-Key answer and its audit row are one write, committed
 * by the operation's own transaction when it runs `inUnitOfWork(db, withCommit, ...)`.
 */
function auditedCompletion(
  completion: RouterCompletion,
  writer: AuditedCompletionWriter,
  entry: () => AuditEntry | null,
  request: FastifyRequest,
): RouterCompletion {
  return {
    writeFor(result) {
      const key = completion.writeFor(result);
      const row = entry();
      return row === null ? key : { writer: writer as CommitWriter<never>, row: { key, entry: row } };
    },
    committed() {
      completion.committed();
      request.audited = true;
    },
    committedBody: () => completion.committedBody(),
  };
}

/** The preHandler of an operation limited per phone: it runs on the validated input. */
function phoneLimitHook(op: AnyOperation, limitPerPhone: PhoneRateLimit) {
  const phoneOf = op.rateLimitPhone;
  if (phoneOf === undefined) return {};
  return {
    preHandler: limitPerPhone(op.name, (request) =>
      phoneOf(op.method === 'POST' ? (request.body as { data: unknown }).data : request.query),
    ),
  };
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
  { idempotency, clock, audit }: RouterDeps,
  op: AnyOperation,
  checkErrorCode: ErrorCodeCheck,
  request: FastifyRequest,
  reply: FastifyReply,
  audited: AuditedCompletionWriter,
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
  const keyCompletion = completionWithCommit(idempotency, key, (result) => successBody(op, result));
  const completion =
    op.auth === 'admin'
      ? auditedCompletion(keyCompletion, audited, () => auditEntry(op, request, 'ok', clock), request)
      : keyCompletion;
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
    const response = { status: outcome.status, body: outcome.body };
    const entry = auditEntry(
      op,
      request,
      outcome.status === 200 ? 'ok' : (errorCodeOf(outcome.body) ?? `HTTP_${outcome.status}`),
      clock,
    );
    if (entry === null) await idempotency.complete(key, response);
    else {
      // The answer kept under the key and its audit row, in one transaction.
      await idempotency.completeWith(key, response, [
        { writer: audit.writeWithCommit as CommitWriter<never>, row: entry },
      ]);
      request.audited = true;
    }
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
