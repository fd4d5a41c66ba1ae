import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { holdPort } from '../listen-port.ts';
import { loadSandboxEnv, type SandboxEnv, SandboxEnvError } from './env.ts';
import { buildStandaloneSandbox } from './server.ts';

// npm run sandbox: the standalone sandbox process (src/sandbox/server.ts). Env: PORT (4010), HOST
// (127.0.0.1), SERVICE_URL, PAYMENT_SIGNING_SECRET, SANDBOX_CLOCK_TOKEN (required), VAPID_PUBLIC_KEY,
// PUBLIC_BASE_URL, <DATA|BILLS|SOCIAL>_FUNDING_ACCOUNT, LOG_LEVEL, USSD_CALLBACK_TOKEN and
// USSD_SERVICE_CODE (the service's, for the feature phone) (src/sandbox/env.ts). A bad value
// exits 1 with one line naming it; SIGTERM/SIGINT stop it gracefully (held requests released).

async function main(): Promise<void> {
  let env: SandboxEnv;
  try {
    env = loadSandboxEnv(process.env);
  } catch (error) {
    if (error instanceof SandboxEnvError) {
      process.stderr.write(`billrail-sandbox: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const logger = pino({ level: env.logLevel, base: { process: 'sandbox' } });
  let app: FastifyInstance | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping');
    try {
      await app?.close();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'unclean stop');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // With PORT=0 the port is chosen before the sandbox is built, so its base URL is known to it.
  const held = await holdPort(env);
  const sandbox = buildStandaloneSandbox({ ...env, port: held.port }, logger);
  app = sandbox.app;
  await held.release();
  await app.listen({ port: held.port, host: env.host });
  logger.info(
    { baseUrl: sandbox.baseUrl, serviceUrl: env.serviceUrl, vapid: env.vapidPublicKey !== undefined },
    'billrail sandbox started',
  );
}

main().catch((error: unknown) => {
  process.stderr.write(
    `billrail-sandbox: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
