import cors, { type FastifyCorsOptions } from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';

// CORS for front ends served from other origins (CORS_ORIGINS, API.md section 13). Only the
// operations (and the document that describes them) answer a browser from a listed origin; the
// payment webhook, the provider callbacks, the sandbox and everything else never do: no browser page
// has any business posting to them, so a preflight there is answered as any unknown OPTIONS request.
// With no origin listed the plugin is not even registered, and no response carries a CORS header.

const operationPrefix = '/_serverFn/';
const documentPath = '/openapi.json';

/** What a page calling the operations sends beyond the CORS-safelisted request headers. */
const allowedRequestHeaders = ['authorization', 'content-type', 'idempotency-key'];

/**
 * What a page may read of an answer beyond the safelisted response headers: how long to wait, whether
 * the answer is a replay of the first one under its Idempotency-Key, and the rate limit's count.
 */
export const exposedResponseHeaders = [
  'retry-after',
  'idempotent-replayed',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
];

/** How long a browser may keep a preflight's answer: ten minutes, below every browser's own cap. */
const preflightMaxAgeSeconds = 600;

function servesBrowsers(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0] ?? '';
  return path.startsWith(operationPrefix) || path === documentPath;
}

export async function registerCors(app: FastifyInstance, origins: readonly string[]): Promise<void> {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  const refused: FastifyCorsOptions = { origin: false };
  const granted = (origin: string): FastifyCorsOptions => ({
    // The one origin asking, never a list or '*': each answer names only the page it is for.
    origin,
    methods: ['GET', 'POST'],
    allowedHeaders: allowedRequestHeaders,
    exposedHeaders: exposedResponseHeaders,
    // Bearer tokens travel in the Authorization header, never in cookies: no credentials mode.
    credentials: false,
    maxAge: preflightMaxAgeSeconds,
    strictPreflight: true,
  });
  await app.register(cors, {
    // Before the operations' own onRequest hook (bearer auth), which a preflight cannot pass: a
    // browser sends no Authorization header with it.
    hook: 'onRequest',
    delegator: (request, callback) => {
      const origin = request.headers.origin;
      const answer = typeof origin === 'string' && allowed.has(origin) && servesBrowsers(request);
      callback(null, answer ? granted(origin) : refused);
    },
  });
}
