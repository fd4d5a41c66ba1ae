import { randomUUID } from 'node:crypto';
import { type Envelope, REQUEST_TIMEOUT_SECONDS, readOtp } from '../common.ts';

// The soak's client of the API, as a careful mobile client is: every POST with an Idempotency-Key
// that it keeps across retries; a network error, a timeout, a 5xx, a 429 or 409
// IDEMPOTENCY_IN_PROGRESS is retried with the same key (on the next API process) until a deadline;
// a 401 refreshes the session once. Every single request is recorded (operation, API process,
// status, latency) for the report and for what the faults showed.

export type RequestRecord = {
  op: string;
  api: number;
  /** performance.now() when it was sent. */
  at: number;
  ms: number;
  /** The HTTP status, or 0 for no answer (refused, reset, timed out). */
  status: number;
  code: string | undefined;
};

export type SoakClient = {
  apis: string[];
  sandboxUrl: string;
  records: RequestRecord[];
  /** Round-robin position over apis. */
  turn: { next: number };
};

export type Session = {
  phone: string;
  userId: string;
  accessToken: string;
  refreshToken: string;
  refreshing: Promise<void> | undefined;
};

export type Answer = {
  kind: 'answer';
  status: number;
  body: Envelope;
  replayed: boolean;
  /** An earlier try got no answer (its process was killed, say): it may have been carried out. */
  afterLostAnswer: boolean;
};
export type Outcome = Answer | { kind: 'unresolved'; last: string };

export type CallOptions = {
  session?: Session | undefined;
  method?: 'GET' | 'POST';
  /** The Idempotency-Key: a new one unless the caller keeps it (to retry later). */
  key?: string;
  /** How long retries go on before the outcome is left unresolved. */
  deadlineMs?: number;
  /** Send to this API process only, once: no retry (the rate-limit burst). */
  api?: number;
};

const DEFAULT_DEADLINE_MS = 60_000;
const RETRY_PAUSE_MS = 500;

export function soakClient(apis: string[], sandboxUrl: string): SoakClient {
  return { apis, sandboxUrl, records: [], turn: { next: 0 } };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function retryable(status: number, body: Envelope | undefined): boolean {
  if (status === 0 || status >= 500 || status === 429) return true;
  return status === 409 && body?.error?.code === 'IDEMPOTENCY_IN_PROGRESS';
}

async function once(
  client: SoakClient,
  api: number,
  op: string,
  data: object,
  options: CallOptions & { key: string },
): Promise<{ status: number; body: Envelope | undefined; replayed: boolean; retryAfter: number }> {
  const base = client.apis[api] as string;
  const method = options.method ?? 'POST';
  const query =
    method === 'GET'
      ? `?${new URLSearchParams(Object.entries(data).map(([k, v]): [string, string] => [k, String(v)]))}`
      : '';
  const headers: Record<string, string> = {};
  if (options.session !== undefined) headers.authorization = `Bearer ${options.session.accessToken}`;
  if (method === 'POST') {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = options.key;
  }
  const at = performance.now();
  let status = 0;
  let body: Envelope | undefined;
  let replayed = false;
  let retryAfter = 0;
  try {
    const response = await fetch(`${base}/_serverFn/${op}${query === '?' ? '' : query}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: JSON.stringify({ data }) } : {}),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
    });
    status = response.status;
    replayed = response.headers.get('idempotent-replayed') === 'true';
    retryAfter = Number(response.headers.get('retry-after') ?? 0);
    body = (await response.json().catch(() => undefined)) as Envelope | undefined;
  } catch {
    status = 0;
  }
  client.records.push({ op, api, at, ms: performance.now() - at, status, code: body?.error?.code });
  return { status, body, replayed, retryAfter };
}

/** One operation, retried as a careful client retries, to a definite answer or the deadline. */
export async function call(
  client: SoakClient,
  op: string,
  data: object,
  options: CallOptions = {},
): Promise<Outcome> {
  const key = options.key ?? randomUUID();
  const deadline = performance.now() + (options.deadlineMs ?? DEFAULT_DEADLINE_MS);
  let last = 'not sent';
  let refreshed = false;
  let afterLostAnswer = false;
  for (;;) {
    const api = options.api ?? client.turn.next++ % client.apis.length;
    const answer = await once(client, api, op, data, { ...options, key });
    if (answer.status === 401 && options.session !== undefined && !refreshed) {
      refreshed = true;
      await refresh(client, options.session);
      continue;
    }
    if (options.api !== undefined || !retryable(answer.status, answer.body)) {
      if (answer.body === undefined)
        return { kind: 'unresolved', last: `HTTP ${answer.status} without a body` };
      return {
        kind: 'answer',
        status: answer.status,
        body: answer.body,
        replayed: answer.replayed,
        afterLostAnswer,
      };
    }
    if (answer.status === 0) afterLostAnswer = true;
    last = answer.status === 0 ? 'no answer' : `HTTP ${answer.status} ${answer.body?.error?.code ?? ''}`;
    if (performance.now() > deadline) return { kind: 'unresolved', last };
    await pause(Math.max(RETRY_PAUSE_MS, Math.min(answer.retryAfter, 30) * 1000));
  }
}

/** The answer's data when it is a 200; throws otherwise (setup steps, which must work). */
export async function must<T>(outcome: Promise<Outcome>, what: string): Promise<T> {
  const settled = await outcome;
  if (settled.kind === 'answer' && settled.status === 200 && settled.body.success)
    return settled.body.data as T;
  throw new Error(
    `${what}: ${settled.kind === 'answer' ? `${settled.status} ${JSON.stringify(settled.body)}` : settled.last}`,
  );
}

/**
 * requestOtp, the code from the sandbox's SMS, verifyOtp. A verifyOtp whose answer was lost (its
 * process killed) may have used the code up, and its answer is never kept for replay (it carries
 * tokens), so its retry is refused 401: then, as a person would, ask for a new code (once the resend
 * window allows: requestOtp's 429 is waited out) and sign in with it.
 */
export async function signIn(client: SoakClient, phone: string): Promise<Session> {
  let verified: Outcome;
  for (let attempt = 1; ; attempt++) {
    // Again, the resend window (60 s of the service's clock) may still be closed: waited out.
    const patience = attempt === 1 ? {} : { deadlineMs: 3 * 60_000 };
    await must(call(client, 'requestOtp', { phone }, patience), `requestOtp ${phone}`);
    const code = await readOtp(client.sandboxUrl, phone);
    if (code === null) throw new Error(`no SMS for ${phone}`);
    verified = await call(client, 'verifyOtp', { phone, code });
    const usedUpUnseen = verified.kind === 'answer' && verified.status === 401 && verified.afterLostAnswer;
    if (!usedUpUnseen || attempt === 3) break;
  }
  const signedIn = await must<{ accessToken: string; refreshToken: string; user: { id: string } }>(
    Promise.resolve(verified),
    `verifyOtp ${phone}`,
  );
  return {
    phone,
    userId: signedIn.user.id,
    accessToken: signedIn.accessToken,
    refreshToken: signedIn.refreshToken,
    refreshing: undefined,
  };
}

/**
 * A new access token (they live 15 minutes, and the soak moves the clock past that). One refresh at a
 * time per session: a second use of a rotated refresh token would revoke the session. A refresh
 * whose answer was lost leaves a revoked token behind: then the person signs in again.
 */
export function refresh(client: SoakClient, session: Session): Promise<void> {
  session.refreshing ??= (async () => {
    const outcome = await call(client, 'refreshSession', { refreshToken: session.refreshToken });
    if (outcome.kind === 'answer' && outcome.status === 200) {
      const tokens = outcome.body.data as { accessToken: string; refreshToken: string };
      session.accessToken = tokens.accessToken;
      session.refreshToken = tokens.refreshToken;
      return;
    }
    const again = await signIn(client, session.phone);
    session.accessToken = again.accessToken;
    session.refreshToken = again.refreshToken;
  })().finally(() => {
    session.refreshing = undefined;
  });
  return session.refreshing;
}

/** A POST to the sandbox's controls; the status and the JSON answer (null if none). */
export async function sandboxPost(
  client: SoakClient,
  path: string,
  body: object,
): Promise<{ status: number; data: unknown }> {
  const response = await fetch(`${client.sandboxUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5 * 60_000),
  });
  const text = await response.text();
  let data: unknown = null;
  try {
    data = JSON.parse(text);
  } catch {
    data = text;
  }
  return { status: response.status, data };
}

const PAGE = 100;

/** Every item of a paged list operation (API.md section 5), page after page. */
export async function listAll<T>(
  client: SoakClient,
  op: string,
  session: Session,
  query: object = {},
): Promise<T[]> {
  const all: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await must<{ items: T[]; total: number }>(
      call(client, op, { ...query, limit: PAGE, offset }, { session, method: 'GET' }),
      op,
    );
    all.push(...page.items);
    if (offset + PAGE >= page.total) return all;
  }
}
