import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { webBuildIsFresh, webDistDir } from '../../src/web-build.ts';
import { createTestDatabase, onPostgres } from '../helpers/database.ts';
import { freePort } from '../helpers/free-port.ts';
import { npmScript, runService } from './support.ts';

// Where the web client is built: `npm start` builds a stale one in a child process (npm run build)
// before it serves, so that the process serving money never holds a build; `npm run worker` and a
// bare `node src/main.ts` (the image, the units) never build. The processes are started with the
// commands of package.json's scripts, on the pinned node.

type Started = {
  child: ChildProcess;
  port: number;
  logs: () => Array<Record<string, unknown>>;
  exited: Promise<number | null>;
};

const children: ChildProcess[] = [];
const cleanups: Array<() => Promise<void>> = [];
after(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function storage(): Promise<Record<string, string>> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-start-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const env: Record<string, string> = { DATA_DIR: dir };
  if (onPostgres()) {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    if (database.target.kind === 'postgres') env.DATABASE_URL = database.target.url;
  }
  return env;
}

/** Starts `node <args of the npm script>`. */
async function start(script: string): Promise<Started> {
  const [command, ...args] = npmScript(script).split(' ');
  assert.equal(command, 'node', `npm run ${script} runs node`);
  return startWith(args);
}

/** Starts the pinned node with `args` and resolves once it logs 'billrail started'. */
async function startWith(args: string[]): Promise<Started> {
  const port = await freePort();
  const env = { PATH: process.env.PATH ?? '', HOME: os.tmpdir(), NODE_ENV: 'test', PORT: String(port) };
  const service = runService(args, { ...env, ...(await storage()) });
  children.push(service.child);
  await service.started;
  const logs = () =>
    service
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  const { child, exited } = service;
  return { child, logs, exited, port };
}

async function stop(started: Started): Promise<void> {
  started.child.kill('SIGTERM');
  assert.equal(await started.exited, 0, 'a graceful stop');
}

const HASH_FILE = path.join(webDistDir, '.source-hash');

/** Makes web/dist look older than its sources (a start that builds would replace it). */
async function makeWebDistStale(): Promise<void> {
  if (existsSync(path.join(webDistDir, 'index.html'))) await writeFile(HASH_FILE, 'stale\n');
  assert.equal(await webBuildIsFresh(), false);
}

describe('where the web client is built', () => {
  it('npm run worker and a bare node src/main.ts never build it', async () => {
    assert.doesNotMatch(npmScript('worker'), /--build-web/);
    await makeWebDistStale();
    const hashBefore = existsSync(HASH_FILE) ? await readFile(HASH_FILE, 'utf8') : undefined;
    const worker = await start('worker');
    await stop(worker);
    assert.equal(
      worker.logs().filter((entry) => entry.name === 'web-build').length,
      0,
      'no build by a worker',
    );
    const bare = await startBare();
    await stop(bare);
    assert.equal(bare.logs().filter((entry) => entry.name === 'web-build').length, 0, 'no build');
    assert.equal(existsSync(HASH_FILE) ? await readFile(HASH_FILE, 'utf8') : undefined, hashBefore);
    assert.equal(await webBuildIsFresh(), false, 'web/dist left as it was');
  });

  it('npm start builds a stale client in a child process, then serves it', async () => {
    await makeWebDistStale();
    const api = await start('start');
    try {
      const built = api.logs().find((entry) => entry.msg === 'web client built');
      assert.ok(built !== undefined, 'the client was built before the service started');
      assert.equal(built.name, 'web-build');
      assert.notEqual(built.pid, api.child.pid, 'by another process than the one that serves');
      const started = api.logs().find((entry) => entry.msg === 'billrail started');
      assert.equal(started?.pid, api.child.pid);
      assert.equal(await webBuildIsFresh(), true);
      const response = await fetch(`http://127.0.0.1:${api.port}/`, { headers: { accept: 'text/html' } });
      assert.equal(response.status, 200);
      assert.equal(await response.text(), await readFile(path.join(webDistDir, 'index.html'), 'utf8'));
    } finally {
      await stop(api);
    }
  });
});

/** `node src/main.ts` with no flag, as the image and the units run it. */
async function startBare(): Promise<Started> {
  // npm start's node flags (docs/memory.md) come before the entry point.
  const main = npmScript('start')
    .split(' ')
    .find((word) => word.endsWith('main.ts'));
  assert.equal(main, 'src/main.ts');
  return startWith([main]);
}
