import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import {
  mergeSnapshots,
  type PostgresSnapshot,
  parseProcStat,
  postgresCpuDeltaMs,
  startUsage,
} from '../../bench/usage.ts';

// The report's CPU per request is only as right as these readings of /proc: a field miscounted in
// /proc/<pid>/stat, or a backend that ended during a scenario counted twice or not at all, would
// put a wrong cost beside every scenario.

describe('parseProcStat', () => {
  it('reads utime+stime and cutime+cstime after the last parenthesis, whatever the comm holds', () => {
    // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime …
    const line = '4242 (post gres) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 1 0 100 1000 10';
    assert.deepEqual(parseProcStat(line), { comm: 'post gres) (x)', cpuTicks: 300, childrenCpuTicks: 10 });
  });

  it('refuses a line it cannot read', () => {
    assert.equal(parseProcStat('garbage'), null);
    assert.equal(parseProcStat('1 (x) S 1 2'), null);
  });
});

const proc = (cpuTicks: number, childrenCpuTicks = 0, ofDatabase = false) => ({
  cpuTicks,
  childrenCpuTicks,
  ofDatabase,
});

describe('postgresCpuDeltaMs', () => {
  it('counts a backend that ended in between once, through the postmaster’s reaped children', () => {
    // pid 1 the postmaster; 2 a backend of the database that ran 30 ticks before, 20 more, and
    // ended (its 50 ticks now in the postmaster's children); 3 a backend started in between.
    const before: PostgresSnapshot = new Map([
      [1, proc(100, 0)],
      [2, proc(30, 0, true)],
    ]);
    const sample: PostgresSnapshot = new Map([
      [1, proc(101, 0)],
      [2, proc(45, 0, true)],
      [3, proc(5, 0, true)],
    ]);
    const after: PostgresSnapshot = new Map([
      [1, proc(102, 50)],
      [3, proc(12, 0, true)],
    ]);
    const seen = mergeSnapshots(mergeSnapshots(before, sample), after);
    // All: (102 + 50 + 12) - (100 + 30) = 34 ticks = 340 ms at 100 ticks/s.
    // The database's backends: 2 from 30 to its last sample 45, 3 from nothing to 12: 27 ticks.
    assert.deepEqual(postgresCpuDeltaMs(before, seen, after, 100), { allMs: 340, databaseMs: 270 });
  });

  it('keeps a process counted as the database’s once a sample saw it so', () => {
    const merged = mergeSnapshots(new Map([[7, proc(1, 0, true)]]), new Map([[7, proc(2, 0, false)]]));
    assert.deepEqual(merged.get(7), proc(2, 0, true));
  });
});

describe('startUsage', () => {
  it('measures the CPU and resident set of a process that works while it runs', async (t) => {
    // The child spins until it has used ~200 ms of CPU, then says so and waits to be killed.
    const child = spawn(
      process.execPath,
      [
        '-e',
        `const s = process.cpuUsage(); const held = Buffer.alloc(32 * 2 ** 20, 1);
         while ((process.cpuUsage(s).user + process.cpuUsage(s).system) < 200000) {}
         console.log('done', held.length); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    t.after(() => child.kill('SIGKILL'));
    assert.ok(child.pid !== undefined);
    const usage = startUsage(child.pid, null);
    await new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('done')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before working`)));
    });
    const measured = usage.stop();
    assert.ok((measured.serviceCpuMs ?? 0) >= 100, `CPU ${measured.serviceCpuMs} ms`);
    assert.ok((measured.serverPeakRssMb ?? 0) >= 32, `peak RSS ${measured.serverPeakRssMb} MB`);
    assert.ok(
      (measured.serverSampledPeakRssMb ?? 0) >= 32,
      `sampled RSS ${measured.serverSampledPeakRssMb} MB`,
    );
    assert.equal(measured.postgresCpuMs, null);
  });
});
