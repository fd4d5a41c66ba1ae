import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parse } from 'secure-json-parse';

// How the sandbox payment provider reads a request and refuses one: Paystack's `{status: false,
// message}` on its API, the service's envelope on the sandbox's own controls.

export const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

export const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const accountNumberPattern = /^\d{10}$/;
/** The account number nothing resolves (404 on resolve, refused as a transfer recipient). */
export const unresolvableAccountNumber = '0000000000';

export type Body = Record<string, unknown>;

/** Paystack's refusal: `{status: false, message}`. */
export function refuse(reply: FastifyReply, status: number, message: string) {
  return reply.code(status).send({ status: false, message });
}

/** The service's envelope, for the sandbox's own control endpoints. */
export function invalid(reply: FastifyReply, message: string) {
  return reply.code(400).send({ success: false, error: { code: 'VALIDATION_ERROR', message } });
}

export function asBody(body: unknown): Body {
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Body) : {};
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function nonBlank(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/**
 * A positive integer amount in kobo, exactly: a JSON number JSON carried exactly (a safe integer) or,
 * from a form, a string of digits. Anything else is null.
 */
export function wireAmount(value: unknown): bigint | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? BigInt(value) : null;
  if (typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value)) return BigInt(value);
  return null;
}

/** An http(s) URL, or undefined when the value is not one. */
export function httpUrl(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Metadata as an object (Paystack also takes it stringified); null when absent, undefined when bad. */
export function metadataObject(value: unknown): Record<string, unknown> | null | undefined {
  if (value === undefined || value === null || value === '') return null;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value) as unknown;
    } catch {
      return undefined;
    }
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
    ? (parsed as Record<string, unknown>)
    : undefined;
}

/** A fresh key for the map (random codes practically never collide; this makes sure). */
export function uniqueKey(map: ReadonlyMap<string, unknown>, make: () => string): string {
  for (;;) {
    const key = make();
    if (!map.has(key)) return key;
  }
}

/** Paystack's JSON bodies are small; the same cap as the service's own operations. */
const jsonBodyLimitBytes = 64 * 1024;

/** An error the API's error handler answers with its status, in Paystack's shape. */
const requestError = (statusCode: number, message: string) =>
  Object.assign(new Error(message), { statusCode });

/**
 * Reads JSON bodies as Paystack does: with `Content-Type: application/json`, and also with no
 * Content-Type at all, which is how Paystack's own Node SDK (@paystack/paystack-sdk) sends every body
 * (a JSON string and only the Authorization and User-Agent headers). Any other unknown type stays
 * 415. A body that is not JSON is the client's mistake (400), never the sandbox's (500).
 */
export function registerJsonBodies(api: FastifyInstance): void {
  const parseJson = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (e: Error | null, b?: unknown) => void,
  ) => {
    try {
      done(null, parse(String(body), { protoAction: 'error', constructorAction: 'error' }));
    } catch {
      request.log.info('sandbox payments: a request body that is not JSON');
      done(requestError(400, 'Invalid JSON body'));
    }
  };
  api.removeContentTypeParser('application/json');
  api.addContentTypeParser(
    'application/json',
    { parseAs: 'string', bodyLimit: jsonBodyLimitBytes },
    parseJson,
  );
  // '*' is also the parser Fastify asks for a body that came without a Content-Type.
  api.addContentTypeParser(
    '*',
    { parseAs: 'string', bodyLimit: jsonBodyLimitBytes },
    (request, body, done) => {
      if (request.headers['content-type'] !== undefined) {
        return done(requestError(415, 'Unsupported Media Type'));
      }
      parseJson(request, body, done);
    },
  );
}
