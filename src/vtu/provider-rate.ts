import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../clock.ts';
import type { DB } from '../db/schema.ts';
import { closeRedis, dropOnTimeout, openRedis } from '../redis.ts';

// A provider's send rate shared by every process (issue 43 item 3, decision 0052): at most
// VTU_PROVIDER_RATE_<NAME> purchases a second are sent to it, whichever process sends them. A claim
// batch (dispatch.ts) takes what it sends of each provider's second at once, one round trip for the
// batch; the purchases over it are not claimed and wait their turn, in their process's sends (their
// place in VTU_SENDS_MAX kept, so acceptance slows down behind them), until the next second starts.
//
// The bucket is refilled whole at the start of each second of the service clock, not a token at a
// time: a bucket refilled continuously sends up to twice the rate within one second after an idle
// spell (full at its start, refilled during it), which a provider that counts per second refuses.
// The second is the service clock's, so a sandbox clock moves it as it moves everything else.
//
// The bucket is in Redis when REDIS_URL is set (one Lua script, atomic), else in PostgreSQL (one
// UPDATE of the provider's row in vtu_provider_rate). While Redis is out of reach the row is the
// bucket: slower, never unlimited.

/** One second of a provider's sends: taken from by every process, refilled whole as the second changes. */
export type RateBucket = {
  /** Takes up to `wanted` sends of the provider's second that starts at `second`; answers how many it got. */
  take(provider: string, ratePerSecond: number, wanted: number, second: Date): Promise<number>;
};

/** Each provider's sends per second across every process, and the purchases waiting their turn. */
export type ProviderRates = {
  /**
   * Of `wanted` sends to the provider now, how many may go; the others wait until `nextTurnAt` (the
   * next second). Without a rate for the provider every send goes.
   */
  take(provider: string, wanted: number): Promise<{ granted: number; nextTurnAt: Date }>;
  close(): Promise<void>;
};

export type ProviderRatesDeps = {
  db: Kysely<DB>;
  clock: Clock;
  logger: Logger;
  /** Sends per second by provider name (config.vtu.providerRates); a provider left out has no limit. */
  rates: Readonly<Record<string, number | undefined>>;
  /** Redis (REDIS_URL) and the prefix of its keys; undefined: the database's bucket alone. */
  redis?: { url: string; prefix: string };
};

export function createProviderRates(deps: ProviderRatesDeps): ProviderRates {
  const database = databaseBucket(deps.db);
  const limited = Object.values(deps.rates).some((rate) => rate !== undefined);
  // Opened only when a rate is set: without one nothing is counted.
  const redis =
    limited && deps.redis !== undefined ? openRedis(deps.redis.url, deps.logger, 'provider rate') : undefined;
  let warnedAt = Number.NEGATIVE_INFINITY;
  const bucket =
    redis === undefined
      ? database
      : fallingBack(redisBucket(redis, deps.redis!.prefix), database, (error) => {
          dropOnTimeout(redis, error);
          if (performance.now() - warnedAt < FALLBACK_WARNING_MS) return;
          warnedAt = performance.now();
          deps.logger.warn(
            { err: error },
            'provider send rates are counted in the database: Redis did not answer',
          );
        });
  return {
    async take(provider, wanted) {
      const rate = deps.rates[provider];
      const second = Math.floor(deps.clock.now().getTime() / 1000) * 1000;
      const nextTurnAt = new Date(second + 1000);
      if (rate === undefined || wanted === 0) return { granted: wanted, nextTurnAt };
      return { granted: await bucket.take(provider, rate, wanted, new Date(second)), nextTurnAt };
    },
    close: async () => {
      if (redis !== undefined) await closeRedis(redis);
    },
  };
}

/** Resolves when the turn at `at` has come by the service clock: a timer, never a spin. */
export async function waitForTurn(clock: Clock, at: Date): Promise<void> {
  await delay(Math.max(1, at.getTime() - clock.now().getTime()));
}

/** The purchases of a claim batch that may be sent now, and when each of the others may try again. */
export async function takeTurns<P extends { id: string; provider: string }>(
  rates: ProviderRates | undefined,
  purchases: P[],
): Promise<{ sending: P[]; waiting: Map<string, Date> }> {
  const waiting = new Map<string, Date>();
  if (rates === undefined) return { sending: purchases, waiting };
  for (const [provider, ofProvider] of Map.groupBy(purchases, (p) => p.provider)) {
    const { granted, nextTurnAt } = await rates.take(provider, ofProvider.length);
    // The first in the batch's order go: the later ones wait for the next second.
    for (const p of ofProvider.slice(granted)) waiting.set(p.id, nextTurnAt);
  }
  return { sending: purchases.filter((p) => !waiting.has(p.id)), waiting };
}

/**
 * The bucket as a row per provider. The row is locked by the CTE, so the available tokens are read
 * from the version the UPDATE writes over (READ COMMITTED re-reads a row it waited for): two processes
 * taking at once take one after the other. The first take of a provider inserts its row.
 */
export function databaseBucket(db: Kysely<DB>): RateBucket {
  const takeFromRow = async (provider: string, rate: number, wanted: number, second: Date) => {
    const { rows } = await sql<{ granted: number }>`
      with bucket as (
        select case when refilled_at < ${second}::timestamptz then ${rate}::integer
          else least(tokens, ${rate}::integer) end as available
        from vtu_provider_rate where provider = ${provider} for update
      )
      update vtu_provider_rate set
        tokens = bucket.available - least(bucket.available, ${wanted}::integer),
        refilled_at = greatest(refilled_at, ${second}::timestamptz)
      from bucket where provider = ${provider}
      returning least(bucket.available, ${wanted}::integer) as granted`.execute(db);
    return rows[0]?.granted;
  };
  return {
    async take(provider, rate, wanted, second) {
      const granted = await takeFromRow(provider, rate, wanted, second);
      if (granted !== undefined) return granted;
      // Refilled at the start of time: the take that follows finds it full.
      await sql`
        insert into vtu_provider_rate (provider, tokens, refilled_at)
        values (${provider}, 0, '-infinity') on conflict (provider) do nothing`.execute(db);
      return (await takeFromRow(provider, rate, wanted, second)) ?? 0;
    },
  };
}

// The same bucket as a Redis hash, read and written by one script (Redis runs it alone). It expires
// once idle for a minute: by then it would be refilled whole anyway.
const takeScript = `
local second = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local wanted = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'refilled_at')
local tokens = tonumber(state[1])
local refilled = tonumber(state[2])
if refilled == nil or refilled < second then
  tokens = rate
  refilled = second
elseif tokens > rate then
  tokens = rate
end
local granted = math.min(wanted, tokens)
redis.call('HSET', KEYS[1], 'tokens', tokens - granted, 'refilled_at', refilled)
redis.call('PEXPIRE', KEYS[1], 60000)
return granted`;

export function redisBucket(redis: Redis, prefix: string): RateBucket {
  return {
    async take(provider, rate, wanted, second) {
      const granted = await redis.eval(takeScript, 1, `${prefix}${provider}`, second.getTime(), rate, wanted);
      return Number(granted);
    },
  };
}

/** Takes from `shared`; when it cannot answer, from `fallback` (the database's bucket). */
export function fallingBack(
  shared: RateBucket,
  fallback: RateBucket,
  onFallback: (error: unknown) => void,
): RateBucket {
  return {
    async take(provider, rate, wanted, second) {
      try {
        return await shared.take(provider, rate, wanted, second);
      } catch (error) {
        onFallback(error);
        return fallback.take(provider, rate, wanted, second);
      }
    },
  };
}

/** How often a process says again that its provider rates are counted in the database. */
const FALLBACK_WARNING_MS = 60_000;
