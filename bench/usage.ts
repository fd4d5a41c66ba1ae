import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

// What a scenario cost, read from /proc while it ran: the service process's CPU time and resident
// set, and the CPU time of the PostgreSQL server's processes. Requests per second alone hide a
// service that is fast because it burns both cores; CPU per request does not. Everything here is
// Linux-only and answers null elsewhere, so the bench still runs (without these columns) on a Mac.

/** Resource use of one scenario; null where /proc could not tell. */
export type ScenarioUsage = {
  /** VmHWM of the service after a reset at the start (or since it started, where the reset is refused). */
  serverPeakRssMb: number | null;
  /** The largest VmRSS sampled every RSS_SAMPLE_MS during the scenario. */
  serverSampledPeakRssMb: number | null;
  /** utime + stime of the service process over the scenario. */
  serviceCpuMs: number | null;
  /** utime + stime of every process whose comm is `postgres` (the whole server, anyone's load). */
  postgresCpuMs: number | null;
  /** The part of postgresCpuMs spent by backends connected to the service's own database. */
  postgresDatabaseCpuMs: number | null;
};

const RSS_SAMPLE_MS = 100;

/** Clock ticks per second of utime/stime: 100 on every Linux in practice, asked at each start. */
export function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/** What the bench reads of a /proc/<pid>/stat line; ticks are clock ticks (CLK_TCK). */
export type ProcStat = {
  comm: string;
  /** utime + stime: the process's own CPU. */
  cpuTicks: number;
  /** cutime + cstime: the CPU of its children that ended and were waited for. */
  childrenCpuTicks: number;
};

/**
 * Parses a /proc/<pid>/stat line. The comm is in parentheses and may itself hold spaces and
 * parentheses, so the fields are counted from the last ')'.
 */
export function parseProcStat(line: string): ProcStat | null {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // After ')': state is field 3, so utime, stime, cutime, cstime (fields 14 to 17) are at 11 to 14.
  const [utime, stime, cutime, cstime] = line
    .slice(close + 2)
    .trim()
    .split(' ')
    .slice(11, 15)
    .map(Number);
  if (![utime, stime, cutime, cstime].every((n) => Number.isFinite(n))) return null;
  return {
    comm: line.slice(open + 1, close),
    cpuTicks: (utime as number) + (stime as number),
    childrenCpuTicks: (cutime as number) + (cstime as number),
  };
}

function readStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** VmRSS of a process in MiB, or null. */
export function residentMb(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] !== undefined ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/** Every postgres process's CPU, and whether it is a backend of the measured database. */
export type PostgresSnapshot = Map<
  number,
  { cpuTicks: number; childrenCpuTicks: number; ofDatabase: boolean }
>;

export function postgresSnapshot(database: string | null): PostgresSnapshot | null {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return null;
  }
  const snapshot: PostgresSnapshot = new Map();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    const stat = readStat(pid);
    if (stat === null || stat.comm !== 'postgres') continue;
    const { cpuTicks, childrenCpuTicks } = stat;
    snapshot.set(pid, { cpuTicks, childrenCpuTicks, ofDatabase: backendOf(pid, database) });
  }
  return snapshot;
}

/** A backend's title (its cmdline) reads "postgres: [cluster: ]<user> <database> <client> <state>". */
function backendOf(pid: number, database: string | null): boolean {
  if (database === null) return false;
  try {
    const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return title.split(/\s+/).includes(database);
  } catch {
    return false;
  }
}

/** The latest sample of every process seen; a process stays a backend of the database once seen so. */
export function mergeSnapshots(seen: PostgresSnapshot, sample: PostgresSnapshot): PostgresSnapshot {
  const merged: PostgresSnapshot = new Map(seen);
  for (const [pid, now] of sample) {
    merged.set(pid, { ...now, ofDatabase: now.ofDatabase || (seen.get(pid)?.ofDatabase ?? false) });
  }
  return merged;
}

/**
 * CPU ms of the PostgreSQL server between `before` and `after`, and of the database's backends.
 * The whole: the sum over processes of own + reaped children's CPU, after minus before. A backend
 * that ended in between is in its parent's (the postmaster's) children's CPU by then, whole, and
 * its share before `before` is in the before sum: so the difference is exact. The database's
 * backends: each one's last sample (`seen`, the merge of the samples taken in between) minus its
 * CPU before; one that ended loses at most the time since its last sample.
 */
export function postgresCpuDeltaMs(
  before: PostgresSnapshot,
  seen: PostgresSnapshot,
  after: PostgresSnapshot,
  ticksPerSecond: number,
): { allMs: number; databaseMs: number } {
  const total = (snapshot: PostgresSnapshot) =>
    [...snapshot.values()].reduce((sum, p) => sum + p.cpuTicks + p.childrenCpuTicks, 0);
  const all = Math.max(0, total(after) - total(before));
  let database = 0;
  for (const [pid, last] of seen) {
    if (last.ofDatabase) database += Math.max(0, last.cpuTicks - (before.get(pid)?.cpuTicks ?? 0));
  }
  const ms = (ticks: number) => Math.round((ticks * 1000) / ticksPerSecond);
  return { allMs: ms(all), databaseMs: ms(database) };
}

const POSTGRES_SAMPLE_MS = 250;

/** Samples the PostgreSQL server's processes until stop(); null where /proc is not readable. */
export function startPostgresMeter(
  database: string | null,
): { stop(): { allMs: number; databaseMs: number } } | null {
  const ticksPerSecond = clockTicksPerSecond();
  const before = postgresSnapshot(database);
  if (before === null) return null;
  let seen = before;
  const sampler = setInterval(() => {
    const sample = postgresSnapshot(database);
    if (sample !== null) seen = mergeSnapshots(seen, sample);
  }, POSTGRES_SAMPLE_MS);
  sampler.unref();
  return {
    stop() {
      clearInterval(sampler);
      const after = postgresSnapshot(database) ?? seen;
      return postgresCpuDeltaMs(before, mergeSnapshots(seen, after), after, ticksPerSecond);
    },
  };
}

/** Resets the peak RSS of a process (Linux: `5` into clear_refs). False where that is not allowed. */
export function resetPeakRss(pid: number): boolean {
  try {
    fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** VmHWM of a process in MiB, or null where /proc is not available. */
export function peakRssMb(pid: number): number | null {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] !== undefined ? Math.round(Number(match[1]) / 1024) : null;
  } catch {
    return null;
  }
}

/**
 * Starts measuring the service process `pid`, and the PostgreSQL server when `postgresDatabase` names
 * the service's database (null on PGlite, whose database runs inside the service process); stop()
 * ends the sampling and answers what the scenario cost.
 */
export function startUsage(pid: number, postgresDatabase: string | null): { stop(): ScenarioUsage } {
  const ticksPerSecond = clockTicksPerSecond();
  resetPeakRss(pid);
  const serviceBefore = readStat(pid);
  const postgres = postgresDatabase === null ? null : startPostgresMeter(postgresDatabase);
  let sampledPeak = residentMb(pid);
  const sampler = setInterval(() => {
    const rss = residentMb(pid);
    if (rss !== null) sampledPeak = Math.max(sampledPeak ?? 0, rss);
  }, RSS_SAMPLE_MS);
  sampler.unref();
  return {
    stop() {
      clearInterval(sampler);
      const serviceAfter = readStat(pid);
      const postgresCpu = postgres?.stop() ?? null;
      const rss = residentMb(pid);
      return {
        serverPeakRssMb: peakRssMb(pid),
        serverSampledPeakRssMb: rss === null ? sampledPeak : Math.max(sampledPeak ?? 0, rss),
        serviceCpuMs:
          serviceBefore !== null && serviceAfter !== null
            ? Math.round(((serviceAfter.cpuTicks - serviceBefore.cpuTicks) * 1000) / ticksPerSecond)
            : null,
        postgresCpuMs: postgresCpu?.allMs ?? null,
        postgresDatabaseCpuMs: postgresCpu?.databaseMs ?? null,
      };
    },
  };
}
