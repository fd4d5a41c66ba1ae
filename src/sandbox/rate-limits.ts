import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { sandboxSocialPath } from './vtu/social.ts';

// A simulated VTU provider that refuses purchases above R a second, as a real one's rate limit does,
// so that a service sending faster than its VTU_PROVIDER_RATE_<NAME> shows it (decision 0052). Hidden
// like every sandbox control:
//
//   POST /__sandbox/providers/<data|bills|social>/rate-limit {"requestsPerSecondMax": n | null}
//     → 200 {"success": true, "data": {"requestsPerSecondMax": n | null, "purchases": [...], "refused": n}}
//   GET  the same path → the same answer.
//
// `purchases`: when each purchase request the provider took since the limit was last set came, by
// the sandbox clock (ISO 8601, oldest first, the latest 10,000), so that a tester can count them per
// second; `refused`: how many it refused. Setting the limit (null: none) starts both afresh. Only
// purchase requests count (the data vendor's POST /api/data/ and /api/topup/, VTpass's POST /api/pay,
// the panel's action=add): the service's rate counts its sends, and a provider's limit on its buying
// endpoint is the one that refuses money. A second is a whole second of the sandbox clock; the
// purchase that would be the (R+1)th of its second is answered as the provider answers a throttled
// request, with HTTP 429:
// - the data vendor (Django REST framework's throttling): {"detail": "Request was throttled. ..."};
// - VTpass: {"code": "429", "response_description": "TOO MANY REQUESTS"};
// - the SMM panel: {"error": "Too many requests"}.

export const rateLimitedProviders = ['data', 'bills', 'social'] as const;
export type RateLimitedProvider = (typeof rateLimitedProviders)[number];

type ProviderLimit = {
  requestsPerSecondMax: number | null;
  /** The sandbox-clock times (ms) of the purchases taken since the limit was set, oldest first. */
  taken: number[];
  refused: number;
};

export type SandboxRateLimitsState = Map<RateLimitedProvider, ProviderLimit>;

export function createSandboxRateLimitsState(): SandboxRateLimitsState {
  return new Map(rateLimitedProviders.map((p) => [p, { requestsPerSecondMax: null, taken: [], refused: 0 }]));
}

/** Purchase times kept per provider; the oldest go first. */
const takenKeptMax = 10_000;

const routeOptions = { schema: { hide: true }, config: { rateLimit: false } } as const;

const limitBody = z
  .object({ requestsPerSecondMax: z.number().int().min(1).max(100_000).nullable() })
  .strict();

/** Which provider a request buys from, if it is a purchase (the body is parsed: preHandler). */
function purchaseOf(request: FastifyRequest): RateLimitedProvider | undefined {
  if (request.method !== 'POST') return undefined;
  const path = request.url.split('?')[0];
  if (path === '/__sandbox/vtu/data/api/data/' || path === '/__sandbox/vtu/data/api/topup/') return 'data';
  if (path === '/__sandbox/vtu/bills/api/pay') return 'bills';
  if (path === sandboxSocialPath && (request.body as { action?: unknown } | undefined)?.action === 'add')
    return 'social';
  return undefined;
}

const throttled: Record<RateLimitedProvider, object> = {
  data: { detail: 'Request was throttled. Expected available in 1 second.' },
  bills: { code: '429', response_description: 'TOO MANY REQUESTS' },
  social: { error: 'Too many requests' },
};

export function registerSandboxRateLimits(
  app: FastifyInstance,
  state: SandboxRateLimitsState,
  clock: Clock,
): void {
  for (const provider of rateLimitedProviders) {
    const path = `/__sandbox/providers/${provider}/rate-limit`;
    app.get(path, routeOptions, async () => limitAnswer(state.get(provider)!));
    app.post(path, routeOptions, async (request, reply) => setLimit(state.get(provider)!, request, reply));
  }
  app.addHook('preHandler', async (request, reply) => meetLimit(state, clock, request, reply));
}

function setLimit(limit: ProviderLimit, request: FastifyRequest, reply: FastifyReply) {
  const body = limitBody.safeParse(request.body);
  if (!body.success) {
    return reply.code(400).send({
      success: false,
      error: { code: 'VALIDATION_ERROR', message: 'requestsPerSecondMax: a whole number ≥ 1, or null' },
    });
  }
  limit.requestsPerSecondMax = body.data.requestsPerSecondMax;
  limit.taken = [];
  limit.refused = 0;
  return limitAnswer(limit);
}

function limitAnswer(limit: ProviderLimit) {
  return {
    success: true,
    data: {
      requestsPerSecondMax: limit.requestsPerSecondMax,
      purchases: limit.taken.map((ms) => new Date(ms).toISOString()),
      refused: limit.refused,
    },
  };
}

async function meetLimit(
  state: SandboxRateLimitsState,
  clock: Clock,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  const provider = purchaseOf(request);
  if (provider === undefined) return;
  const limit = state.get(provider)!;
  if (limit.requestsPerSecondMax === null) return;
  const now = clock.now().getTime();
  const second = Math.floor(now / 1000) * 1000;
  let inSecond = 0;
  // Newest first: the purchases of this second are at the end.
  for (let i = limit.taken.length - 1; i >= 0 && limit.taken[i]! >= second; i -= 1) inSecond += 1;
  if (inSecond >= limit.requestsPerSecondMax) {
    limit.refused += 1;
    return reply.code(429).header('retry-after', '1').send(throttled[provider]);
  }
  limit.taken.push(now);
  if (limit.taken.length > takenKeptMax) limit.taken.splice(0, limit.taken.length - takenKeptMax);
}
