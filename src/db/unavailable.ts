// Whether an error says that the database could not be reached or stopped answering, as opposed to
// a statement it refused. The first is the service's own outage (503 SERVICE_UNAVAILABLE: nothing was
// done that the client can see, retry shortly); the second stays a bug (500 INTERNAL).

/** SQLSTATEs of a server that is going away or not taking connections (PostgreSQL appendix A). */
const unavailableStates = new Set([
  '57P01', // admin_shutdown: a restart or failover ended the session
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now: starting up or in recovery
  '53300', // too_many_connections
]);

/** Socket errors on the way to the server (a cut, a refused or unreachable address). */
const socketCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * node-postgres's own words for a connection that broke or a wait that ran out: its errors carry no
 * code for these (pg 8), only the message.
 */
const driverMessages = [
  /^Connection terminated/, // the server or a proxy closed the socket, or the connect timed out
  /^timeout exceeded when trying to connect/, // the pool's wait for a connection (connectionTimeoutMillis)
  /^Query read timeout/, // query_timeout: the server stopped answering
  /is not queryable/, // a client whose connection already broke
];

export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    if (saysUnavailable(current)) return true;
    // Wrapped errors (cause) and a connect that tried every address (AggregateError).
    pending.push((current as { cause?: unknown }).cause);
    if (current instanceof AggregateError) pending.push(...current.errors);
  }
  return false;
}

function saysUnavailable(error: object): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    // Class 08: connection exception (PostgreSQL appendix A).
    if (/^08[0-9A-Z]{3}$/.test(code) || unavailableStates.has(code) || socketCodes.has(code)) return true;
  }
  const message = (error as { message?: unknown }).message;
  return typeof message === 'string' && driverMessages.some((pattern) => pattern.test(message));
}
