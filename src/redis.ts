import { Redis } from 'ioredis';
import type { Logger } from 'pino';

// Redis (REDIS_URL) holds what the processes share but the service can do without: the rate limit's
// counts and the catalogue cache. Its callers carry on without it (the rate limit counts per process,
// http/rate-limit-store.ts; the catalogue cache misses and asks the provider, catalogue/cache.ts), so
// an outage must cost a request next to nothing:
// - while the connection is down, a command fails at once (no offline queue to wait in);
// - a command on a connection that stopped answering (a partition) gives up after
//   REDIS_COMMAND_TIMEOUT_MS, and that connection is dropped (dropOnTimeout), so the commands after
//   it fail at once until a new one is ready.
// Redis answers in well under a millisecond when it is there; the bound is a second so that an event
// loop held up under load (a timer runs before the answer waiting behind it) does not count as an
// outage.
export const REDIS_COMMAND_TIMEOUT_MS = 1_000;

/** A Redis client for `purpose` whose commands never wait past REDIS_COMMAND_TIMEOUT_MS. */
export function openRedis(url: string, logger: Logger, purpose: string): Redis {
  const redis = new Redis(url, {
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  });
  // ioredis reports every failed reconnect (every 2 s or so in an outage): one warning per outage,
  // and one line when it is back. Without a listener it would print each to stderr.
  let out = false;
  redis.on('error', (error: unknown) => {
    if (out) return;
    out = true;
    logger.warn({ err: error, purpose }, 'Redis is out of reach; carrying on without it');
  });
  redis.on('ready', () => {
    if (out) logger.info({ purpose }, 'Redis is back');
    out = false;
  });
  return redis;
}

/**
 * Called with the error of a command that failed: one that timed out leaves a connection that
 * stopped answering, dropped here (and made again by ioredis) so the next commands fail at once.
 */
export function dropOnTimeout(redis: Redis, error: unknown): void {
  if (error instanceof Error && error.message === 'Command timed out' && redis.status === 'ready')
    redis.disconnect(true);
}

/** Closes the client: politely when Redis answers, at once when it does not. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
