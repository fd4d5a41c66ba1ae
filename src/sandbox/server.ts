import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { createSandboxClock, type SandboxClock, systemClock } from '../clock.ts';
import { sendError, toErrorResponse } from '../http/errors.ts';
import { registerJsonBodyParser } from '../http/json-body.ts';
import { sandboxClockJobsPath } from '../http/sandbox-clock-route.ts';
import type { SandboxEnv } from './env.ts';
import { createSandbox } from './routes.ts';
import { createSandboxState, type SandboxState } from './state.ts';

// The sandbox as its own process (npm run sandbox): every simulator of src/sandbox/ on its own port,
// with one state and one clock for however many service processes use it (SANDBOX_URL). It reaches
// the service only over HTTP, at SERVICE_URL, as the parties it stands for would.

/**
 * The service's payment webhook route (src/http/payment-webhook-route.ts, API.md): a provider is
 * configured with the URL, it does not import it. test/sandbox/standalone.test.ts checks they agree.
 */
export const servicePaymentWebhookPath = '/api/public/payments/webhook/payment';
/** The service's USSD callback route (API.md 17.6), before its secret token: the same holds for it. */
export const serviceUssdCallbackPath = '/api/public/ussd';

export type StandaloneSandbox = {
  app: FastifyInstance;
  state: SandboxState;
  clock: SandboxClock;
  /** The sandbox's own base URL: PUBLIC_BASE_URL, or the address it listens on (env.port is not 0). */
  baseUrl: string;
};

/** `env.port` is the one the sandbox will listen on, chosen already when PORT is 0 (main.ts). */
export function buildStandaloneSandbox(env: SandboxEnv, logger: Logger): StandaloneSandbox {
  const clock = createSandboxClock(systemClock);
  const state = createSandboxState();
  const baseUrl = env.publicBaseUrl ?? `http://${env.host}:${env.port}`;
  const sandbox = createSandbox(state, {
    clock,
    paymentSigningSecret: env.paymentSigningSecret,
    publicBaseUrl: baseUrl,
    paymentWebhookUrl: `${env.serviceUrl}${servicePaymentWebhookPath}`,
    clockJobsUrl: `${env.serviceUrl}${sandboxClockJobsPath}`,
    vtuFundingAccounts: env.vtuFundingAccounts,
    pushApplicationServerKey: env.vapidPublicKey,
    clockJobsToken: env.clockJobsToken,
    ussdCallbackUrl:
      env.ussdCallbackToken === undefined
        ? undefined
        : `${env.serviceUrl}${serviceUssdCallbackPath}/${env.ussdCallbackToken}`,
    ussdServiceCode: env.ussdServiceCode,
  });
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // A soak run sends thousands of provider calls; the sandbox logs what goes wrong, not each call.
    logController: new LogController({ disableRequestLogging: true }),
    // Under the slowest answer a simulator gives on purpose (the data vendor's 30 s hold).
    requestTimeout: 60_000,
    // A request a "timeout" fault holds is not idle: closing the server releases it (faults.ts).
    forceCloseConnections: 'idle',
  });
  registerJsonBodyParser(app);
  app.setErrorHandler((error, request, reply) => sendError(reply, toErrorResponse(error, request)));
  app.get('/healthz', { schema: { hide: true } }, async () => ({ ok: true }));
  sandbox.registerRoutes(app);
  return { app, state, clock, baseUrl };
}
