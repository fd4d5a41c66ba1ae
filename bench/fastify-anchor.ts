import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import {
  CONNECTIONS,
  fromAutocannon,
  loadSeconds,
  measured,
  REQUEST_TIMEOUT_SECONDS,
  type ScenarioResult,
} from './common.ts';

// The HTTP anchor of the report: a bare Fastify route (bench/anchor-app.ts) in a child process on
// the same Node, loaded by autocannon as the scenarios load the service (same connections, same
// duration as getWallet). An HTTP scenario's rate divided by this one's says how much of the
// machine's HTTP capacity the service's own work leaves.

export const ANCHOR_DURATION_SECONDS = loadSeconds(10);
const READY_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 5_000;

const anchorApp = path.join(path.dirname(fileURLToPath(import.meta.url)), 'anchor-app.ts');

/** Starts the anchor app; resolves with its base URL once it prints where it listens. */
function startAnchorApp(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => reject(new Error(`the Fastify anchor was not listening within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const line = output.split('\n').find((l) => l.startsWith('{"listening"'));
      if (line === undefined) return;
      clearTimeout(timer);
      resolve((JSON.parse(line) as { listening: string }).listening);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the Fastify anchor exited (code ${code}) before listening:\n${output}`));
    });
  });
}

/**
 * Runs the bare Fastify route under load and answers it as a scenario result (database 'none').
 * `track` is told of the child so that the bench can kill it if it dies first.
 */
export async function fastifyAnchorScenario(track: (child: ChildProcess) => void): Promise<ScenarioResult> {
  const child = spawn(process.execPath, [anchorApp], { stdio: ['ignore', 'pipe', 'pipe'] });
  track(child);
  try {
    const baseUrl = await startAnchorApp(child);
    if (child.pid === undefined) throw new Error('the Fastify anchor has no pid');
    const { value, usage } = await measured({ pid: child.pid, postgresDatabase: null }, () =>
      autocannon({
        url: `${baseUrl}/`,
        connections: CONNECTIONS,
        duration: ANCHOR_DURATION_SECONDS,
        timeout: REQUEST_TIMEOUT_SECONDS,
      }),
    );
    return fromAutocannon(
      'none',
      'bare Fastify route',
      `GET one JSON route, no database, ${CONNECTIONS} conns, ${ANCHOR_DURATION_SECONDS}s`,
      value,
      usage,
    );
  } finally {
    await stopChild(child);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
