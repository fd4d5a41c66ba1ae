import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// What the deployment files are checked against, read from the sources rather than copied into the
// tests: the names the service's configuration accepts, its connection pools and its graceful stop.
// Each reader fails loudly when the source no longer has the shape it reads.

export const ROOT = path.resolve(import.meta.dirname, '../..');

export function readRepoFile(file: string): string {
  return readFileSync(path.join(ROOT, file), 'utf8');
}

/** A service of a compose file, as far as the tests read it. */
export type ComposeService = {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: string[];
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  volumes?: string[];
  secrets?: string[];
  restart?: string;
  stop_grace_period?: string;
  healthcheck?: { test?: string[]; disable?: boolean };
};

/** KEY=value lines, as systemd's EnvironmentFile and compose's env_file read the simple ones used here. */
export function parseEnvFile(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
      assert.ok(match, `"${line}" is NAME=value`);
      return [match[1]!, match[2]!] as const;
    });
  return Object.fromEntries(entries);
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
 * (DATABASE_POOL_MAX) plus pg-boss's pool (`max` in src/jobs/queue.ts), plus the one connection of
 * pg-boss's listener in a process running workers with DATABASE_LISTEN_NOTIFY on (decision 0036).
 */
export function connectionsPerProcess(
  poolMax: number,
  environment: Record<string, string | undefined>,
): number {
  const queue = readRepoFile('src/jobs/queue.ts');
  const bossMax = /new PgBoss\(\{[^}]*connectionString[^}]*\bmax: (\d+)/.exec(queue)?.[1];
  assert.ok(bossMax !== undefined, "src/jobs/queue.ts gives pg-boss's pool a max");
  assert.match(
    queue,
    /useListenNotify: options\.runWorkers && database\.listenNotify/,
    'pg-boss listens in worker processes only, and only where DATABASE_LISTEN_NOTIFY allows',
  );
  const listens = environment.WORKER !== '0' && environment.DATABASE_LISTEN_NOTIFY !== '0';
  return poolMax + Number(bossMax) + (listens ? 1 : 0);
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

/**
 * Runs Debian's caddy on a Caddyfile, with `dir` as its home and the given environment, until its
 * listeners are up (it logs that once; an exit before it is the test's failure). Returns how to stop it.
 */
export async function runCaddy(
  caddyfile: string,
  dir: string,
  env: Record<string, string>,
): Promise<{ stop(): Promise<void> }> {
  const child = spawn('caddy', ['run', '--config', caddyfile, '--adapter', 'caddyfile'], {
    env: { PATH: process.env.PATH ?? '', HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const stop = async () => {
    child.kill('SIGTERM');
    await exited;
  };
  let log = '';
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr.setEncoding('utf8');
      child.stderr.on('data', (chunk: string) => {
        log += chunk;
        if (log.includes('serving initial configuration')) resolve();
      });
      void exited.then(() => reject(new Error(`caddy exited: ${log}`)));
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}

/** The pinned node running the service (or a CLI of it), as the deploy tests start it. */
export type ServiceRun = {
  child: ChildProcess;
  /** Resolves once the process logs 'billrail started'; rejects with its stderr if it exits first. */
  started: Promise<void>;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
};

/**
 * Starts the pinned node on `args` in the checkout, with `env` over a clean environment (nothing
 * of the test runner's, DATABASE_URL or NODE_TEST_CONTEXT, leaks in).
 */
export function runService(args: string[], env: Record<string, string>): ServiceRun {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!stdout.includes('"msg":"billrail started"')) return;
      child.stdout.off('data', check);
      resolve();
    };
    child.stdout.on('data', check);
    void exited.then((code) => reject(new Error(`exited ${code} before it started: ${stderr}`)));
  });
  // A refusal is what some tests expect: an unobserved rejection would fail the file.
  started.catch(() => {});
  return { child, started, exited, stdout: () => stdout, stderr: () => stderr };
}
