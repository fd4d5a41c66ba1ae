import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { loadSeconds } from './common.ts';
import { startPostgresMeter } from './usage.ts';

// The yardstick the issues measure the service against: `pgbench -N` (TPC-B-like without the
// updates of the two small tables, so without their contention) on the same PostgreSQL and the
// same machine, in the same run, at the service's connection count. Its transactions per second
// are what the database alone can do for simple write transactions here.

const run = promisify(execFile);

export const PGBENCH_SCALE = 10;
export const PGBENCH_DURATION_SECONDS = loadSeconds(10);

export type PgbenchResult = {
  clients: number;
  threads: number;
  scale: number;
  durationSeconds: number;
  tps: number;
  latencyAverageMs: number | null;
  transactions: number | null;
  /** CPU of every postgres process during the `-N` run (null where /proc is not there). */
  postgresCpuMs: number | null;
  /** The part of it spent by pgbench's own backends. */
  postgresDatabaseCpuMs: number | null;
};

type PgbenchSummary = Pick<PgbenchResult, 'tps' | 'latencyAverageMs' | 'transactions'>;

/** Parses pgbench's summary: "tps = 1234.5 (without initial connection time)". */
export function parsePgbenchOutput(output: string): PgbenchSummary {
  const tps = /tps = ([\d.]+) \((?:without|excluding) initial connection/.exec(output)?.[1];
  if (tps === undefined) throw new Error(`pgbench printed no tps line:\n${output.slice(-500)}`);
  const latency = /latency average = ([\d.]+) ms/.exec(output)?.[1];
  const transactions = /number of transactions actually processed: (\d+)/.exec(output)?.[1];
  return {
    tps: Number(tps),
    latencyAverageMs: latency === undefined ? null : Number(latency),
    transactions: transactions === undefined ? null : Number(transactions),
  };
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
    // The server's CPU per transaction is the anchor of the scenarios' PostgreSQL CPU per request.
    const meter = startPostgresMeter(name);
    let stdout: string;
    let cpu: { allMs: number; databaseMs: number } | null;
    try {
      ({ stdout } = await run(
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
      ));
    } finally {
      // Stopped on failure too: its sampling timer would keep the bench alive.
      cpu = meter?.stop() ?? null;
    }
    return {
      clients,
      threads,
      scale: PGBENCH_SCALE,
      durationSeconds: PGBENCH_DURATION_SECONDS,
      ...parsePgbenchOutput(stdout),
      postgresCpuMs: cpu?.allMs ?? null,
      postgresDatabaseCpuMs: cpu?.databaseMs ?? null,
    };
  } finally {
    await adminQuery(`drop database if exists ${name} with (force)`);
  }
}
