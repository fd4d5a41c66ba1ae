import createClient, { type Middleware } from 'openapi-fetch';
import type { ApiError } from './errors.ts';
import { getOperationNames } from './get-operations.gen.ts';
import type { operations, paths } from './schema';
import { session } from './session.ts';

// The one way the client speaks to the service: openapi-fetch over the types generated from
// /openapi.json (web/src/api/schema.d.ts), so every call is checked against the contract. The
// middleware adds the bearer token and, when the service says the access token has expired, refreshes
// it once (silently) and sends the same request again; a refresh that fails signs the person out.

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

/** Exchanges the refresh token for new tokens, once at a time however many calls wait on it. */
function refresh(): Promise<boolean> {
  refreshing ??= (async () => {
    const refreshToken = session.refreshToken();
    if (refreshToken === null) return false;
    const response = await fetch('/_serverFn/refreshSession', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ data: { refreshToken } }),
    }).catch(() => null);
    if (response === null) return false;
    if (!response.ok) {
      if (response.status === 401) session.clear();
      return false;
    }
    const body = (await response.json()) as { data: { accessToken: string; refreshToken: string } };
    session.set(body.data);
    return true;
  })().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

const auth: Middleware = {
  async onRequest({ request }) {
    if (session.accessToken() === null && session.refreshToken() !== null) await refresh();
    const token = session.accessToken();
    if (token !== null) request.headers.set('authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    if (response.status !== 401 || request.url.endsWith('/refreshSession')) return response;
    if (!(await refresh())) return response;
    const retry = request.clone();
    retry.headers.set('authorization', `Bearer ${session.accessToken()}`);
    return fetch(retry);
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
 * with other input, a corrected PIN say, would be refused as reused). A lost connection, a 5xx, or a
 * request still in progress keep the key: the first attempt may have gone through.
 */
export const answeredRefusal = (error: unknown): boolean =>
  error instanceof CallError &&
  error.status >= 400 &&
  error.status < 500 &&
  !['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_KEY_REUSED', 'RATE_LIMITED'].includes(error.code);

/**
 * Calls an operation. A POST carries an Idempotency-Key: pass the same one when retrying the same
 * intent (a purchase after a lost connection), so the service does it once.
 */
export async function call<N extends OperationName>(
  name: N,
  input: Input<N>,
  options: { idempotencyKey?: string; signal?: AbortSignal } = {},
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
  const body = result.error as {
    error?: { code: string; message: string; details?: Record<string, unknown> };
  };
  if (result.response.status === 401) session.clear();
  throw new CallError({
    code: body?.error?.code ?? 'INTERNAL',
    message: body?.error?.message ?? result.response.statusText,
    status: result.response.status,
    ...(body?.error?.details === undefined ? {} : { details: body.error.details }),
  });
}

/** The operations the service answers on GET (generated with the types); the rest POST. */
const getOperations: ReadonlySet<string> = new Set<string>(getOperationNames);
