import type { FastifyInstance } from 'fastify';
import { buildApp, buildMetricsApp } from './app.ts';
import { type Config, ConfigError, loadConfig } from './config.ts';
import { type Context, createContext } from './context.ts';
import { choosePort } from './listen-port.ts';
import { buildWebInChildProcess } from './web-build.ts';

// The process: config → context (database, migrations, job queue) → HTTP → workers, and a graceful
// stop on SIGTERM/SIGINT: stop accepting, finish requests and jobs in hand, close, exit 0.
// `--worker-only` runs the job workers without HTTP (npm run worker). `--build-web` (npm start) first
// builds the web client when it is stale, in a child process: never in this one, which serves money.

/** The configuration, or exit 1 with its one-line message. */
function readConfig(workerOnly: boolean): Config {
  try {
    const config = loadConfig(process.env);
    return workerOnly ? { ...config, runWorker: true } : config;
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`billrail: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Said explicitly (SANDBOX=1), so allowed; but whoever runs it must know what it gives away. */
function warnIfSandboxExposed(ctx: Context): void {
  const { providers } = ctx.config;
  if (providers.mode !== 'sandbox' || providers.exposedBy.length === 0) return;
  ctx.logger.warn(
    { exposedBy: providers.exposedBy },
    `the sandbox is on and reachable beyond this machine (${providers.exposedBy.join(', ')}): anyone who reaches the service can read every sign-in code at /__sandbox/sms (admins' included), sign payment webhooks with the public sandbox signing secret, and move the clock. Use it for demos and tests only`,
  );
}

async function main(): Promise<void> {
  const workerOnly = process.argv.includes('--worker-only');
  // With PORT=0 the API's port is chosen before anything is built: the modules are given the public
  // base URL the service answers at.
  const configured = readConfig(workerOnly);
  const port = workerOnly ? undefined : await choosePort(configured);
  const config = port?.config ?? configured;

  // The handlers are in place before anything starts: a SIGTERM that arrives while the process
  // starts (or just after /healthz first answers) must stop it gracefully, not kill it outright.
  // One that arrives before start-up has finished waits for it, then stops.
  let ctx: Context | undefined;
  let app: FastifyInstance | undefined;
  let metricsApp: FastifyInstance | undefined;
  let started = false;
  let stopRequested: string | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx?.logger.info({ signal }, 'stopping');
    try {
      await app?.close();
      await metricsApp?.close();
      await ctx?.close();
      process.exit(0);
    } catch (error) {
      ctx?.logger.error({ err: error }, 'unclean stop');
      process.exit(1);
    }
  };
  const onSignal = (signal: string) => {
    if (started) void stop(signal);
    else stopRequested ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));

  ctx = await createContext(config);
  warnIfSandboxExposed(ctx);
  if (!workerOnly) {
    // The web client is built before the app is (which serves it only if built), by a child process
    // (npm run build) that builds only when web/dist is missing or stale. A failed build costs the
    // client, not the API. Without --build-web (the image, a unit, a test) web/dist is served as is.
    if (process.argv.includes('--build-web')) {
      const web = await buildWebInChildProcess();
      if (!web.ok)
        ctx.logger.error(
          { reason: web.reason },
          'the web client failed to build: it is not served, or an older build is',
        );
    }
    app = await buildApp(ctx);
    await app.ready();
    await port?.release();
    await app.listen({ port: config.http.port, host: config.http.host });
  }
  if (config.http.metricsPort !== undefined) {
    // Every process on its own port, a worker's figures (its settlements, its provider calls) served
    // by it alone, and none of it on the public API port (API.md section 17.1).
    metricsApp = await buildMetricsApp(ctx);
    await metricsApp.listen({ port: config.http.metricsPort, host: config.http.host });
  }
  if (config.runWorker) await ctx.jobs.startWorkers();
  ctx.logger.info(
    {
      baseUrl: ctx.baseUrl,
      database: ctx.database.kind,
      sandbox: config.sandbox,
      worker: config.runWorker,
      api: !workerOnly,
    },
    'billrail started',
  );
  started = true;
  if (stopRequested !== undefined) await stop(stopRequested);
}

main().catch((error: unknown) => {
  process.stderr.write(
    `billrail: failed to start: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(1);
});
