import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

// Prometheus metrics. Each app has its own registry so that several apps in one test process do
// not collide.

export function registerMetrics(app: FastifyInstance): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
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
  app.addHook('onResponse', async (request, reply) => {
    // Unknown paths share one label so that scanners cannot grow the label set without bound.
    const route = request.routeOptions.url ?? 'unmatched';
    requests.inc({ route, method: request.method, status: String(reply.statusCode) });
    duration.observe({ route, method: request.method }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', { schema: { hide: true }, config: { rateLimit: false } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
  return registry;
}
