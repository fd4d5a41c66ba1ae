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

export const NO_USAGE: ScenarioUsage = {
  serverPeakRssMb: null,
  serverSampledPeakRssMb: null,
  serviceCpuMs: null,
  postgresCpuMs: null,
  postgresDatabaseCpuMs: null,
};

const RSS_SAMPLE_MS = 100;

/** Clock ticks per second of utime/stime; 100 on every Linux in practice, asked once. */
export function clockTicksPerSecond(): number {
  try {
    const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(ticks) && ticks > 0 ? ticks : 100;
  } catch {
    return 100;
  }
}

/**
 * The comm, utime and stime (ticks) of a /proc/<pid>/stat line. The comm is in parentheses and may
 * itself hold spaces and parentheses, so the fields are counted from the last ')'.
 */
export function parseProcStat(line: string): { comm: string; cpuTicks: number } | null {
  const open = line.indexOf('(');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // After ')': state is field 3, so utime (field 14) and stime (field 15) are at indices 11 and 12.
  const fields = line
    .slice(close + 2)
    .trim()
    .split(' ');
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  if (!Number.isFinite(utime) || !Number.isFinite(stime)) return null;
  return { comm: line.slice(open + 1, close), cpuTicks: utime + stime };
}

function readStat(pid: number): { comm: string; cpuTicks: number } | null {
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

/** CPU ticks of every postgres process, and whether it is a backend of `database`. */
export type PostgresSnapshot = Map<number, { cpuTicks: number; ofDatabase: boolean }>;

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
    snapshot.set(pid, { cpuTicks: stat.cpuTicks, ofDatabase: backendOf(pid, database) });
  }
  return snapshot;
}

/** A backend's title (its cmdline) reads "postgres: <user> <database> <client> <state>". */
function backendOf(pid: number, database: string | null): boolean {
  if (database === null) return false;
  try {
    const title = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    return title.split(/\s+/).includes(database);
  } catch {
    return false;
  }
}

/**
 * CPU ms the postgres processes spent between two snapshots. A process that started in between
 * counts whole; one that ended in between is lost (its last ticks cannot be read), which
 * undercounts only when connections close during a scenario: the service's pool keeps them open.
 */
export function postgresCpuDeltaMs(
  before: PostgresSnapshot,
  after: PostgresSnapshot,
  ticksPerSecond: number,
): { allMs: number; databaseMs: number } {
  let all = 0;
  let database = 0;
  for (const [pid, end] of after) {
    const delta = end.cpuTicks - (before.get(pid)?.cpuTicks ?? 0);
    if (delta <= 0) continue;
    all += delta;
    if (end.ofDatabase) database += delta;
  }
  const ms = (ticks: number) => Math.round((ticks * 1000) / ticksPerSecond);
  return { allMs: ms(all), databaseMs: ms(database) };
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
  const measurePostgres = postgresDatabase !== null;
  const postgresBefore = measurePostgres ? postgresSnapshot(postgresDatabase) : null;
  let sampledPeak = residentMb(pid);
  const sampler = setInterval(() => {
    const rss = residentMb(pid);
    if (rss !== null) sampledPeak = Math.max(sampledPeak ?? 0, rss);
  }, RSS_SAMPLE_MS);
  return {
    stop() {
      clearInterval(sampler);
      const serviceAfter = readStat(pid);
      const postgresAfter = measurePostgres ? postgresSnapshot(postgresDatabase) : null;
      const postgres =
        postgresBefore !== null && postgresAfter !== null
          ? postgresCpuDeltaMs(postgresBefore, postgresAfter, ticksPerSecond)
          : null;
      const rss = residentMb(pid);
      return {
        serverPeakRssMb: peakRssMb(pid),
        serverSampledPeakRssMb: rss === null ? sampledPeak : Math.max(sampledPeak ?? 0, rss),
        serviceCpuMs:
          serviceBefore !== null && serviceAfter !== null
            ? Math.round(((serviceAfter.cpuTicks - serviceBefore.cpuTicks) * 1000) / ticksPerSecond)
            : null,
        postgresCpuMs: postgres?.allMs ?? null,
        postgresDatabaseCpuMs: postgres?.databaseMs ?? null,
      };
    },
  };
}
