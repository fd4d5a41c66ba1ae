import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { brotliCompressSync, gzipSync, constants as zlibConstants } from 'node:zlib';
import type { Logger } from 'pino';

// The web client (API.md section 15) is built with `npm run build` (src/web-build-cli.ts), which
// `npm start` runs in a child process before it serves (buildWebInChildProcess), on the first start
// and again whenever its sources change, so that a checkout runs with `npm start` alone (web/dist is
// not committed). The process that serves never builds: hashing and compressing the client in it
// raised its peak memory for the rest of its life (VmHWM at start on PostgreSQL: 222 and 238 MB
// with a build, 208 MB without), and every replica on a checkout whose web/dist was stale built
// again. The sources' hash is kept beside the output (web/dist/.source-hash); a build whose sources
// hash the same is skipped.
//
// Two builds at once (two replicas on one checkout, two calls in one test process) each build into a
// directory of their own and then rename it into place, so web/dist is always one whole build (the
// same sources give the same files) and never a half-written one. Vite runs in a process of its own
// (viteBuild): this module changes nothing of the process it runs in and keeps no state.

const repoRoot = path.resolve(import.meta.dirname, '..');
/** `npm run build`: the build as a process of its own. */
const BUILD_SCRIPT = path.join(import.meta.dirname, 'web-build-cli.ts');
/** The web workspace: its sources and Vite config. */
export const webDir = path.join(repoRoot, 'web');
/** What the service serves at `/` (src/http/web-app.ts): Vite's output. */
export const webDistDir = path.join(webDir, 'dist');

const HASH_FILE = '.source-hash';
const SOURCE_DIRS = ['src', 'public'];
const SOURCE_FILES = ['index.html', 'vite.config.ts', 'package.json'];
/** Written by the build itself (TanStack Router's route tree, made from src/routes): not a source. */
const GENERATED = new Set(['src/routeTree.gen.ts']);
/** A staging directory older than this was left by a build that died. */
const ABANDONED_AFTER_MS = 60 * 60 * 1000;

export type WebBuild = { built: boolean; dir: string };

/** The modules the service and the client share (prefix table, phone parsing, network names): one folder. */
const SHARED_SOURCES_DIR = 'src/shared';

const silent: Pick<Logger, 'info' | 'warn'> = { info: () => {}, warn: () => {} };

/**
 * The sha256 of the client's sources: every file under src/ and public/ plus index.html,
 * vite.config.ts and package.json, as sorted relative paths with their contents. Undefined when
 * `dir` holds no web client (no vite.config.ts).
 */
export async function webSourceHash(dir: string = webDir): Promise<string | undefined> {
  if (!existsSync(path.join(dir, 'vite.config.ts'))) return undefined;
  const files: string[] = [];
  for (const sub of SOURCE_DIRS) files.push(...(await filesUnder(dir, sub)));
  for (const file of SOURCE_FILES) if (existsSync(path.join(dir, file))) files.push(file);
  const hash = createHash('sha256');
  for (const file of files.filter((f) => !GENERATED.has(f)).sort()) {
    const content = await readFile(path.join(dir, file));
    hash.update(`${file}\0${content.length}\0`);
    hash.update(content);
  }
  // What the build is made with besides the client's own files: the modules it shares with the
  // service, and this recipe (a change to how the build is made is a new build).
  const shared = await filesUnder(repoRoot, SHARED_SOURCES_DIR);
  for (const file of [...shared.sort(), path.relative(repoRoot, import.meta.filename)]) {
    const content = await readFile(path.join(repoRoot, file));
    hash.update(`${file}\0${content.length}\0`);
    hash.update(content);
  }
  return hash.digest('hex');
}

/** The files under `base`/`sub`, as paths relative to `base` with forward slashes. */
async function filesUnder(base: string, sub: string): Promise<string[]> {
  const root = path.join(base, sub);
  if (!existsSync(root)) return [];
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(base, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
}

/** Whether `dir`/dist is a whole build of the sources as they are now. */
export async function webBuildIsFresh(dir: string = webDir): Promise<boolean> {
  const hash = await webSourceHash(dir);
  return hash !== undefined && (await builtHash(path.join(dir, 'dist'))) === hash;
}

async function builtHash(distDir: string): Promise<string | undefined> {
  if (!existsSync(path.join(distDir, 'index.html'))) return undefined;
  try {
    return (await readFile(path.join(distDir, HASH_FILE), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/**
 * Builds the web client with Vite when web/dist is missing or older than its sources. Resolves once
 * web/dist is a whole, current build (built: true when this call built it); throws when the build
 * fails. Without a web client in the checkout it logs so and resolves with built: false.
 */
export async function ensureWebBuilt({
  logger = silent,
  dir = webDir,
}: {
  logger?: Pick<Logger, 'info' | 'warn'>;
  dir?: string;
} = {}): Promise<WebBuild> {
  const distDir = path.join(dir, 'dist');
  const hash = await webSourceHash(dir);
  if (hash === undefined) {
    logger.warn({ dir }, 'no web client sources: the web client is not served');
    return { built: false, dir: distDir };
  }
  const previous = await builtHash(distDir);
  if (previous === hash) return { built: false, dir: distDir };
  logger.info({ reason: previous === undefined ? 'missing' : 'sources changed' }, 'building the web client');

  const staging = await stagingDir(dir);
  const outDir = await mkdtemp(path.join(staging, 'build-'));
  try {
    const warnings = await viteBuild(path.join(dir, 'vite.config.ts'), outDir);
    if (warnings !== '') logger.warn({ output: warnings }, 'the web client built with warnings');
    await precompress(outDir);
    await writeFile(path.join(outDir, HASH_FILE), `${hash}\n`);
    await moveIntoPlace(outDir, distDir, staging);
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
  return { built: true, dir: distDir };
}

export type ChildBuild = { ok: true } | { ok: false; reason: string };

/**
 * Runs `npm run build` (src/web-build-cli.ts) in a child process of the same Node and waits for it:
 * its log lines go to this process's stdout and stderr. The calling process never loads the build,
 * and the child's environment is a copy, which the build cannot change for the caller. Resolves
 * with ok: false (never rejects) when the build fails, so that a failed build costs the client, not
 * the API.
 */
export async function buildWebInChildProcess(): Promise<ChildBuild> {
  const child = spawn(process.execPath, [BUILD_SCRIPT], { stdio: ['ignore', 'inherit', 'inherit'] });
  // 'error' (no process could be started) or 'close': whichever comes first settles it.
  const failure = await new Promise<string | undefined>((resolve) => {
    child.once('error', (error) => resolve(error.message));
    child.once('close', (code, signal) => resolve(code === 0 ? undefined : (signal ?? `exit code ${code}`)));
  });
  return failure === undefined
    ? { ok: true }
    : { ok: false, reason: `the web client's build process failed (${failure})` };
}

/** The most of Vite's output kept for a warning or an error. */
const VITE_OUTPUT_CHARS_MAX = 16_384;

/**
 * Runs Vite's build in a Node process of its own, with NODE_ENV=production set there. Vite decides
 * a production bundle from NODE_ENV before its `mode` (React's development build and its JSX
 * runtime otherwise), and sets the variable itself where it is unset: run in this process it would
 * change this process's environment, which the service and every context in a test process share.
 * Resolves with what Vite wrote to stderr (its warnings); rejects with it when the build fails.
 */
async function viteBuild(configFile: string, outDir: string): Promise<string> {
  const options = { configFile, mode: 'production', logLevel: 'warn', build: { outDir, emptyOutDir: true } };
  const script = [
    "process.env.NODE_ENV = 'production';",
    `const { build } = await import(${JSON.stringify(import.meta.resolve('vite'))});`,
    `await build(${JSON.stringify(options)});`,
  ].join('\n');
  const child = spawn(process.execPath, ['--input-type=module', '--eval', script], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    output = (output + chunk).slice(-VITE_OUTPUT_CHARS_MAX);
  });
  const [code, signal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
  if (code !== 0) {
    throw new Error(`the web client's build failed (${signal ?? `exit code ${code}`}):\n${output}`);
  }
  return output.trim();
}

/** Text files the client is made of: worth compressing once here rather than on every request. */
const COMPRESSIBLE = /\.(?:js|mjs|css|html|svg|json|webmanifest)$/;

/**
 * Writes a Brotli (.br) and a gzip (.gz) copy beside every text file of the build, which the server
 * sends to browsers that accept them (@fastify/static preCompressed). Measured with npm run bench
 * (webClient): a cold /sign-in on Slow 4G moved 362 kB uncompressed, and its LCP missed 2.5 s.
 */
async function precompress(outDir: string): Promise<void> {
  for (const entry of await readdir(outDir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
    const file = path.join(entry.parentPath, entry.name);
    const content = await readFile(file);
    await writeFile(
      `${file}.br`,
      brotliCompressSync(content, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } }),
    );
    await writeFile(`${file}.gz`, gzipSync(content, { level: 9 }));
  }
}

/**
 * Where builds are made before they are renamed into place: node_modules/.cache (ignored by git)
 * when it is on web/dist's file system, as a rename needs; the web directory itself otherwise.
 * Leftovers of builds that died are removed.
 */
async function stagingDir(dir: string): Promise<string> {
  const cache = path.join(path.dirname(dir), 'node_modules', '.cache', 'billrail-web');
  let staging = dir;
  try {
    await mkdir(cache, { recursive: true });
    if ((await stat(cache)).dev === (await stat(dir)).dev) staging = cache;
  } catch {
    // No node_modules to write to: stage beside web/dist.
  }
  if (staging === cache) {
    for (const entry of await readdir(cache)) {
      const leftover = path.join(cache, entry);
      const { mtimeMs } = await stat(leftover).catch(() => ({ mtimeMs: Date.now() }));
      if (Date.now() - mtimeMs > ABANDONED_AFTER_MS) await rm(leftover, { recursive: true, force: true });
    }
  }
  return staging;
}

/**
 * Renames a finished build to `distDir`, moving the build it replaces aside first (a directory
 * cannot be renamed over a non-empty one). A build that another process puts in place between the
 * two renames is moved aside in turn on the next attempt: whichever lands last is a whole build.
 */
async function moveIntoPlace(outDir: string, distDir: string, staging: string): Promise<void> {
  const replaced: string[] = [];
  try {
    for (let attempt = 1; ; attempt++) {
      const aside = path.join(staging, `replaced-${process.pid}-${randomBytes(4).toString('hex')}`);
      try {
        await rename(distDir, aside);
        replaced.push(aside);
      } catch (error) {
        if (errorCode(error) !== 'ENOENT') throw error;
      }
      try {
        await rename(outDir, distDir);
        return;
      } catch (error) {
        const code = errorCode(error);
        if ((code !== 'ENOTEMPTY' && code !== 'EEXIST') || attempt >= 5) throw error;
      }
    }
  } finally {
    for (const dir of replaced) await rm(dir, { recursive: true, force: true });
  }
}

function errorCode(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error ? String(error.code) : undefined;
}
