import fs from 'node:fs';
import path from 'node:path';
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

// Loaded into the service by bench/memory-probe.ts (`node --expose-gc --import <this file>`), never
// by the service itself. On SIGUSR2 it writes, to MEMORY_PROBE_DIR/<n>.json, the process's memory as
// it is (RSS, V8 heap, external, array buffers, code) and again after a full GC, and, when
// MEMORY_PROBE_SNAPSHOTS=1, a heap snapshot taken after that GC: what the driver compares between
// phases of load. A signal rather than an HTTP route: the service under test stays unchanged.

const dir = process.env.MEMORY_PROBE_DIR;
const withSnapshots = process.env.MEMORY_PROBE_SNAPSHOTS === '1';
const MiB = 1024 * 1024;

type Sample = {
  rssMb: number;
  heapTotalMb: number;
  heapUsedMb: number;
  externalMb: number;
  arrayBuffersMb: number;
  codeMb: number;
  mallocedMb: number;
  /** Per V8 space: MB in use / MB committed (what RSS sees of it). */
  spaces: Record<string, string>;
  /** /proc/self/smaps_rollup (Linux): anonymous memory (heaps, malloc) apart from mapped files (code). */
  anonymousMb: number | null;
  fileMb: number | null;
  threads: number | null;
};

/** A `Name:   123 kB` field of a /proc file, in MB; null where /proc is not there. */
function procField(file: string, field: string): number | null {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(fs.readFileSync(file, 'utf8'));
    return match?.[1] === undefined ? null : Math.round(Number(match[1]) / 102.4) / 10;
  } catch {
    return null;
  }
}

/** Resident pages of mapped files (the node binary, shared libraries): RSS less anonymous memory. */
function fileResidentMb(): number | null {
  const rss = procField('/proc/self/smaps_rollup', 'Rss');
  const anonymous = procField('/proc/self/smaps_rollup', 'Anonymous');
  return rss === null || anonymous === null ? null : Math.round((rss - anonymous) * 10) / 10;
}

function sample(): Sample {
  const usage = process.memoryUsage();
  const heap = v8.getHeapStatistics();
  const code = v8.getHeapCodeStatistics();
  const mb = (bytes: number) => Math.round((bytes / MiB) * 10) / 10;
  return {
    rssMb: mb(usage.rss),
    heapTotalMb: mb(usage.heapTotal),
    heapUsedMb: mb(usage.heapUsed),
    externalMb: mb(usage.external),
    arrayBuffersMb: mb(usage.arrayBuffers),
    codeMb: mb(code.code_and_metadata_size + code.bytecode_and_metadata_size),
    mallocedMb: mb(heap.malloced_memory),
    spaces: Object.fromEntries(
      v8
        .getHeapSpaceStatistics()
        .filter((s) => s.space_size > 0)
        .map((s) => [s.space_name, `${mb(s.space_used_size)} / ${mb(s.physical_space_size)}`] as const),
    ),
    anonymousMb: procField('/proc/self/smaps_rollup', 'Anonymous'),
    fileMb: fileResidentMb(),
    threads: (() => {
      try {
        return Number(
          /^Threads:\s+(\d+)$/m.exec(fs.readFileSync('/proc/self/status', 'utf8'))?.[1] ?? Number.NaN,
        );
      } catch {
        return null;
      }
    })(),
  };
}

if (dir !== undefined) {
  let sequence = 0;
  // Time spent in garbage collection since the start (the cost of a smaller heap), by kind.
  const gcMs = { minor: 0, major: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
      if (kind === 1) gcMs.minor += entry.duration;
      else gcMs.major += entry.duration;
    }
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    const n = sequence++;
    const cpu = process.cpuUsage();
    const work = {
      cpuSeconds: Math.round((cpu.user + cpu.system) / 10_000) / 100,
      gcMinorMs: Math.round(gcMs.minor),
      gcMajorMs: Math.round(gcMs.major),
    };
    const before = sample();
    const gc = (globalThis as { gc?: () => void }).gc;
    // Twice: the first may only promote what the second frees.
    gc?.();
    gc?.();
    const after = sample();
    const snapshot = withSnapshots ? v8.writeHeapSnapshot(path.join(dir, `${n}.heapsnapshot`)) : null;
    const file = path.join(dir, `${n}.json`);
    fs.writeFileSync(`${file}.tmp`, JSON.stringify({ ...work, before, after, snapshot }));
    fs.renameSync(`${file}.tmp`, file);
  });
}
