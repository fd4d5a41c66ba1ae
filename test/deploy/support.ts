import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';

// What the deployment files are checked against, read from the sources rather than copied into the
// tests: the names the service's configuration accepts, its connection pools and its graceful stop.
// Each reader fails loudly when the source no longer has the shape it reads.

export const ROOT = path.resolve(import.meta.dirname, '../..');

export function readRepoFile(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

/**
 * The environment variables src/config.ts's schema declares (`const envSchema = z.object({ ... })`).
 * A name outside it is dropped by the parser without a word, so a misspelt setting would silently
 * take its default: the deployment files may use these names alone.
 */
export function configEnvNames(): Set<string> {
  const source = readRepoFile('src/config.ts');
  const start = source.indexOf('const envSchema = z.object({');
  assert.ok(start >= 0, 'src/config.ts declares envSchema = z.object({ ... })');
  const end = source.indexOf('\n});', start);
  assert.ok(end > start, 'envSchema ends with a line "});"');
  const names = new Set(
    [...source.slice(start, end).matchAll(/^ {2}([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]!),
  );
  // The schema has dozens of settings: far fewer means this reader no longer reads it.
  assert.ok(names.size > 40 && names.has('DATABASE_URL') && names.has('WORKER'), 'envSchema read');
  return names;
}

/** The default of a numeric setting in envSchema (`NAME: ....default(20)`). */
export function configDefault(name: string): number {
  const match = new RegExp(`^ {2}${name}:.*\\.default\\((\\d[\\d_]*)\\)`, 'm').exec(
    readRepoFile('src/config.ts'),
  );
  assert.ok(match, `src/config.ts gives ${name} a numeric default`);
  return Number(match[1]!.replaceAll('_', ''));
}

/** The sandbox's own secrets (config.ts), refused outside the sandbox. */
export function sandboxSecrets(): { signing: string; pepper: string } {
  const source = readRepoFile('src/config.ts');
  const signing = /^const SANDBOX_SIGNING_SECRET = '([^']+)';/m.exec(source)?.[1];
  const pepper = /^const SANDBOX_PEPPER = '([^']+)';/m.exec(source)?.[1];
  assert.ok(signing !== undefined && pepper !== undefined, 'src/config.ts names the sandbox secrets');
  return { signing, pepper };
}

/**
 * The PostgreSQL connections one service process (API or worker) may hold at most: its Kysely pool
 * (DATABASE_POOL_MAX) plus pg-boss's pool (`max` in src/jobs/queue.ts). pg-boss opens no LISTEN
 * connection of its own: useListenNotify is off unless asked for, and queue.ts does not ask.
 */
export function connectionsPerProcess(poolMax: number): number {
  const queue = readRepoFile('src/jobs/queue.ts');
  const bossMax = /new PgBoss\(\{[^}]*connectionString[^}]*\bmax: (\d+)/.exec(queue)?.[1];
  assert.ok(bossMax !== undefined, "src/jobs/queue.ts gives pg-boss's pool a max");
  assert.doesNotMatch(queue, /useListenNotify/, 'pg-boss opens no LISTEN connection');
  return poolMax + Number(bossMax);
}

/** The connections `npm run migrate` (src/db/migrate-cli.ts) opens. */
export function migrateConnections(): number {
  const match = /configuredTarget\(config, (\d+)[,)]/.exec(readRepoFile('src/db/migrate-cli.ts'));
  assert.ok(match, 'src/db/migrate-cli.ts opens a pool of a fixed size');
  return Number(match[1]);
}

/**
 * The longest a graceful stop may take, in ms: in-flight requests (Fastify's requestTimeout in
 * src/app.ts), then the jobs in hand (pg-boss's stop timeout in src/jobs/queue.ts). A supervisor
 * that kills sooner kills a process in the middle of a job.
 */
export function gracefulStopMs(): number {
  const requestTimeout = /requestTimeout: ([\d_]+)/.exec(readRepoFile('src/app.ts'))?.[1];
  const jobsTimeout = /boss\.stop\(\{ graceful: true, timeout: ([\d_]+) \}\)/.exec(
    readRepoFile('src/jobs/queue.ts'),
  )?.[1];
  assert.ok(requestTimeout !== undefined && jobsTimeout !== undefined, 'the stop timeouts are read');
  return Number(requestTimeout.replaceAll('_', '')) + Number(jobsTimeout.replaceAll('_', ''));
}

/** The command line of a package.json script. */
export function npmScript(name: string): string {
  const scripts = (JSON.parse(readRepoFile('package.json')) as { scripts: Record<string, string> }).scripts;
  const script = scripts[name];
  assert.ok(script !== undefined, `package.json has a "${name}" script`);
  return script;
}

/** The V8 heap flags of a command line (docs/memory.md): npm start's are the ones to keep. */
export function heapFlagsOf(commandLine: string): string[] {
  return commandLine.split(/\s+/).filter((word) => /^--max-(semi|old)-space-size=\d+$/.test(word));
}

/** The flags NODE_OPTIONS is set to in environment lines (`NODE_OPTIONS=...`, quoted or not). */
export function nodeOptionsOf(lines: readonly string[]): string[] {
  const options = lines
    .map((line) => /NODE_OPTIONS="?([^"\n]*)/.exec(line)?.[1])
    .find((o) => o !== undefined);
  assert.ok(options !== undefined, 'NODE_OPTIONS is set');
  return heapFlagsOf(options);
}
