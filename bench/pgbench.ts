import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';

// The yardstick the issues measure the service against: `pgbench -N` (TPC-B-like without the
// updates of the two small tables, so without their contention) on the same PostgreSQL and the
// same machine, in the same run, at the service's connection count. Its transactions per second
// are what the database alone can do for simple write transactions here.

const run = promisify(execFile);

export const PGBENCH_SCALE = 10;
export const PGBENCH_DURATION_SECONDS = 10;

export type PgbenchResult = {
  clients: number;
  threads: number;
  scale: number;
  durationSeconds: number;
  tps: number;
  latencyAverageMs: number | null;
};

/** Parses pgbench's summary: "tps = 1234.5 (without initial connection time)". */
export function parsePgbenchOutput(output: string): { tps: number; latencyAverageMs: number | null } {
  const tps = /tps = ([\d.]+) \((?:without|excluding) initial connection/.exec(output)?.[1];
  if (tps === undefined) throw new Error(`pgbench printed no tps line:\n${output.slice(-500)}`);
  const latency = /latency average = ([\d.]+) ms/.exec(output)?.[1];
  return { tps: Number(tps), latencyAverageMs: latency === undefined ? null : Number(latency) };
}

/**
 * Creates a scratch database, initialises it and runs `pgbench -N` against it; the database is
 * dropped afterwards. `adminUrl` is a postgres:// URL whose user may create databases.
 */
export async function runPgbench(
  adminUrl: string,
  adminQuery: (statement: string) => Promise<void>,
  clients: number,
): Promise<PgbenchResult> {
  const name = `billrail_pgbench_${randomBytes(6).toString('hex')}`;
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const threads = 2;
  await adminQuery(`create database ${name}`);
  try {
    await run('pgbench', ['-i', '-q', '-s', String(PGBENCH_SCALE), url.toString()], { timeout: 120_000 });
    const { stdout } = await run(
      'pgbench',
      [
        '-N',
        '-c',
        String(clients),
        '-j',
        String(threads),
        '-T',
        String(PGBENCH_DURATION_SECONDS),
        url.toString(),
      ],
      { timeout: (PGBENCH_DURATION_SECONDS + 60) * 1000 },
    );
    return {
      clients,
      threads,
      scale: PGBENCH_SCALE,
      durationSeconds: PGBENCH_DURATION_SECONDS,
      ...parsePgbenchOutput(stdout),
    };
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}
