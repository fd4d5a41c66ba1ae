import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createTestDatabase, onPostgres, type TestDatabase } from '../helpers/database.ts';
import { freePort } from '../helpers/free-port.ts';

// The process as an operator runs it (API.md section 13): `node src/main.ts` and the migrate script
// as child processes of the pinned node, on PGlite files in a temporary DATA_DIR or, when the suite
// runs on PostgreSQL, on a fresh database of their own.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const MAIN = path.join(ROOT, 'src/main.ts');
const MIGRATE = path.join(ROOT, 'src/db/migrate-cli.ts');
const HEALTH_ATTEMPTS_MAX = 50;

type Exit = { code: number | null; signal: NodeJS.Signals | null };

type Child = {
  process: ChildProcess;
  exited: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first JSON log line matching; rejects if the process exits first. */
  waitForLog(match: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
};

const children = new Set<ChildProcess>();
const cleanups: Array<() => Promise<void>> = [];

after(async () => {
  // A failed test can leave a child running: never leave one behind.
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
});

function run(script: string, args: string[], env: Record<string, string>): Child {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    // A clean environment: nothing of the test runner's (NODE_TEST_CONTEXT, DATABASE_URL) leaks in.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8');
  child.stderr!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<Exit>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const logEntries = () =>
    stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    process: child,
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    waitForLog: (match) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = logEntries().find(match);
          if (found === undefined) return false;
          child.stdout!.off('data', check);
          resolve(found);
          return true;
        };
        if (check()) return;
        child.stdout!.on('data', check);
        void exited.then((exit) => {
          if (!check()) reject(new Error(`exited (${JSON.stringify(exit)}) first; stderr: ${stderr}`));
        });
      }),
  };
}

async function tempDir(): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'billrail-process-'));
  cleanups.push(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * Where the service keeps its data: a temporary DATA_DIR, plus a fresh database on PostgreSQL
 * (migrated, unless `empty`: the migrate script's own test starts from nothing).
 */
async function storage(options: { empty?: boolean } = {}): Promise<Record<string, string>> {
  const env: Record<string, string> = { DATA_DIR: await tempDir() };
  if (onPostgres()) {
    const database: TestDatabase = await createTestDatabase(options);
    cleanups.push(() => database.drop());
    assert.equal(database.target.kind, 'postgres');
    if (database.target.kind === 'postgres') env.DATABASE_URL = database.target.url;
  }
  if (process.env.REDIS_URL) env.REDIS_URL = process.env.REDIS_URL;
  return env;
}

/** Polls /healthz a bounded number of times, each attempt waiting for the answer. */
async function waitHealthy(baseUrl: string, child: Child): Promise<void> {
  let last: unknown;
  for (let attempt = 1; attempt <= HEALTH_ATTEMPTS_MAX; attempt++) {
    if (child.process.exitCode !== null)
      throw new Error(`exited ${child.process.exitCode}: ${child.stderr()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
      if (response.status === 200) return;
      last = response.status;
    } catch (error) {
      last = error;
      // Not listening yet: wait for the process to say something (its start-up log) or to exit.
      await Promise.race([
        child.waitForLog((entry) => entry.msg === 'billrail started').catch(() => undefined),
        child.exited,
      ]);
    }
  }
  throw new Error(`/healthz never answered 200: ${String(last)}`);
}

async function startService(env: Record<string, string>, args: string[] = []): Promise<Child> {
  const child = run(MAIN, args, { NODE_ENV: 'test', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...env });
  return child;
}

async function stop(child: Child): Promise<Exit> {
  child.process.kill('SIGTERM');
  return child.exited;
}

async function postOp(baseUrl: string, op: string, data: object, token?: string) {
  const response = await fetch(`${baseUrl}/_serverFn/${op}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
      ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ data }),
  });
  return { status: response.status, body: (await response.json()) as { success: boolean; data: never } };
}

describe('the service process', () => {
  it('exits 1 with one stderr line naming PORT when PORT is bad', async () => {
    const child = run(MAIN, [], { NODE_ENV: 'test', PORT: 'abc', DATA_DIR: await tempDir() });
    const exit = await child.exited;
    assert.deepEqual(exit, { code: 1, signal: null });
    const lines = child.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 1, child.stderr());
    assert.match(lines[0] ?? '', /\bPORT\b/);
    assert.equal(child.stdout(), '');
  });

  it('exits 1 when NODE_ENV=production asks for the sandbox', async () => {
    const child = run(MAIN, [], { NODE_ENV: 'production', SANDBOX: '1', DATA_DIR: await tempDir() });
    const exit = await child.exited;
    assert.deepEqual(exit, { code: 1, signal: null });
    assert.match(child.stderr(), /\bSANDBOX\b/);
    assert.equal(child.stderr().trimEnd().split('\n').length, 1, child.stderr());
  });

  it('refuses to open the sandbox on a public address nobody asked it for (issue 25)', async () => {
    // The careless start: NODE_ENV unset, listening on every interface, a public base URL.
    const child = run(MAIN, [], {
      HOST: '0.0.0.0',
      PUBLIC_BASE_URL: 'https://pay.example.com',
      PORT: String(await freePort()),
      DATA_DIR: await tempDir(),
    });
    const exit = await child.exited;
    assert.deepEqual(exit, { code: 1, signal: null });
    const lines = child.stderr().trimEnd().split('\n');
    assert.equal(lines.length, 1, child.stderr());
    assert.match(lines[0] ?? '', /HOST=0\.0\.0\.0/);
    assert.match(lines[0] ?? '', /set SANDBOX=1/);
    assert.equal(child.stdout(), '', 'nothing started, so nothing logged');
  });

  it('warns what is open when SANDBOX=1 is said on a public address (issue 25)', async () => {
    const port = String(await freePort());
    const child = await startService({ ...(await storage()), HOST: '0.0.0.0', SANDBOX: '1', PORT: port });
    const warning = await child.waitForLog((entry) => entry.level === 40);
    assert.deepEqual(warning.exposedBy, ['HOST=0.0.0.0']);
    const message = String(warning.msg);
    assert.match(message, /sign-in code/);
    assert.match(message, /signing secret/);
    assert.match(message, /clock/);
    await waitHealthy(`http://127.0.0.1:${port}`, child);
    assert.deepEqual(await stop(child), { code: 0, signal: null });
  });

  it('serves, signs a user in, stops on SIGTERM with 0 and keeps the data across a restart', async () => {
    const env = { ...(await storage()), PORT: String(await freePort()) };
    const baseUrl = `http://127.0.0.1:${env.PORT}`;

    const first = await startService(env);
    await waitHealthy(baseUrl, first);
    const phone = '08035550123';
    const requested = await postOp(baseUrl, 'requestOtp', { phone });
    assert.equal(requested.status, 200, JSON.stringify(requested.body));
    const sms = await fetch(`${baseUrl}/__sandbox/sms?phone=${phone}`);
    assert.equal(sms.status, 200);
    const { code } = ((await sms.json()) as { data: { code: string } }).data;
    const verified = await postOp(baseUrl, 'verifyOtp', { phone, code });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    const session = verified.body.data as { accessToken: string; user: { id: string } };
    assert.deepEqual(await stop(first), { code: 0, signal: null });
    await assert.rejects(fetch(`${baseUrl}/healthz`), 'nothing listens after the stop');

    const second = await startService(env);
    await waitHealthy(baseUrl, second);
    const me = await fetch(`${baseUrl}/_serverFn/getMe`, {
      headers: { authorization: `Bearer ${session.accessToken}` },
    });
    assert.equal(me.status, 200);
    const body = (await me.json()) as { data: { id: string; phone: string } };
    assert.equal(body.data.id, session.user.id);
    assert.equal(body.data.phone, '+2348035550123');
    assert.deepEqual(await stop(second), { code: 0, signal: null });
  });

  it('runs --worker-only without HTTP and stops on SIGTERM with 0', async () => {
    const env = { ...(await storage()), PORT: String(await freePort()) };
    const child = await startService(env, ['--worker-only']);
    const started = await child.waitForLog((entry) => entry.msg === 'billrail started');
    assert.equal(started.api, false);
    assert.equal(started.worker, true);
    await assert.rejects(
      new Promise<void>((resolve, reject) => {
        const socket = net.connect({ host: '127.0.0.1', port: Number(env.PORT) }, () => {
          socket.end();
          resolve();
        });
        socket.on('error', reject);
      }),
      /ECONNREFUSED/,
    );
    assert.deepEqual(await stop(child), { code: 0, signal: null });
  });
  it('serves /metrics on METRICS_PORT with its token, apart from the API port (API.md section 17.1)', async () => {
    const token = randomUUID() + randomUUID();
    const env = {
      ...(await storage()),
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      METRICS_TOKEN: token,
    };
    const child = await startService(env);
    await waitHealthy(`http://127.0.0.1:${env.PORT}`, child);
    const metricsUrl = `http://127.0.0.1:${env.METRICS_PORT}`;
    const scraped = await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(scraped.status, 200);
    assert.match(await scraped.text(), /^billrail_figures_age_seconds /m);
    assert.equal((await fetch(`${metricsUrl}/metrics`)).status, 401, 'not without the token');
    assert.equal((await fetch(`${metricsUrl}/readyz`)).status, 200);
    const onApiPort = await fetch(`http://127.0.0.1:${env.PORT}/metrics`, {
      headers: { authorization: `Bearer ${token}` },
    });
    assert.doesNotMatch(await onApiPort.text(), /billrail_figures_age_seconds/, 'nothing on the API port');
    assert.deepEqual(await stop(child), { code: 0, signal: null });
  });
});

describe('the migrate script', () => {
  it('applies the migrations, then reports it is up to date, exiting 0 each time', async () => {
    const env = { NODE_ENV: 'test', ...(await storage({ empty: true })) };
    const first = run(MIGRATE, [], env);
    assert.deepEqual(await first.exited, { code: 0, signal: null }, first.stderr());
    assert.match(first.stdout(), /^migrations applied: .*foundation/m);
    const second = run(MIGRATE, [], env);
    assert.deepEqual(await second.exited, { code: 0, signal: null }, second.stderr());
    assert.match(second.stdout(), /^migrations: up to date$/m);
  });

  it('exits non-zero when DATABASE_URL names a database that does not exist', async () => {
    const url = new URL(process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
    url.pathname = `/billrail_missing_${randomUUID().slice(0, 8)}`;
    const child = run(MIGRATE, [], { NODE_ENV: 'test', DATABASE_URL: url.toString() });
    const exit = await child.exited;
    assert.notEqual(exit.code, 0);
    assert.equal(exit.code, 1);
    assert.match(child.stderr(), /migrate failed/);
    if (onPostgres()) assert.match(child.stderr(), /does not exist/);
  });

  it('exits 1 on a bad environment', async () => {
    const child = run(MIGRATE, [], { NODE_ENV: 'test', DATABASE_URL: 'mysql://db/billrail' });
    assert.deepEqual(await child.exited, { code: 1, signal: null });
    assert.match(child.stderr(), /DATABASE_URL/);
  });
});
