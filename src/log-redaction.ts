import type { SerializedRequest } from 'pino';

// Credentials that travel in a URL's query string, kept out of every log line. A signed KYC document
// URL (/kyc/documents/<id>?expires=...&signature=...) is usable by whoever reads it for 10 minutes;
// a liveness token handed back to /verify?livenessToken=... stands for a face check; a presigned
// object-store URL carries its signature. The request log gets the URL without them (the `req`
// serializer below), and every line the logger writes passes through `redactUrlCredentials` as the
// net for the other places a URL turns up (an error's message, a URL a handler logs itself).

/** Paths whose query string is a signature as a whole: logged without any of it. */
const SIGNED_PATH = /(\/kyc\/documents\/[^?\s"\\]*)\?(?:[^\s"\\#]|\\(?!"))*/g;

/**
 * Query parameters that are credentials on any path, with `=` as is or percent-encoded (a URL
 * carried inside another's parameter, `?next=%2Fverify%3FlivenessToken%3D...`), each after a `?` or
 * `&` (plain or encoded) so that a word merely ending in one is left alone. The value ends at the
 * next parameter, plain or encoded.
 */
const CREDENTIAL_PARAMETER =
  /(?<=[?&]|%3F|%26)(signature|expires|livenessToken|x-amz-signature|x-amz-credential|x-amz-security-token)(=|%3D)(?:(?!%26)[^&#\s"\\])*/gi;

const REDACTED = '[redacted]';

/**
 * The USSD callback's secret path segment (POST /api/public/ussd/<USSD_CALLBACK_TOKEN>): the gateway
 * signs nothing, so whoever read it from a log could call the callback as the gateway.
 */
const USSD_CALLBACK_TOKEN = /(\/api\/public\/ussd\/)[^/?#\s"\\]+/g;

/** The URL (or any text holding URLs) with the credentials of its query strings replaced. */
export function redactUrlCredentials(text: string): string {
  const withoutToken = text.includes('/ussd/') ? text.replace(USSD_CALLBACK_TOKEN, `$1${REDACTED}`) : text;
  // Cheap test first: nearly every log line holds no query string at all.
  if (!withoutToken.includes('?') && !/%3D/i.test(withoutToken) && !withoutToken.includes('='))
    return withoutToken;
  return withoutToken
    .replace(SIGNED_PATH, `$1?${REDACTED}`)
    .replace(CREDENTIAL_PARAMETER, (_match, name: string, equals: string) => `${name}${equals}${REDACTED}`);
}

type LoggedRequest = {
  method: string;
  url: string;
  host?: string;
  ip?: string;
  headers?: Record<string, unknown>;
  socket?: { remotePort?: number };
};

/**
 * The request as the log shows it: Fastify's own fields (lib/logger-pino.js), the URL without its
 * credentials. Given to pino as the `req` serializer, it takes precedence over Fastify's.
 */
export function loggedRequest(request: LoggedRequest): SerializedRequest {
  return {
    method: request.method,
    url: redactUrlCredentials(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  } as unknown as SerializedRequest;
}
