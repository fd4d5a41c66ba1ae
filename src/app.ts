import { existsSync } from 'node:fs';
import path from 'node:path';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, validatorCompiler } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import type { Context } from './context.ts';
import { AppError } from './errors.ts';
import { registerAirtimeCashCallbackRoute } from './http/airtime-cash-callback-route.ts';
import { answerClientError } from './http/client-errors.ts';
import { registerCors } from './http/cors.ts';
import { registerDataExportRoute } from './http/data-export-route.ts';
import { registerDocumentRoute } from './http/document-route.ts';
import { sendError, toErrorResponse } from './http/errors.ts';
import { createIdempotencyStore } from './http/idempotency-store.ts';
import { registerJsonBodyParser } from './http/json-body.ts';
import { countRequests, serveMetrics } from './http/metrics.ts';
import type { MoneyReads } from './http/money-metrics.ts';
import { declareResponseHeaders, documentTags } from './http/openapi-document.ts';
import { shareErrorSchemas } from './http/operation-errors.ts';
import { registerPaymentWebhookRoute } from './http/payment-webhook-route.ts';
import { phoneRateLimit } from './http/phone-rate-limit.ts';
import { redisStoreWithLocalFallback } from './http/rate-limit-store.ts';
import { BODY_LIMIT_BYTES, registerOperations } from './http/router.ts';
import { registerSandboxClockRoute } from './http/sandbox-clock-route.ts';
import { registerUnreadBodyDrain } from './http/unread-body.ts';
import { registerUssdCallbackRoute } from './http/ussd-callback-route.ts';
import { registerWebApp, type WebApp } from './http/web-app.ts';
import { africasTalking } from './providers/ussd/africas-talking.ts';
import { closeRedis, openRedis } from './redis.ts';
import { webDistDir } from './web-build.ts';

/** Builds the HTTP app over a context. It never listens: main.ts and the tests decide that. */
export async function buildApp(ctx: Context): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    bodyLimit: BODY_LIMIT_BYTES,
    // X-Forwarded-For is written by the client except for the hops our own proxies add, so only
    // that many hops are trusted (TRUST_PROXY_HOPS, 0 by default): the rate-limit key is not forgeable.
    trustProxy: (_address: string, hop: number) => hop < ctx.config.http.trustProxyHops,
    requestTimeout: 30_000,
    genReqId: () => crypto.randomUUID(),
    // Errors Fastify raises before routing (a malformed URL such as /_serverFn/%) get the envelope too.
    frameworkErrors: (error, request, reply) => sendError(reply, toErrorResponse(error, request)),
    // And those Node's HTTP parser refuses before Fastify sees a request (431, 408, 400).
    clientErrorHandler: answerClientError,
  });
  registerJsonBodyParser(app);
  registerUnreadBodyDrain(app);
  app.decorateRequest('caller', null);
  app.decorateRequest('requestHash', '');
  app.setValidatorCompiler(validatorCompiler);
  // Handlers send pre-serialised JSON; schemas are there for validation and the OpenAPI document.
  app.setSerializerCompiler(() => (data) => (typeof data === 'string' ? data : JSON.stringify(data)));
  app.setErrorHandler((error, request, reply) => sendError(reply, toErrorResponse(error, request)));
  // The web client, when built (src/web-build.ts), answers a browser loading one of its pages.
  let webApp: WebApp | undefined;
  app.setNotFoundHandler((request, reply) =>
    webApp?.isNavigation(request)
      ? webApp.sendIndex(reply)
      : sendError(
          reply,
          toErrorResponse(
            new AppError('NOT_FOUND', `no such operation: ${request.method} ${request.url.split('?')[0]}`),
            request,
          ),
        ),
  );

  await registerCors(app, ctx.config.corsOrigins);
  await registerOpenApiDocument(app, ctx);
  await registerRateLimit(app, ctx);
  countRequests(app, ctx.metrics);
  // On PORT only when METRICS_PORT is unset outside production (main.ts serves it on its own port).
  if (ctx.config.http.metricsOnApiPort)
    serveMetrics(app, ctx.metrics, moneyReadsOf(ctx), ctx.config.http.metricsToken);
  registerProbes(app, ctx);
  app.get('/openapi.json', { schema: { hide: true }, config: { rateLimit: false } }, async () =>
    app.swagger(),
  );

  registerRoutes(app, ctx);
  // Without a build (web/dist is made on the first start by main.ts), the service is the API alone.
  if (existsSync(path.join(webDistDir, 'index.html'))) {
    webApp = await registerWebApp(app, { distDir: webDistDir });
  }
  return app;
}

/** The OpenAPI document at /openapi.json: the operations' schemas, served at the public base URL. */
async function registerOpenApiDocument(app: FastifyInstance, ctx: Context): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'billrail',
        version: '0.1.0',
        description: 'Wallet-paid VTU, funding, savings and notifications',
        // The service is not published under an open licence (package.json is private), and no
        // licence text is published to link to (redocly.yaml says why its info-license-strict is off).
        license: { name: 'Proprietary' },
        contact: { name: 'billrail operations' },
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    },
    transform: jsonSchemaTransform,
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject;
      shareErrorSchemas(document.openapiObject);
      declareResponseHeaders(document.openapiObject, ctx.operations);
      return {
        ...document.openapiObject,
        servers: [{ url: ctx.baseUrl }],
        tags: documentTags(ctx.operations),
      };
    },
  });
}

/**
 * The rate limits: per user once signed in, per address before, counted in Redis across the API
 * processes when REDIS_URL is set.
 */
async function registerRateLimit(app: FastifyInstance, ctx: Context): Promise<void> {
  const redis =
    ctx.config.redisUrl === undefined ? undefined : openRedis(ctx.config.redisUrl, ctx.logger, 'rate limit');
  if (redis !== undefined) app.addHook('onClose', () => closeRedis(redis));
  await app.register(rateLimit, {
    global: true,
    // Anonymous callers are counted per address, which a carrier (CGNAT) shares among many people
    // signing in: a limit of its own sized for that, the sign-in operations limited per phone too.
    max: (request) =>
      request.caller !== null ? ctx.config.rateLimitPerMinute : ctx.config.rateLimitAnonymousPerMinute,
    timeWindow: 60_000,
    // After onRequest (auth), so that a signed-in caller is limited as one user across addresses.
    hook: 'preValidation',
    keyGenerator: (request) =>
      request.caller !== null ? `user:${request.caller.userId}` : `ip:${request.ip}`,
    // Counted in Redis across the API processes; per process while Redis is out of reach.
    ...(redis !== undefined
      ? { store: redisStoreWithLocalFallback(redis, ctx.rateLimitNamespace, ctx.logger) }
      : {}),
    errorResponseBuilder: (_request, context) =>
      new AppError('RATE_LIMITED', 'too many requests; slow down', {
        retryAfterSeconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
}

/** The operations (behind the Idempotency-Key store), and the routes outside parties and the sandbox call. */
function registerRoutes(app: FastifyInstance, ctx: Context): void {
  const idempotency = createIdempotencyStore(ctx.db, ctx.config.secrets.pepper, ctx.database.batching, {
    onReleaseError: (error) => ctx.logger.error({ err: error }, 'an Idempotency-Key could not be released'),
  });
  app.addHook('onClose', async () => idempotency.close());
  registerOperations(app, ctx.operations, {
    idempotency,
    authenticate: ctx.modules.auth.api.authenticate,
    clock: ctx.clock,
    strictErrorCodes: ctx.config.env === 'test',
    limitPerPhone: phoneRateLimit(app, ctx.config.rateLimitPhonePerMinute),
    audit: ctx.modules.audit.api,
    secondFactor: {
      required: ctx.config.adminSecondFactor.mode === 'totp',
      enrolled: ctx.modules.auth.api.totpEnrolled,
    },
  });
  registerDocumentRoute(app, {
    db: ctx.db,
    clock: ctx.clock,
    store: ctx.kyc.documents,
    urlKey: ctx.kyc.urlKey,
  });
  registerDataExportRoute(app, ctx.modules.dataExport.api);
  registerPaymentWebhookRoute(app, { paymentEvents: ctx.modules.funding.api.paymentEvents });
  registerAirtimeCashCallbackRoute(app, ctx.modules.vtu.api);
  registerUssdCallbackRoute(app, {
    callbackToken: ctx.config.ussd.callbackToken,
    allowedIps: ctx.config.ussd.allowedIps,
    stepsPerPhonePerMinute: ctx.config.rateLimitPerMinute,
    gateway: africasTalking,
    answer: ctx.modules.ussd.api.answer,
  });
  ctx.sandbox?.registerRoutes(app);
  // The service's side of POST /__sandbox/clock, which reaches it over HTTP with the sandbox's token.
  if (ctx.sandbox !== undefined) {
    registerSandboxClockRoute(app, { jobs: ctx.jobs, token: ctx.sandbox.clockJobsToken });
  } else if (ctx.sandboxLink !== undefined) {
    // A standalone sandbox's call carries its clock's new time, followed before the jobs run.
    const link = ctx.sandboxLink;
    registerSandboxClockRoute(app, {
      jobs: ctx.jobs,
      token: link.clockJobsToken,
      followSandboxNow: (now) => link.clock.follow(now),
    });
  }
}

/** What the money gauges read: the figures' snapshot, through the module that owns it. */
export function moneyReadsOf(ctx: Context): MoneyReads {
  return { clock: ctx.clock, latestFigures: ctx.modules.figures.api.latest };
}

/**
 * The listener of METRICS_PORT, in an API process or a worker: its /metrics (this process's requests,
 * purchases and provider calls, and the money gauges) and /healthz, /readyz; no API, no sandbox.
 */
export async function buildMetricsApp(ctx: Context): Promise<FastifyInstance> {
  const app = Fastify({ loggerInstance: ctx.logger as FastifyBaseLogger });
  countRequests(app, ctx.metrics);
  serveMetrics(app, ctx.metrics, moneyReadsOf(ctx), ctx.config.http.metricsToken);
  registerProbes(app, ctx);
  return app;
}

/**
 * /healthz (the process answers) and /readyz (it reaches its database), on the API's port and on a
 * metrics listener alike: out of the OpenAPI document and of the rate limit, which a load balancer's
 * checks must never meet.
 */
function registerProbes(app: FastifyInstance, ctx: Context): void {
  const probe = { schema: { hide: true }, config: { rateLimit: false } };
  app.get('/healthz', probe, async () => ({ ok: true }));
  app.get('/readyz', probe, async (_request, reply) => {
    try {
      await sql`select 1`.execute(ctx.db);
      return { ok: true };
    } catch (error) {
      ctx.logger.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ ok: false });
    }
  });
}
