import type { FastifyInstance } from 'fastify';
import { buildApp, buildMetricsApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { type Context, createContext } from './context.ts';
import { buildWebInChildProcess } from './web-build.ts';

// The process: config → context (database, migrations, job queue) → HTTP → workers, and a graceful
// stop on SIGTERM/SIGINT: stop accepting, finish requests and jobs in hand, close, exit 0.
// `--worker-only` runs the job workers without HTTP (npm run worker). `--build-web` (npm start) first
// builds the web client when it is stale, in a child process: never in this one, which serves money.

async function main(): Promise<void> {
  const workerOnly = process.argv.includes('--worker-only');
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`billrail: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  if (workerOnly) config = { ...config, runWorker: true };

  // The handlers are in place before anything starts: a SIGTERM that arrives while the process
  // starts (or just after /healthz first answers) must stop it gracefully, not kill it outright.
  // One that arrives before start-up has finished waits for it, then stops.
  let ctx: Context | undefined;
  let app: FastifyInstance | undefined;
  let started = false;
  let stopRequested: string | undefined;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    ctx?.logger.info({ signal }, 'stopping');
    try {
      await app?.close();
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
  if (config.sandbox && config.sandboxExposedBy.length > 0) {
    // Said explicitly (SANDBOX=1), so allowed; but whoever runs it must know what it gives away.
    ctx.logger.warn(
      { exposedBy: config.sandboxExposedBy },
      `the sandbox is on and reachable beyond this machine (${config.sandboxExposedBy.join(', ')}): anyone who reaches the service can read every sign-in code at /__sandbox/sms (admins' included), sign payment webhooks with the public sandbox signing secret, and move the clock. Use it for demos and tests only`,
    );
  }
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
    const address = await app.listen({ port: config.http.port, host: config.http.host });
    if (config.http.publicBaseUrl === undefined) ctx.baseUrl.current = address;
  } else if (config.http.metricsPort !== undefined) {
    // A worker's own figures (its settlements, its provider calls) are served by it alone.
    app = await buildMetricsApp(ctx);
    await app.listen({ port: config.http.metricsPort, host: config.http.host });
  }
  if (config.runWorker) await ctx.jobs.startWorkers();
  ctx.logger.info(
    {
      baseUrl: ctx.baseUrl.current,
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
