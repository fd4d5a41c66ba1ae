import type { Check } from '../common.ts';
import { mapConcurrent } from '../common.ts';
import { call, type Session } from './client.ts';
import type { Soak } from './soak-context.ts';

// The rate limit is one limit across the API processes (Redis-backed): one caller that has made
// no request yet sends RATE_LIMIT_PER_MINUTE + EXTRA reads within a few seconds, alternately to
// each API process. One shared limit lets exactly the limit through and refuses the rest with 429;
// a limit per process would let up to the limit through on each.

const EXTRA = 40;
const CONCURRENCY = 16;

export async function rateLimitCheck(soak: Soak, caller: Session, limitPerMinute: number): Promise<Check> {
  const apis = soak.client.apis.length;
  const results = await mapConcurrent(
    Array.from({ length: limitPerMinute + EXTRA }, (_, i) => i),
    CONCURRENCY,
    async (i) => {
      const outcome = await call(
        soak.client,
        'getWallet',
        {},
        { session: caller, method: 'GET', api: i % apis },
      );
      return { api: i % apis, status: outcome.kind === 'answer' ? outcome.status : 0 };
    },
  );
  const ok = results.filter((r) => r.status === 200).length;
  const limited = results.filter((r) => r.status === 429).length;
  const perApi = Array.from(
    { length: apis },
    (_, api) => results.filter((r) => r.api === api && r.status === 200).length,
  );
  return {
    name: `the rate limit is one across ${apis} API processes (Redis)`,
    ok: ok === limitPerMinute && limited === EXTRA && (apis < 2 || perApi.every((n) => n > 0)),
    detail: `${limitPerMinute + EXTRA} requests of one caller spread over the processes: ${ok} answered 200 (${perApi.join(' + ')}), ${limited} answered 429; the limit is ${limitPerMinute}/min`,
  };
}
