import { spawn } from 'node:child_process';
import { globSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import pg from 'pg';
import { ensureWebBuilt } from '../src/web-build.ts';

// `npm test`: every test file, several at once, then the few that must run alone.
//
// Files share no state: each makes its own database (an in-memory PGlite, or a database of its own
// on PostgreSQL, both from one migrated template: test/helpers/database.ts), its own temporary
// directories, its own ports (0) and its own Redis prefix. So they run side by side, TEST_CONCURRENCY
// at a time (default: a core and a half each, rounded up: the process tests and the browser journeys
// spend much of their time waiting on a child process or on Chromium). Of those, the browser journeys
// (test/web) run one at a time beside the others: Chromium is several processes of its own, and two
// or three of them at once on two cores stretched a page's answer past the journeys' 30 s waits. The
// service-process test (a minute and a half of processes started and stopped) runs in that lane too,
// which evens the two lanes out: measured in .ci/run, 480 s of journeys beside 590 s of the rest.
// The files of `alone` change what every other file reads, web/dist, and run afterwards, one at a time.
//
// `npm test -- test/a.test.ts test/b.test.ts` runs just those files, in the same way.

const root = path.resolve(import.meta.dirname, '..');

/** Files that replace web/dist while they run (a stale build, two builds racing): alone, last. */
const alone = ['test/deploy/start.test.ts', 'test/web/serving.test.ts'];

const asked = Number(process.env.TEST_CONCURRENCY ?? Math.ceil(os.availableParallelism() * 1.5));
if (!Number.isInteger(asked) || asked < 1) {
  process.stderr.write(`TEST_CONCURRENCY must be a whole number of files at once, not ${asked}\n`);
  process.exit(2);
}

/**
 * A test file on PostgreSQL opens up to 70 connections: a world's pool of 30 and pg-boss's 4, and a
 * second service on the same database in some files. Files side by side must stay within the
 * server's max_connections (100 by default: one file at a time; .ci/run raises it), or a race test
 * would fail on "too many clients" instead of proving its guard.
 */
const connectionsPerFile = 70;

async function filesAtOnce(): Promise<number> {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') return asked;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ max_connections: string }>('show max_connections');
    const fit = Math.max(1, Math.floor((Number(rows[0]!.max_connections) - 10) / connectionsPerFile));
    if (fit < asked)
      process.stdout.write(
        `# ${fit} file${fit === 1 ? '' : 's'} at once: PostgreSQL's max_connections (${rows[0]!.max_connections}) holds no more\n`,
      );
    return Math.min(asked, fit);
  } finally {
    await client.end();
  }
}

/**
 * node --test over the files, `filesAtOnce` at a time; resolves with its exit code. Its output is
 * passed on a whole line at a time, so that two runs side by side never cut into each other's lines.
 */
function nodeTest(files: string[], filesAtOnce: number): Promise<number> {
  if (files.length === 0) return Promise.resolve(0);
  const args = ['--test', `--test-concurrency=${filesAtOnce}`, '--test-timeout=120000', ...files];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      // Each file's process compiles the same modules (src/ and its dependencies): V8's compile cache,
      // kept on disk, spares every file after the first about a third of its start.
      env: { NODE_COMPILE_CACHE: path.join(root, 'node_modules', '.cache', 'node-compile'), ...process.env },
    });
    passLines(child.stdout, process.stdout);
    passLines(child.stderr, process.stderr);
    child.on('error', reject);
    child.on('close', (code, signal) => resolve(code ?? (signal !== null ? 1 : 0)));
  });
}

function passLines(from: Readable, to: NodeJS.WriteStream): void {
  let pending = '';
  from.setEncoding('utf8');
  from.on('data', (chunk: string) => {
    const end = chunk.lastIndexOf('\n');
    if (end === -1) {
      pending += chunk;
      return;
    }
    to.write(pending + chunk.slice(0, end + 1));
    pending = chunk.slice(end + 1);
  });
  from.on('end', () => {
    if (pending !== '') to.write(`${pending}\n`);
  });
}

const chosen = process.argv.slice(2);
const all = chosen.length > 0 ? chosen : globSync('test/**/*.test.ts', { cwd: root }).sort();

// Built once before the files start, so that the browser files do not each find it missing and build
// it at the same time (every build is whole, web-build.ts, but each costs half a minute of CPU).
// A failed build fails the browser files, which build it again and say why; the rest run as usual.
await ensureWebBuilt().catch((error: unknown) => {
  process.stdout.write(
    `# the web client failed to build: ${error instanceof Error ? error.message : error}\n`,
  );
});

/**
 * The lane of one file at a time: the browser journeys (the files of test/web/ that open Chromium;
 * the web client's plain functions and types run with the rest), and the longest file of processes.
 */
const drivesBrowser = (file: string) =>
  file.startsWith('test/web/') &&
  /\b(openBrowserWorld|launchChromium)\b/.test(readFileSync(path.join(root, file), 'utf8'));
const oneAtATime = (file: string) => drivesBrowser(file) || file === 'test/process/main.test.ts';
const together = all.filter((file) => !alone.includes(file));
const last = all.filter((file) => alone.includes(file));
const atOnce = await filesAtOnce();
const codes =
  atOnce === 1
    ? [await nodeTest(together, 1)]
    : await Promise.all([
        nodeTest(
          together.filter((file) => !oneAtATime(file)),
          atOnce - 1,
        ),
        nodeTest(together.filter(oneAtATime), 1),
      ]);
codes.push(await nodeTest(last, 1));
process.exitCode = codes.find((code) => code !== 0) ?? 0;
