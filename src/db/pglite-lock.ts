import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

// A PGlite directory belongs to one process (decision 0002): PGlite is PostgreSQL compiled to run
// inside this process, with no server to arbitrate, so two processes writing one directory corrupt
// it. The lock is a file holding the holder's pid, created atomically (a link fails when the name
// exists), and judged stale when no process has that pid any more: a holder killed with SIGKILL
// never removes its file, and must not block the next start.

/** The lock file of a data directory, beside its pglite/ folder. */
export function pgliteLockPath(dataDir: string): string {
  return path.join(dataDir, 'pglite.lock');
}

export class PgliteLockedError extends Error {
  override name = 'PgliteLockedError';
  readonly lockPath: string;
  readonly holderPid: number;
  constructor(lockPath: string, holderPid: number) {
    super(
      `the embedded database in ${path.dirname(lockPath)} is in use by process ${holderPid}: a PGlite directory belongs to one process (set DATABASE_URL to share one PostgreSQL between processes, or give this one another DATA_DIR); if process ${holderPid} is not billrail, remove ${lockPath}`,
    );
    this.lockPath = lockPath;
    this.holderPid = holderPid;
  }
}

/** The lock files this process holds: its own pid in a file is a live lock only if listed here. */
const heldHere = new Set<string>();

/** Whether a process with this pid exists (EPERM: it does, under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock file; undefined when the file is gone. */
function readPid(file: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const pid = Number(text.trim());
  // Written whole before it is linked into place, so anything else is not a lock of ours.
  if (!Number.isSafeInteger(pid) || pid <= 0) throw new Error(`${file} does not hold a pid: remove it`);
  return pid;
}

/**
 * Whether the pid holds the lock now. This process's own pid counts only if this process took the
 * lock: in a container every start is pid 1, so a file naming our pid was left by a previous life.
 */
function holding(pid: number, lockPath: string): boolean {
  return pid === process.pid ? heldHere.has(lockPath) : alive(pid);
}

function removeQuietly(file: string): void {
  try {
    fs.unlinkSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** Puts a file whose content is complete at lockPath unless something is there; true when it did. */
function linkInPlace(source: string, lockPath: string): boolean {
  try {
    fs.linkSync(source, lockPath);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Takes the data directory's lock for this process, or throws PgliteLockedError naming the live
 * holder's pid. Returns the release, which removes the file only while it is still this process's.
 */
export function lockPgliteDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  // Absolute, so that one directory named two ways in this process is one lock.
  const lockPath = pgliteLockPath(path.resolve(dataDir));
  const unique = () => `${lockPath}.${process.pid}.${randomBytes(6).toString('hex')}`;
  // The pid is written to a file of its own first and then linked to the lock's name: the link is
  // atomic and fails if the name exists, so a lock file is never seen half written.
  const mine = unique();
  fs.writeFileSync(mine, `${process.pid}\n`, { flag: 'wx' });
  try {
    // A few rounds: each lost one means another starter changed the lock meanwhile.
    for (let round = 0; round < 5; round++) {
      if (linkInPlace(mine, lockPath)) {
        heldHere.add(lockPath);
        return () => {
          heldHere.delete(lockPath);
          try {
            if (readPid(lockPath) === process.pid) removeQuietly(lockPath);
          } catch {
            // Not a pid any more: not ours to remove.
          }
        };
      }
      const holder = readPid(lockPath);
      if (holder === undefined) continue;
      if (holding(holder, lockPath)) throw new PgliteLockedError(lockPath, holder);
      // Stale. Moved aside under a name of our own, the rename being atomic: of several starters that
      // found it stale, one moves it and the others find the name gone and go round again.
      const aside = unique();
      try {
        fs.renameSync(lockPath, aside);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const moved = readPid(aside);
      if (moved !== undefined && moved !== holder && holding(moved, lockPath)) {
        // Between our read and our rename another starter took the lock over: what we moved is its
        // live lock. Given back, unless a third starter got in meanwhile (which then holds it).
        linkInPlace(aside, lockPath);
        removeQuietly(aside);
        throw new PgliteLockedError(lockPath, moved);
      }
      removeQuietly(aside);
    }
    throw new Error(`could not take ${lockPath}: other processes keep changing it`);
  } finally {
    removeQuietly(mine);
  }
}
