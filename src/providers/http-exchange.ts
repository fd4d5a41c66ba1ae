import { Agent, request as undiciRequest } from 'undici';

// One HTTP exchange with an outside party, as every adapter needs it: a single time budget for the
// whole call (the body included: headers followed by a stall are no answer), no redirects, and the
// retry rule that is safe for money. A read (`retry: true`, GET and other calls that change nothing)
// is sent once more after a network error or a 5xx while the budget lasts; anything else is sent once,
// since a repeated purchase or transfer could act twice. What the status and body mean is the
// adapter's to say.

export type ExchangeRequest = {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Sent as is (the caller serialises it and sets its content type). */
  body?: string;
  timeoutMs: number;
  /** True only for calls that change nothing at the other end. */
  retry: boolean;
};

export type ExchangeResult =
  /** An answer came: any status, with its body as text. */
  | { kind: 'answer'; status: number; text: string }
  /** No usable answer: `reason` completes "the call …" ("did not answer within 8000 ms"). */
  | { kind: 'no_answer'; reason: string };

/** Two attempts at most, the second only for a read. */
const attemptsMax = 2;

// One keep-alive connection pool per origin for every adapter, on undici's request API rather than
// fetch: the same client underneath, without the WHATWG stream layers that made fetch cost several
// times the CPU of the call itself (a purchase makes at least one such call).
const outbound = new Agent({ keepAliveTimeout: 10_000, connections: 64 });

export async function exchange(request: ExchangeRequest): Promise<ExchangeResult> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const attempts = request.retry ? attemptsMax : 1;
  for (let attempt = 1; ; attempt++) {
    // Another attempt only while the call's time budget lasts.
    const again = attempt < attempts && !deadline.aborted;
    let status: number;
    let text: string;
    try {
      const response = await undiciRequest(request.url, {
        dispatcher: outbound,
        method: request.method,
        headers: request.headers,
        ...(request.body !== undefined ? { body: request.body } : {}),
        signal: deadline,
      });
      status = response.statusCode;
      text = await response.body.text();
    } catch (error) {
      if (deadline.aborted) {
        return { kind: 'no_answer', reason: `did not answer within ${request.timeoutMs} ms` };
      }
      if (again) continue;
      return {
        kind: 'no_answer',
        reason: `is unreachable (${describeNetworkError(error)})`,
      };
    }
    // A redirect is never followed: the party we call answers at the address we were given.
    if (status >= 300 && status < 400) {
      return { kind: 'no_answer', reason: `is unreachable (it redirected with ${status}, not followed)` };
    }
    if (status >= 500 && again) continue;
    return { kind: 'answer', status, text };
  }
}

/** A network error with its cause, where the error carries one. */
export function describeNetworkError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`;
}

/** The body as JSON, or undefined when it is not JSON. */
export function safeJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Where an answer broke the schema, for the error: the first few field paths. */
export function issuePaths(error: { issues: { path: PropertyKey[] }[] }): string {
  return [...new Set(error.issues.map((issue) => issue.path.map(String).join('.') || '(root)'))]
    .slice(0, 5)
    .join(', ');
}

/** How much of a provider's own message goes into ours. */
const providerMessageLengthMax = 200;

/** A provider's message, trimmed and cut to a length fit for our reasons and logs. */
export function clipMessage(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > providerMessageLengthMax
    ? `${trimmed.slice(0, providerMessageLengthMax)}…`
    : trimmed;
}
