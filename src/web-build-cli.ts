import pino from 'pino';
import { ensureWebBuilt, webBuildIsFresh } from './web-build.ts';

// `npm run build`: builds the web client into web/dist when it is missing or older than its sources
// (src/web-build.ts), and exits non-zero when the build fails. `npm start` runs it as a child process
// before it serves (node src/main.ts --build-web), so that the serving process never builds; the
// Docker image runs it at image build time. It logs JSON lines like the service, whose stdout it
// shares when started by it.
const logger = pino({ name: 'web-build' });
const startedAt = performance.now();
try {
  const { built, dir } = await ensureWebBuilt({ logger });
  if (built) logger.info({ ms: Math.round(performance.now() - startedAt), dir }, 'web client built');
  else if (await webBuildIsFresh()) logger.info({ dir }, 'web client up to date');
} catch (error) {
  logger.error({ err: error }, 'the web client failed to build');
  process.exitCode = 1;
}
