import { createRequire } from 'node:module';
import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { dropOnTimeout } from '../redis.ts';

// The rate limit's counts live in Redis (REDIS_URL), so that every API process counts one caller
// together. Redis is a helper, not the service's own state: while it is out of reach, each process
// counts on its own (the plugin's in-memory store) instead of failing every request or letting every
// request through. The guards on money and sign-in (PIN tries, OTP tries and sends) are counted in
// PostgreSQL and do not depend on it.

// The plugin's own two stores, used as they are: its Redis script and its in-memory window. They are
// files of the package, not what its index exports, so package.json pins its exact version (no caret):
// an upgrade is a deliberate change, made with test/http/rate-limit.test.ts and redis-outage.test.ts,
// never a minor release moving or changing them under us. Rewriting them here instead would copy the
// Redis script and the window arithmetic the plugin keeps right.
const require = createRequire(import.meta.url);
type StoreParts = { continueExceeding?: boolean; exponentialBackoff?: boolean };
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean | undefined,
  exponentialBackoff: boolean | undefined,
  redis: Redis,
  key: string,
) => FastifyRateLimitStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean | undefined,
  exponentialBackoff: boolean | undefined,
) => FastifyRateLimitStore;

/** Counts in the shared store; a count it cannot give is taken from this process's own instead. */
class FallingBackStore implements FastifyRateLimitStore {
  readonly shared: FastifyRateLimitStore;
  readonly local: FastifyRateLimitStore;
  readonly onFallback: (error: Error) => void;

  constructor(
    shared: FastifyRateLimitStore,
    local: FastifyRateLimitStore,
    onFallback: (error: Error) => void,
  ) {
    this.shared = shared;
    this.local = local;
    this.onFallback = onFallback;
  }

  incr(...[key, callback, timeWindow, max]: Parameters<FastifyRateLimitStore['incr']>): void {
    this.shared.incr(
      key,
      (error, result) => {
        if (error === null) return callback(null, result);
        this.onFallback(error);
        this.local.incr(key, callback, timeWindow, max);
      },
      timeWindow,
      max,
    );
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new FallingBackStore(
      this.shared.child(routeOptions),
      this.local.child(routeOptions),
      this.onFallback,
    );
  }
}

/** How often a process says again that it counts on its own (once a minute while Redis fails). */
const FALLBACK_WARNING_MS = 60_000;

/** The store class the plugin takes (`store`): Redis first, this process's own count while it fails. */
export function redisStoreWithLocalFallback(
  redis: Redis,
  nameSpace: string,
  logger: Logger,
): FastifyRateLimitStoreCtor {
  let warnedAt = Number.NEGATIVE_INFINITY;
  const onFallback = (error: Error) => {
    dropOnTimeout(redis, error);
    if (performance.now() - warnedAt < FALLBACK_WARNING_MS) return;
    warnedAt = performance.now();
    logger.warn({ err: error }, 'the rate limit counts per process: Redis did not answer');
  };
  return class extends FallingBackStore {
    constructor(params: StoreParts) {
      super(
        new RedisStore(params.continueExceeding, params.exponentialBackoff, redis, nameSpace),
        new LocalStore(params.continueExceeding, params.exponentialBackoff),
        onFallback,
      );
    }
  };
}
