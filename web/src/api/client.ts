import createClient, { type Middleware } from 'openapi-fetch';
import type { ApiError } from './errors.ts';
import { getOperationNames } from './get-operations.gen.ts';
import type { operations, paths } from './schema';
import { enrolmentNeeded, secondFactor } from './second-factor.ts';
import { session } from './session.ts';

// The one way the client speaks to the service: openapi-fetch over the types generated from
// /openapi.json (web/src/api/schema.d.ts), so every call is checked against the contract. The
// middleware adds the bearer token and, when the service says the access token has expired, gets a
// new one (silently) and sends the same request again. Only a refresh token the service refuses while
// it is still the current one signs the person out (src/api/session.ts: one session for all tabs).

export type OperationName = keyof operations;
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** A POST's input: the `data` of its request envelope (API.md section 2). */
type Body<N extends OperationName> =
  NonNullable<operations[N]['requestBody']> extends { content: { 'application/json': { data: infer D } } }
    ? D
    : never;
/** A GET's input: its query, or nothing. */
type Query<N extends OperationName> = operations[N]['parameters'] extends { query?: infer Q }
  ? [NonNullable<Q>] extends [never]
    ? Record<string, never>
    : NonNullable<Q>
  : Record<string, never>;
export type Input<N extends OperationName> = [Body<N>] extends [never] ? Query<N> : Body<N>;
export type Output<N extends OperationName> =
  Json<operations[N]['responses'][200]> extends { data: infer D } ? D : never;

const client = createClient<paths>({ baseUrl: '' });

let refreshing: Promise<boolean> | null = null;

/**
 * Gets this tab a live access token in place of `ended` (the one the service refused, or null when
 * the tab has none yet): once at a time in this tab however many calls wait on it, and one tab at a
 * time in the browser. True when there is one to use.
 */
function refresh(ended: string | null): Promise<boolean> {
  refreshing ??= session
    .exclusively(async () => {
      // While this tab waited, another may have refreshed: its access token has come over already.
      const current = session.accessToken();
      if (current !== null && current !== ended) return true;
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const refreshToken = await session.currentRefreshToken();
        if (refreshToken === null) return false;
        const exchanged = await exchange(refreshToken);
        if (exchanged === 'unanswered') return false;
        if (exchanged !== 'refused') {
          await session.rotated(refreshToken, exchanged);
          return true;
        }
        // Refused. A token that is no longer the current one lost a race (another tab, or a sign-in,
        // replaced it meanwhile): not a reason to sign out; the current one is tried instead.
        if ((await session.currentRefreshToken()) === refreshToken) {
          session.clear();
          return false;
        }
      }
      return false;
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/** refreshSession: new tokens, 'refused' (401: that token cannot be used), or 'unanswered' (try later). */
async function exchange(refreshToken: string) {
  const response = await fetch('/_serverFn/refreshSession', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ data: { refreshToken } }),
  }).catch(() => null);
  if (response?.status === 401) return 'refused' as const;
  if (response?.ok !== true) return 'unanswered' as const;
  const body = (await response.json()) as { data: { accessToken: string; refreshToken: string } };
  return body.data;
}

/**
 * The sign-in operations carry no bearer token (API.md section 4): their 401 is about the code, never
 * the session, and they must not wait on a refresh.
 */
const signInPaths = new Set(['/_serverFn/requestOtp', '/_serverFn/verifyOtp']);
const isSignIn = (request: Request) => signInPaths.has(new URL(request.url).pathname);
const bearerOf = (request: Request) => request.headers.get('authorization')?.replace(/^Bearer /, '') ?? null;

/** A copy of each request as first sent: a body can be read once, and a retry sends it again. */
const unsent = new WeakMap<Request, Request>();

const auth: Middleware = {
  async onRequest({ request }) {
    if (isSignIn(request)) return request;
    if (session.accessToken() === null && session.signedIn()) await refresh(null);
    const token = session.accessToken();
    if (token !== null) request.headers.set('authorization', `Bearer ${token}`);
    unsent.set(request, request.clone());
    return request;
  },
  async onResponse({ request, response }) {
    // A token refused because another tab's refresh ended it just now: refresh (or take that tab's
    // token) and send again, a few times at most.
    let answer = response;
    let sent = bearerOf(request);
    for (let attempt = 0; answer.status === 401 && sent !== null && attempt < 3; attempt += 1) {
      if (!(await refresh(sent))) break;
      const retry = (unsent.get(request) ?? request).clone();
      sent = session.accessToken();
      retry.headers.set('authorization', `Bearer ${sent}`);
      answer = await fetch(retry);
    }
    return answer;
  },
};
client.use(auth);

export class CallError extends Error implements ApiError {
  code: string;
  details?: Record<string, unknown>;
  status: number;
  constructor(error: ApiError) {
    super(error.message);
    this.code = error.code;
    this.status = error.status;
    if (error.details !== undefined) this.details = error.details;
  }
}

/**
 * The service answered with a refusal (a 4xx) and kept that answer under the request's
 * Idempotency-Key: nothing was charged, so the next try of the intent needs a new key (the same key
 * with other input, a corrected PIN say, would be refused as reused). So is a 503 SERVICE_PAUSED: an
 * operator paused the service and nothing was debited (API.md section 17.4). A lost connection, any
 * other 5xx, or a request still in progress keep the key: the first attempt may have gone through.
 */
export const answeredRefusal = (error: unknown): boolean =>
  error instanceof CallError &&
  ((error.status >= 400 && error.status < 500) || error.code === 'SERVICE_PAUSED') &&
  !['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED'].includes(error.code);

/** The operations that give an admin's session its second factor: never held back for it. */
const secondFactorOperations: ReadonlySet<OperationName> = new Set<OperationName>([
  'adminEnrolTotp',
  'adminConfirmTotp',
  'adminVerifyTotp',
]);

type CallOptions = { idempotencyKey?: string; signal?: AbortSignal };

/**
 * Calls an operation. A POST carries an Idempotency-Key: pass the same one when retrying the same
 * intent (a purchase after a lost connection), so the service does it once.
 *
 * An admin call refused for want of the session's second factor (403 SECOND_FACTOR_REQUIRED, API.md
 * section 17.4) waits while the admin area asks for the code (second-factor.ts), then goes again
 * under a new key: the refusal did nothing, and the service may keep it under the first key.
 */
export async function call<N extends OperationName>(
  name: N,
  input: Input<N>,
  options: CallOptions = {},
): Promise<Output<N>> {
  try {
    return await send(name, input, options);
  } catch (error) {
    const held =
      error instanceof CallError &&
      error.code === 'SECOND_FACTOR_REQUIRED' &&
      !secondFactorOperations.has(name) &&
      options.signal?.aborted !== true;
    if (!held || !(await secondFactor.ask({ enrolled: !enrolmentNeeded(error.details) }))) throw error;
    const { idempotencyKey: _refused, ...again } = options;
    return call(name, input, again);
  }
}

async function send<N extends OperationName>(
  name: N,
  input: Input<N>,
  options: CallOptions,
): Promise<Output<N>> {
  const path = `/_serverFn/${name}` as const;
  const isGet = getOperations.has(name);
  let result: { data?: unknown; error?: unknown; response: Response };
  try {
    const signal = options.signal === undefined ? {} : { signal: options.signal };
    result = isGet
      ? await client.GET(path as never, { params: { query: input }, ...signal } as never)
      : await client.POST(
          path as never,
          {
            body: { data: input },
            headers: { 'idempotency-key': options.idempotencyKey ?? crypto.randomUUID() },
            ...signal,
          } as never,
        );
  } catch {
    throw new CallError({ code: 'OFFLINE', message: 'offline', status: 0 });
  }
  if (result.response.ok) return (result.data as { data: Output<N> }).data;
  if (result.response.status === 401 && session.signedIn() && !signInPaths.has(path)) {
    // Refused for an expired token, and the refresh that would have renewed it got no answer (an ended
    // session signs out): the connection, not the session, is what failed.
    throw new CallError({ code: 'OFFLINE', message: 'offline', status: 0 });
  }
  const body = result.error as {
    error?: { code: string; message: string; details?: Record<string, unknown> };
  };
  throw new CallError({
    code: body?.error?.code ?? 'INTERNAL',
    message: body?.error?.message ?? result.response.statusText,
    status: result.response.status,
    ...(body?.error?.details === undefined ? {} : { details: body.error.details }),
  });
}

/** The operations the service answers on GET (generated with the types); the rest POST. */
const getOperations: ReadonlySet<string> = new Set<string>(getOperationNames);
