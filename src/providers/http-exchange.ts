import { Agent, type Dispatcher, errors, request as undiciRequest } from 'undici';

// The one JSON exchange every HTTP adapter makes with its party (exchangeJson): a single time budget
// for the whole call (the body included: headers followed by a stall are no answer), no redirects,
// and the retry rule that is safe for money. A read (`retry: true`: a GET, a status query, anything
// that changes nothing at the other end) is sent once more after a network error or a 5xx while the
// budget lasts; anything else is sent once, since a repeated purchase or transfer could act twice.
// What is never a party's word (no answer, a 5xx, a 429, a 2xx that is not JSON) is `no_answer`, which
// each adapter maps into its own indefinite outcome; what a 4xx means is the adapter's to say.
//
// No state here: the connection pool is the context's (createOutboundAgent), passed in each call.
// The pool also carries the context's ExchangeObserver (the /metrics figures of every call to an
// outside party), so that every adapter's calls are measured in this one place, whoever built it.

type ExchangeRequest = {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  /** Sent as is (the caller serialises it and sets its content type). */
  body?: string;
  timeoutMs: number;
  /** True only for calls that change nothing at the other end. */
  retry: boolean;
  /** The context's connection pool; undefined: undici's global one (a client a test builds alone). */
  dispatcher: Dispatcher | undefined;
};

type ExchangeResult =
  /** An answer came: any status, with its body as text. */
  | { kind: 'answer'; status: number; text: string }
  /** No usable answer: `reason` completes "the call …" ("did not answer within 8000 ms"). */
  | { kind: 'no_answer'; reason: string };

/** Two attempts at most, the second only for a read. */
const attemptsMax = 2;
/** Connections kept to one origin at most, and how long an idle one stays open. */
const outboundConnectionsMax = 64;
const outboundKeepAliveMs = 10_000;
/**
 * The largest body a party's answer may have. The biggest answers are catalogues: the sandbox's are
 * under 10 KB (the data vendor's plans, 8 KB, the largest), and a real SMM panel's services list, the
 * longest a provider sends, is a few thousand entries of about 250 bytes (1 to 2 MB). 8 MiB is far
 * above any of them, and bounds what a broken or hostile party can make a process hold in memory.
 */
export const responseBytesMax = 8 * 1024 * 1024;

/**
 * The keep-alive connection pool (one per origin) of a context's calls to outside parties: context.ts
 * makes one per context, gives it to every adapter and closes it in its close(), so that no pool
 * outlives the context that used it and two contexts in one process (tests, the bench) share none.
 * The adapters call through undici's request API rather than fetch: the same client underneath,
 * without the WHATWG stream layers that made fetch cost several times the CPU of the call itself (a
 * purchase makes at least one such call).
 */
export function createOutboundAgent(observer?: ExchangeObserver): Agent {
  return new OutboundAgent(
    {
      keepAliveTimeout: outboundKeepAliveMs,
      connections: outboundConnectionsMax,
      maxResponseSize: responseBytesMax,
    },
    observer,
  );
}

/** One finished call to an outside party, as the metrics count it. */
export type ObservedExchange = {
  /** The adapter's party: data, bills, social, paystack, dojah, sms. */
  party: string;
  /** What the call was for (JsonCall.operation), a small fixed set per adapter. */
  operation: string;
  /** `error` when no usable answer came (JsonReply's no_answer: the outcome is unknown). */
  result: 'answer' | 'error';
  /** The whole call, its one retry included. */
  seconds: number;
};

export type ExchangeObserver = (exchange: ObservedExchange) => void;

/** The context's pool, with the observer its calls are reported to. */
class OutboundAgent extends Agent {
  readonly observer: ExchangeObserver | undefined;
  constructor(options: Agent.Options, observer: ExchangeObserver | undefined) {
    super(options);
    this.observer = observer;
  }
}

async function exchange(request: ExchangeRequest): Promise<ExchangeResult> {
  const deadline = AbortSignal.timeout(request.timeoutMs);
  const attempts = request.retry ? attemptsMax : 1;
  for (let attempt = 1; ; attempt++) {
    // Another attempt only while the call's time budget lasts.
    const again = attempt < attempts && !deadline.aborted;
    let status: number;
    let text: string;
    try {
      const response = await undiciRequest(request.url, {
        ...(request.dispatcher !== undefined ? { dispatcher: request.dispatcher } : {}),
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
      // The same call would bring the same body again: no second attempt.
      if (isOversized(error)) {
        return { kind: 'no_answer', reason: `answered with a body over ${responseBytesMax} bytes` };
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

/** Where an adapter's calls go and what every one of them carries: part of its connection. */
export type JsonEndpoint = {
  /** Who is called (data, bills, social, paystack, dojah, sms): the metrics' `provider` label. */
  party: string;
  /** The party's address; calls go to it with their path appended. */
  baseUrl: string;
  /** Sent with every call (the credentials), beside `accept: application/json`. */
  headers: Record<string, string>;
  /** Bounds each call as a whole, the body and the one retry of a read included. */
  timeoutMs: number;
  /** The context's connection pool (createOutboundAgent); undefined: undici's global one. */
  dispatcher: Dispatcher | undefined;
};

/** What every adapter's options say of its party's address and its calls: its JsonEndpoint but the credentials. */
export type EndpointOptions = Omit<JsonEndpoint, 'headers' | 'dispatcher' | 'party'> & {
  /** The context's connection pool (createOutboundAgent); undefined or absent: undici's global one. */
  dispatcher?: Dispatcher | undefined;
};

/**
 * An adapter's endpoint: who it calls (`party`), its options, and the headers every call carries
 * (its credentials, if any).
 */
export function jsonEndpoint(
  party: string,
  options: EndpointOptions,
  headers: Record<string, string>,
): JsonEndpoint {
  return {
    party,
    baseUrl: options.baseUrl,
    headers,
    timeoutMs: options.timeoutMs,
    dispatcher: options.dispatcher,
  };
}

export type JsonCall = {
  /**
   * What the call is for, from a small fixed set (purchase, requery, balance, verify transaction...):
   * the metrics' `operation` label, so never an id, a reference or anything a caller chooses.
   */
  operation: string;
  method: 'GET' | 'POST';
  /** Appended to the base URL, whose trailing slashes are dropped; '' calls the base URL itself. */
  path: string;
  /** Headers of this call alone, over the endpoint's. */
  headers?: Record<string, string>;
  /** A JSON body, or a form (application/x-www-form-urlencoded). */
  body?: { json: unknown } | { form: Record<string, string> };
  /**
   * True only for a call that changes nothing at the other end (a GET, a status query): it is sent
   * once more after a network error or a 5xx. Never for a call that moves money or places an order.
   */
  retry: boolean;
};

export type JsonReply =
  /**
   * The party answered: a 2xx with a JSON body, or any other status below 500 but 429, with its body
   * as JSON (undefined when it is not JSON). What a non-2xx means is the adapter's to say: its own
   * refusal, or, without the party's shape, something in between (see strangerAnswer).
   */
  | { kind: 'answer'; status: number; body: unknown }
  /**
   * No usable answer, so the outcome of the call is unknown: no answer in time, a network error, a
   * redirect, a 5xx, a 429, a 2xx whose body is not JSON, a body over responseBytesMax (through the
   * context's pool). `reason` completes "the call …".
   */
  | { kind: 'no_answer'; reason: string; status: number | null };

/**
 * The one JSON exchange of every adapter: the URL, the headers and the body as the party takes them,
 * then exchange() (time budget, no redirects, the second attempt of a read only), then the statuses
 * that are never a party's word on the request. Adapters map `no_answer` into their own indefinite
 * outcome or error (unknown, pending, PaymentProviderError with definite false, ...).
 */
export async function exchangeJson(endpoint: JsonEndpoint, call: JsonCall): Promise<JsonReply> {
  const observer = endpoint.dispatcher instanceof OutboundAgent ? endpoint.dispatcher.observer : undefined;
  if (observer === undefined) return exchangeJsonOnce(endpoint, call);
  const started = performance.now();
  const reply = await exchangeJsonOnce(endpoint, call);
  observer({
    party: endpoint.party,
    operation: call.operation,
    result: reply.kind === 'answer' ? 'answer' : 'error',
    seconds: (performance.now() - started) / 1000,
  });
  return reply;
}

async function exchangeJsonOnce(endpoint: JsonEndpoint, call: JsonCall): Promise<JsonReply> {
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...endpoint.headers,
    ...call.headers,
  };
  let body: string | undefined;
  if (call.body !== undefined && 'json' in call.body) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(call.body.json);
  } else if (call.body !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(call.body.form).toString();
  }
  const result = await exchange({
    url: `${endpoint.baseUrl.replace(/\/+$/, '')}${call.path}`,
    method: call.method,
    headers,
    ...(body !== undefined ? { body } : {}),
    timeoutMs: endpoint.timeoutMs,
    retry: call.retry,
    dispatcher: endpoint.dispatcher,
  });
  if (result.kind === 'no_answer') return { kind: 'no_answer', reason: result.reason, status: null };
  const { status } = result;
  if (status >= 500) return { kind: 'no_answer', reason: `failed upstream (${status})`, status };
  // A party that is rate limiting us has not looked at the request: its body says nothing of it.
  if (status === 429) return { kind: 'no_answer', reason: 'is rate limiting us (429)', status };
  const parsed = safeJson(result.text);
  if (status >= 200 && status < 300 && parsed === undefined) {
    return { kind: 'no_answer', reason: `answered ${status} with a body that is not JSON`, status };
  }
  return { kind: 'answer', status, body: parsed };
}

/**
 * Why a non-2xx answer without the party's own body (`shape`: "Paystack's envelope") is no answer: it
 * comes from something in between (a proxy, a wrong base URL), which cannot tell whether the party
 * saw the request.
 */
export function strangerAnswer(status: number, shape: string): string {
  return `answered ${status} without ${shape} (is the base URL right?)`;
}

/** undici's error for a body over the pool's maxResponseSize (responseBytesMax). */
function isOversized(error: unknown): boolean {
  return error instanceof errors.ResponseExceededMaxSizeError;
}

/** A network error with its cause, where the error carries one. */
function describeNetworkError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${message}${cause}`;
}

/** The body as JSON, or undefined when it is not JSON. */
function safeJson(text: string): unknown {
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
