import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import { closeRedis, dropOnTimeout, openRedis } from '../redis.ts';

// The catalogue cache (SPEC.md "Limits": a catalogue refreshes at most every 30 minutes). Values are
// kept as JSON text with bigints tagged as decimal strings, in memory or in Redis (REDIS_URL), with
// the time they were fetched by the service's clock, so the sandbox clock ages them like everything
// else.
//
// Refreshing never stampedes the provider:
// - within a process, concurrent misses of one key share one fetch (single-flight), and the
//   refresh reads the store once more before fetching, so a read that missed just before another
//   refresh finished does not fetch again;
// - across processes (Redis), the refresh takes a short lock (SET NX PX). A process that does not
//   get it serves the stale value when there is one; with nothing cached it polls briefly for the
//   other's value and fetches itself only if none arrives in time (the holder may have died).
// A stale value outlives its 30 minutes (24 h in Redis) for one reason: when the provider fails, the
// stale value is served instead of an error. Only with nothing cached does the failure reach the
// caller.

export type CacheEntry = { json: string; fetchedAtMs: number };

export type CacheStore = {
  get(key: string): Promise<CacheEntry | null>;
  set(key: string, entry: CacheEntry): Promise<void>;
  /** A token when this process may refresh the key, null when another process is refreshing it. */
  lock(key: string): Promise<string | null>;
  unlock(key: string, token: string): Promise<void>;
  close(): Promise<void>;
};

export type CatalogueCacheOptions = {
  store: CacheStore;
  clock: Clock;
  logger: Logger;
  /** How long a fetched value is served without asking the provider again. */
  freshMs: number;
  /** With nothing cached and another process refreshing: how long to wait for its value. */
  lockWaitMs: number;
  lockPollMs: number;
};

export type CatalogueCache = {
  /** The cached value of `key`, fetched with `fetch` when missing or older than freshMs. */
  read<T>(key: string, fetch: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
};

export function createCatalogueCache(options: CatalogueCacheOptions): CatalogueCache {
  const { store, clock, logger } = options;
  const inFlight = new Map<string, Promise<string>>();

  const isFresh = (entry: CacheEntry): boolean => clock.now().getTime() - entry.fetchedAtMs < options.freshMs;

  // A cache that cannot be read is a miss, not an outage: the provider is still there.
  async function safeGet(key: string): Promise<CacheEntry | null> {
    try {
      return await store.get(key);
    } catch (error) {
      logger.warn({ err: error, key }, 'catalogue cache read failed; treating it as a miss');
      return null;
    }
  }

  async function waitForOther(key: string): Promise<CacheEntry | null> {
    for (let waited = 0; waited < options.lockWaitMs; waited += options.lockPollMs) {
      await delay(options.lockPollMs);
      const entry = await safeGet(key);
      if (entry !== null) return entry;
    }
    return null;
  }

  async function refresh(key: string, fetch: () => Promise<unknown>): Promise<string> {
    const current = await safeGet(key);
    if (current !== null && isFresh(current)) return current.json;
    let token: string | null;
    try {
      token = await store.lock(key);
    } catch (error) {
      logger.warn({ err: error, key }, 'catalogue refresh lock failed; refreshing without it');
      token = '';
    }
    if (token === null) {
      // Another process is refreshing: its value will be there shortly.
      if (current !== null) return current.json;
      const arrived = await waitForOther(key);
      if (arrived !== null) return arrived.json;
    }
    try {
      if (token !== null) {
        // Another process may have refreshed between our read and our lock.
        const latest = await safeGet(key);
        if (latest !== null && isFresh(latest)) return latest.json;
      }
      let value: unknown;
      try {
        value = await fetch();
      } catch (error) {
        if (current !== null) {
          // Stale beats nothing: catalogues change rarely, and the next read tries the provider again.
          logger.warn({ err: error, key }, 'catalogue refresh failed; serving the stale value');
          return current.json;
        }
        logger.warn({ err: error, key }, 'catalogue fetch failed with nothing cached');
        throw new AppError('UPSTREAM_UNAVAILABLE', 'the provider could not be reached; try again shortly');
      }
      const json = encodeJson(value);
      try {
        await store.set(key, { json, fetchedAtMs: clock.now().getTime() });
      } catch (error) {
        logger.warn({ err: error, key }, 'catalogue cache write failed');
      }
      return json;
    } finally {
      if (token !== null && token !== '') {
        await store.unlock(key, token).catch((error: unknown) => {
          logger.warn({ err: error, key }, 'catalogue refresh unlock failed; it expires by itself');
        });
      }
    }
  }

  return {
    async read<T>(key: string, fetch: () => Promise<T>): Promise<T> {
      const joined = inFlight.get(key);
      if (joined !== undefined) return decodeJson(await joined) as T;
      const cached = await safeGet(key);
      if (cached !== null && isFresh(cached)) return decodeJson(cached.json) as T;
      let flight = inFlight.get(key);
      if (flight === undefined) {
        flight = refresh(key, fetch).finally(() => inFlight.delete(key));
        inFlight.set(key, flight);
      }
      // Each caller decodes its own copy, so no caller can change another's (or the cache's) value.
      return decodeJson(await flight) as T;
    },
    close: () => store.close(),
  };
}

/** JSON with bigints (kobo) as tagged decimal strings: JSON has no bigint, and a float would lose kobo. */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? { $bigint: v.toString() } : v));
}

export function decodeJson(json: string): unknown {
  return JSON.parse(json, (_key, v: unknown) => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const tagged = (v as { $bigint?: unknown }).$bigint;
      if (typeof tagged === 'string' && Object.keys(v).length === 1) return BigInt(tagged);
    }
    return v;
  });
}

/** One process: single-flight is all the locking there is, so the lock is always granted. */
export function createMemoryCacheStore(): CacheStore {
  const entries = new Map<string, CacheEntry>();
  return {
    get: async (key) => entries.get(key) ?? null,
    set: async (key, entry) => void entries.set(key, entry),
    lock: async () => 'memory',
    unlock: async () => {},
    close: async () => entries.clear(),
  };
}

export type RedisCacheStoreOptions = {
  url: string;
  /** Prefix of every key, so that deployments (and test worlds) sharing a Redis do not share values. */
  prefix: string;
  /** How long a value is kept at all: long past fresh, so that a failing provider has a stale value. */
  retainMs: number;
  /** Longer than a provider call may take, so the lock outlives the refresh it guards. */
  lockTtlMs: number;
  logger: Logger;
};

// Deletes the lock only if it is still ours: after its TTL another process may hold it.
const unlockScript = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

export function createRedisCacheStore(options: RedisCacheStoreOptions): CacheStore {
  const redis = openRedis(options.url, options.logger, 'catalogue cache');
  const valueKey = (key: string) => `${options.prefix}value:${key}`;
  const lockKey = (key: string) => `${options.prefix}lock:${key}`;
  /** A command whose failure reaches the cache (a miss, a refresh without the lock). */
  const command = async <T>(send: () => Promise<T>): Promise<T> => {
    try {
      return await send();
    } catch (error) {
      dropOnTimeout(redis, error);
      throw error;
    }
  };
  return {
    async get(key) {
      const text = await command(() => redis.get(valueKey(key)));
      if (text === null) return null;
      const parsed = JSON.parse(text) as Partial<CacheEntry>;
      if (typeof parsed.json !== 'string' || typeof parsed.fetchedAtMs !== 'number') return null;
      return { json: parsed.json, fetchedAtMs: parsed.fetchedAtMs };
    },
    async set(key, entry) {
      await command(() => redis.set(valueKey(key), JSON.stringify(entry), 'PX', options.retainMs));
    },
    async lock(key) {
      const token = randomUUID();
      const acquired = await command(() => redis.set(lockKey(key), token, 'PX', options.lockTtlMs, 'NX'));
      return acquired === 'OK' ? token : null;
    },
    async unlock(key, token) {
      await command(() => redis.eval(unlockScript, 1, lockKey(key), token));
    },
    close: () => closeRedis(redis),
  };
}
