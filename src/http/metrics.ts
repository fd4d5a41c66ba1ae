import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';
import { AppError } from '../errors.ts';
import type { ExchangeObserver } from '../providers/http-exchange.ts';
import type { PurchaseMetrics } from '../vtu/purchase-metrics.ts';
import { fromAppError, sendError } from './errors.ts';
import { type MoneyReads, moneyGaugesRegistered, registerMoneyGauges } from './money-metrics.ts';

// Prometheus metrics (docs/operations.md lists them and the alerts on them). Each context has its own
// registry, so that several services in one test process do not collide. Two kinds:
//  - counters and histograms of what this process did (HTTP requests, purchases it accepted or
//    settled, its calls to providers): per process, summed across processes by Prometheus;
//  - gauges of the money, read from the figures' snapshot that a job refreshes every 30 s
//    (money-metrics.ts): the same from any process.

/** The registry and the ports the domains and adapters report through (built by the composition root). */
export type ServiceMetrics = {
  registry: Registry;
  /** Given to the vtu module: purchases accepted and settled. */
  purchases: PurchaseMetrics;
  /** Given to the outbound pool (createOutboundAgent): every call to an outside party. */
  exchanges: ExchangeObserver;
  /** The HTTP edge's figures, told by each app over the context (registerMetrics). */
  http: { requests: Counter<'route' | 'method' | 'status'>; duration: Histogram<'route' | 'method'> };
};

export function createServiceMetrics(): ServiceMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const purchases = new Counter({
    name: 'billrail_vtu_purchases_total',
    help: 'Purchases by service, provider and outcome: accepted (debited), then success or failed (refunded)',
    labelNames: ['service', 'provider', 'outcome'] as const,
    registers: [registry],
  });
  const providerDuration = new Histogram({
    name: 'billrail_provider_request_duration_seconds',
    help: 'Calls to outside parties (VTU providers, payments, KYC, SMS) by provider and operation, answered or not',
    labelNames: ['provider', 'operation'] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30],
    registers: [registry],
  });
  const providerErrors = new Counter({
    name: 'billrail_provider_request_errors_total',
    help: 'Calls to outside parties without a usable answer (timeout, network error, 5xx, 429, not JSON)',
    labelNames: ['provider', 'operation'] as const,
    registers: [registry],
  });
  const requests = new Counter({
    name: 'billrail_http_requests_total',
    help: 'HTTP requests by route and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'billrail_http_request_duration_seconds',
    help: 'HTTP request duration by route',
    labelNames: ['route', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    registry,
    http: { requests, duration },
    purchases: {
      purchaseCounted: (purchase, outcome) =>
        purchases.inc({ service: purchase.service, provider: purchase.provider, outcome }),
    },
    exchanges: ({ party, operation, result, seconds }) => {
      const labels = { provider: party, operation };
      providerDuration.observe(labels, seconds);
      // Present from the first call on, so that a rate of errors over calls is 0, not absent.
      providerErrors.inc(labels, result === 'error' ? 1 : 0);
    },
  };
}

/** Counts and times every request `app` answers, into the context's registry. */
export function countRequests(app: FastifyInstance, metrics: ServiceMetrics): void {
  const { requests, duration } = metrics.http;
  app.addHook('onResponse', async (request, reply) => {
    // Unknown paths share one label so that scanners cannot grow the label set without bound.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
}

/** Whether the request shows `Authorization: Bearer <token>`, compared in constant time. */
function showsToken(authorization: string | undefined, token: string): boolean {
  if (authorization === undefined) return false;
  // Both sides hashed first: equal lengths for timingSafeEqual, and no length told by the timing.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(authorization), digest(`Bearer ${token}`));
}

/**
 * GET /metrics serving the registry, with the money gauges over `reads` (API.md section 17.1). With
 * `token` (METRICS_TOKEN) a scrape without `Authorization: Bearer <token>` is 401. Exempt from the
 * rate limit: a scrape reads one row (the figures' snapshot), never a provider.
 */
export function serveMetrics(
  app: FastifyInstance,
  metrics: ServiceMetrics,
  reads: MoneyReads,
  token: string | undefined,
): void {
  const { registry } = metrics;
  // Once per context: a second app over the same context (a test's) serves the same gauges.
  if (!moneyGaugesRegistered(registry)) {
    registerMoneyGauges(registry, reads, (error, figure) =>
      app.log.warn({ err: error, figure }, 'a /metrics figure could not be read'),
    );
  }
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false } }, async (request, reply) => {
    if (token !== undefined && !showsToken(request.headers.authorization, token)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      return sendError(reply, fromAppError(new AppError('UNAUTHENTICATED', 'a metrics token is required')));
    }
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
