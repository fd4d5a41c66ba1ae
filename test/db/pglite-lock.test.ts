import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { lockPgliteDir, PgliteLockedError, pgliteLockPath } from '../../src/db/pglite-lock.ts';

// One process per PGlite directory: the lock is held by a live pid, taken over from a dead one, and
// of several processes starting at once on a stale lock exactly one gets it. The holders are real
// processes (the pinned node running the lock module); test/deploy/production-refusals.test.ts starts
// the service itself twice on one DATA_DIR.

const LOCK_MODULE = path.resolve(import.meta.dirname, '../../src/db/pglite-lock.ts');
const children: ChildProcess[] = [];
const dirs: string[] = [];
after(async () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'billrail-lock-'));
  dirs.push(dir);
  return dir;
}

/** A process that tries the lock once, prints `held` or `refused <pid>`, and then waits to be killed. */
function contender(dir: string): { child: ChildProcess; said: Promise<string> } {
  const script = `
    import { lockPgliteDir } from ${JSON.stringify(LOCK_MODULE)};
    try { lockPgliteDir(${JSON.stringify(dir)}); console.log('held'); }
    catch (error) { console.log('refused ' + error.holderPid); }
    setInterval(() => {}, 60_000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const said = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`exited ${code} before saying anything`)));
  });
  return { child, said };
}

async function killed(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('lockPgliteDir', () => {
  it('refuses while another live process holds the directory, naming its pid', async () => {
    const dir = await tempDir();
    const holder = contender(dir);
    assert.equal(await holder.said, 'held');
    assert.throws(
      () => lockPgliteDir(dir),
      (error: unknown) => {
        assert.ok(error instanceof PgliteLockedError);
        assert.equal(error.holderPid, holder.child.pid);
        assert.match(error.message, new RegExp(`in use by process ${holder.child.pid}\\b`));
        return true;
      },
    );
    await killed(holder.child);
  });

  it('takes over the lock of a holder killed with SIGKILL, and its release frees the directory', async () => {
    const dir = await tempDir();
    const holder = contender(dir);
    assert.equal(await holder.said, 'held');
    await killed(holder.child);
    assert.equal(
      (await readFile(pgliteLockPath(dir), 'utf8')).trim(),
      String(holder.child.pid),
      'left behind',
    );
    const release = lockPgliteDir(dir);
    assert.equal((await readFile(pgliteLockPath(dir), 'utf8')).trim(), String(process.pid));
    release();
    assert.equal(existsSync(pgliteLockPath(dir)), false);
    const next = contender(dir);
    assert.equal(await next.said, 'held', 'a released directory is free for the next process');
    await killed(next.child);
  });

  it('refuses a second open in this process, and takes over a file with its pid that it never took', async () => {
    const dir = await tempDir();
    const release = lockPgliteDir(dir);
    assert.throws(() => lockPgliteDir(dir), new RegExp(`in use by process ${process.pid}\\b`));
    release();
    // A container's process is pid 1 at every start: the file a previous life left names our pid.
    writeFileSync(pgliteLockPath(dir), `${process.pid}\n`);
    lockPgliteDir(dir)();
  });

  it('of several processes starting at once on a stale lock, exactly one holds it', async () => {
    const dir = await tempDir();
    const first = contender(dir);
    assert.equal(await first.said, 'held');
    await killed(first.child);
    const starters = Array.from({ length: 4 }, () => contender(dir));
    const said = await Promise.all(starters.map((s) => s.said));
    const holders = starters.filter((_, i) => said[i] === 'held');
    assert.equal(holders.length, 1, said.join(', '));
    for (const line of said.filter((line) => line !== 'held'))
      assert.equal(line, `refused ${holders[0]!.child.pid}`, 'the others name the one that holds it');
  });
});
