import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Agent } from 'node:https';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../../src/app.ts';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { type Context, createContext } from '../../src/context.ts';
import type { DatabaseTarget } from '../../src/db/database.ts';
import { choosePort } from '../../src/listen-port.ts';
import type { Resolve } from '../../src/outbound-addresses.ts';
import type { DebitRule } from '../../src/vtu/debit-rules.ts';
import { type AnswerCheck, checkAnswers } from './answer-check.ts';
import { createTestDatabase } from './database.ts';
import { poolerStart, throughPooler } from './pooler.ts';

// A fresh world per test file: its own database, context and app, listening on a real port so that
// the adapters reach the sandbox simulators over HTTP exactly as in production.

export type World = {
  ctx: Context;
  app: FastifyInstance;
  baseUrl: string;
  /** Every answer checked against /openapi.json (answer-check.ts); close() fails on a mismatch. */
  answers: AnswerCheck;
  close(): Promise<void>;
};

/** What the HTTP helpers need: a service to call (a World, or a service running as a child process). */
export type Reachable = Pick<World, 'baseUrl'>;

export type WorldOptions = {
  env?: Record<string, string>;
  clock?: Clock;
  /** Replaces the context's logger, e.g. one writing to memory so that a test can read the log. */
  logger?: Logger;
  /** On PostgreSQL, the pool's connections at most (one: every statement runs on the same session). */
  poolMax?: number;
  /** On PostgreSQL, run on the database of this world: two services (processes) on one database. */
  sameDatabaseAs?: World;
  /** The purchase rules decided at debit time (src/vtu/debit-rules.ts), for their tests. */
  debitRules?: readonly DebitRule[];
  /** The TLS agent of Web Push: one that trusts the test's local push service. */
  pushAgent?: Agent;
  /** The look-up of the outbound-address checks (social links, push endpoints), for their tests. */
  resolveHost?: Resolve;
  /**
   * Run on this database, which the caller made and drops (the world leaves it be on close): a
   * service restarted on the database of one closed before it, on PGlite (a data directory) too.
   */
  database?: DatabaseTarget;
  /** On PostgreSQL, the URL the service connects with instead of the database's own (a proxy's). */
  databaseUrl?: (url: string) => Promise<string>;
  /** On PostgreSQL, DATABASE_TIMEOUT_MS of a service process (tests run unbounded by default). */
  databaseTimeoutMs?: number;
  /** Without Redis even when REDIS_URL is set: the default configuration (`npm start`). */
  withoutRedis?: boolean;
  /**
   * The prefix of this world's Redis keys (default: its own): another world's (ctx.rateLimitNamespace)
   * for two services of one deployment that count together (the providers' send rates).
   */
  rateLimitNamespace?: string;
};

export async function createWorld(options: WorldOptions = {}): Promise<World> {
  // A second service on the database of another world shares it (and leaves dropping it to that world).
  const shared = options.sameDatabaseAs?.ctx.database.url;
  const database =
    options.database !== undefined
      ? { target: options.database, drop: async () => {} }
      : shared === undefined
        ? await createTestDatabase()
        : { target: { kind: 'postgres' as const, url: shared, poolMax: 30 }, drop: async () => {} };
  // Identity documents (and the sandbox's generated VAPID keys) of a test world live in a temporary
  // directory removed on close.
  const documentsDir = await mkdtemp(path.join(os.tmpdir(), 'billrail-documents-'));
  // The port is chosen first, so that the service is built with the address it answers at.
  const port = await choosePort(
    loadConfig({
      NODE_ENV: 'test',
      SANDBOX: '1',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
      RATE_LIMIT_PHONE_PER_MINUTE: '100000',
      PORT: '0',
      DATA_DIR: documentsDir,
      WORKER: '0',
      ...(process.env.REDIS_URL && options.withoutRedis !== true ? { REDIS_URL: process.env.REDIS_URL } : {}),
      ...poolerStart(database.target),
      ...options.env,
    }),
  );
  const { config } = port;
  // Through the pooler when TEST_DATABASE_POOLER_URL names one (pooler.ts), a test's proxy in front of it.
  const served = throughPooler(database.target);
  const target =
    served.kind === 'postgres'
      ? {
          ...served,
          poolMax: options.poolMax ?? served.poolMax,
          url: (await options.databaseUrl?.(served.url)) ?? served.url,
          ...(options.databaseTimeoutMs !== undefined ? { timeoutMs: options.databaseTimeoutMs } : {}),
        }
      : served;
  const ctx = await createContext(config, {
    documentsDir,
    database: target,
    ...(options.clock !== undefined ? { clock: options.clock } : {}),
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
    ...(options.debitRules !== undefined ? { debitRules: options.debitRules } : {}),
    ...(options.pushAgent !== undefined ? { pushAgent: options.pushAgent } : {}),
    ...(options.resolveHost !== undefined ? { resolveHost: options.resolveHost } : {}),
    rateLimitNamespace: options.rateLimitNamespace ?? `billrail-test-${randomBytes(4).toString('hex')}:`,
  });
  const app = await buildApp(ctx);
  const answers = checkAnswers(app);
  await app.ready();
  await port.release();
  const baseUrl = await app.listen({ port: config.http.port, host: '127.0.0.1' });
  return {
    ctx,
    app,
    baseUrl,
    answers,
    async close() {
      await app.close();
      await ctx.close();
      await database.drop();
      await rm(documentsDir, { recursive: true, force: true });
      // After the clean-up, so that a mismatch fails the test file and leaves nothing behind.
      answers.assertNone();
    },
  };
}

export type ApiResponse<T = unknown> = {
  status: number;
  headers: Headers;
  body:
    | { success: true; data: T }
    | {
        success: false;
        error: { code: string; message: string; errorId?: string; details?: Record<string, unknown> };
      };
};

export type CallOptions = {
  token?: string;
  idempotencyKey?: string | null;
  headers?: Record<string, string>;
};

/** Calls an operation the way a client does: GET with query parameters, POST with {data} and a key. */
export async function call<T = unknown>(
  world: Reachable,
  method: 'GET' | 'POST',
  operation: string,
  data: Record<string, unknown> = {},
  options: CallOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let url = `${world.baseUrl}/_serverFn/${operation}`;
  let body: string | undefined;
  if (method === 'GET') {
    const query = new URLSearchParams(Object.entries(data).map(([k, v]): [string, string] => [k, String(v)]));
    if ([...query].length > 0) url += `?${query}`;
  } else {
    headers['content-type'] = 'application/json';
    const key = options.idempotencyKey === undefined ? randomUUID() : options.idempotencyKey;
    if (key !== null) headers['idempotency-key'] = key;
    body = JSON.stringify({ data });
  }
  const response = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as ApiResponse<T>['body'],
  };
}

/**
 * Sends any input, also one no schema admits, as a client would: GET with the fields as query
 * parameters (a value that is not a string as JSON, an input that is not an object as `value`),
 * POST as {data} with a fresh Idempotency-Key. The raw response, for tests of hostile input.
 */
export async function sendRaw(
  world: Reachable,
  method: 'GET' | 'POST',
  operation: string,
  input: unknown,
  token: string | undefined,
): Promise<Response> {
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  let url = `${world.baseUrl}/_serverFn/${operation}`;
  let body: string | undefined;
  if (method === 'GET') {
    const fields =
      input !== null && typeof input === 'object' && !Array.isArray(input) ? input : { value: input };
    const query = new URLSearchParams(
      Object.entries(fields).map(([k, v]): [string, string] => [
        k,
        typeof v === 'string' ? v : JSON.stringify(v),
      ]),
    );
    if ([...query].length > 0) url += `?${query}`;
  } else {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = randomUUID();
    body = JSON.stringify({ data: input });
  }
  return fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
}

export const get = <T = unknown>(
  world: Reachable,
  operation: string,
  data?: Record<string, unknown>,
  options?: CallOptions,
) => call<T>(world, 'GET', operation, data, options);
export const post = <T = unknown>(
  world: Reachable,
  operation: string,
  data?: Record<string, unknown>,
  options?: CallOptions,
) => call<T>(world, 'POST', operation, data, options);

/** The data of a successful response; fails the test with the error otherwise. */
export function ok<T>(response: ApiResponse<T>): T {
  if (response.status !== 200 || !response.body.success) {
    throw new Error(`expected success, got ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body.data;
}

/** The error of a failed response; fails the test if it succeeded. */
export function failure(response: ApiResponse) {
  if (response.body.success)
    throw new Error(`expected an error, got ${response.status}: ${JSON.stringify(response.body)}`);
  return { status: response.status, ...response.body.error };
}

let phoneCounter = 0;
/** A distinct valid Nigerian number per call (0803 prefix, MTN), in local format. */
export function uniquePhone(): string {
  phoneCounter += 1;
  const suffix = `${process.pid % 1000}${phoneCounter}`.padStart(7, '0').slice(-7);
  return `0803${suffix}`;
}

export async function readSms(
  world: Reachable,
  phone: string,
): Promise<{ phone: string; message: string; code: string }> {
  const response = await fetch(`${world.baseUrl}/__sandbox/sms?phone=${encodeURIComponent(phone)}`);
  const body = (await response.json()) as {
    success: boolean;
    data: { phone: string; message: string; code: string };
  };
  if (!body.success) throw new Error(`no SMS for ${phone}`);
  return body.data;
}

export type SignedIn = {
  phone: string;
  userId: string;
  accessToken: string;
  refreshToken: string;
};

/** Signs a phone in through requestOtp, the sandbox SMS and verifyOtp. */
export async function signIn(
  world: Reachable,
  phone = uniquePhone(),
  extra: Record<string, unknown> = {},
): Promise<SignedIn> {
  ok(await post(world, 'requestOtp', { phone }));
  const { code } = await readSms(world, phone);
  const session = ok(
    await post<{ accessToken: string; refreshToken: string; user: { id: string } }>(world, 'verifyOtp', {
      phone,
      code,
      ...extra,
    }),
  );
  return {
    phone,
    userId: session.user.id,
    accessToken: session.accessToken,
    refreshToken: session.refreshToken,
  };
}

/**
 * Moves the sandbox clock past the 60 s OTP resend window (without running jobs), so the same phone
 * may ask for a new code: a sign-in uses up its code but keeps the window closed.
 */
export function passOtpResendWindow(world: World): void {
  world.ctx.sandboxClock!.advance(61);
}

/** Signs an already signed-in phone in again, as a second device would a minute later. */
export async function signInAgain(
  world: World,
  phone: string,
  extra: Record<string, unknown> = {},
): Promise<SignedIn> {
  passOtpResendWindow(world);
  return signIn(world, phone, extra);
}
