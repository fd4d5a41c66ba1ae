import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// The soak's service processes: each one a child it can SIGKILL and start again with the same
// command and environment, its output kept in a log file of its own (the soak's log folder) and
// its last lines in memory for the report when something goes wrong.

const OUTPUT_LINES_MAX = 200;
const STARTUP_TIMEOUT_MS = 180_000;
const POLL_MS = 200;

export type ServiceKind = 'api' | 'worker' | 'sandbox';

export type ServiceSpec = {
  name: string;
  kind: ServiceKind;
  /** Node arguments after the executable: the entry point and its flags. */
  args: string[];
  env: Record<string, string>;
  /** Where an HTTP process answers; workers have none. */
  baseUrl: string | null;
};

export type ServiceProcess = {
  spec: ServiceSpec;
  pid(): number | undefined;
  output(): string;
  /** Starts the process and waits until it is ready (readiness() true). */
  start(): Promise<void>;
  /** SIGKILL: no graceful stop, as when a machine or a container dies. */
  kill(): Promise<void>;
  /** SIGTERM and wait for the exit (the end of the soak). */
  stop(): Promise<void>;
  /** Whether it answers as ready now: /readyz 200 (HTTP), its "started" log line (workers). */
  ready(): Promise<boolean>;
};

export function serviceProcess(spec: ServiceSpec, repoRoot: string, logDir: string): ServiceProcess {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let startedLine = false;
  const lines: string[] = [];
  const log = fs.createWriteStream(path.join(logDir, `${spec.name}.log`), { flags: 'a' });

  const keep = (chunk: Buffer) => {
    log.write(chunk);
    for (const line of chunk.toString('utf8').split('\n')) {
      if (line === '') continue;
      lines.push(line);
      // Pino's line of main.ts once HTTP (if any) and the workers are up.
      if (line.includes('"billrail started"')) startedLine = true;
    }
    if (lines.length > OUTPUT_LINES_MAX) lines.splice(0, lines.length - OUTPUT_LINES_MAX);
  };

  const ready = async (): Promise<boolean> => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return false;
    if (spec.baseUrl === null) return startedLine;
    const probe = spec.kind === 'sandbox' ? '/__sandbox/clock' : '/readyz';
    try {
      const response = await fetch(`${spec.baseUrl}${probe}`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      return response.status === 200;
    } catch {
      return false;
    }
  };

  const start = async () => {
    startedLine = false;
    log.write(`\n--- soak: starting ${spec.name} at ${new Date().toISOString()}\n`);
    const spawned = spawn(process.execPath, spec.args, {
      cwd: repoRoot,
      env: spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = spawned;
    spawned.stdout?.on('data', keep);
    spawned.stderr?.on('data', keep);
    exited = new Promise((resolve) => spawned.once('exit', () => resolve()));
    const deadline = Date.now() + STARTUP_TIMEOUT_MS;
    while (!(await ready())) {
      if (spawned.exitCode !== null || spawned.signalCode !== null)
        throw new Error(`${spec.name} exited before it was ready:\n${lines.slice(-30).join('\n')}`);
      if (Date.now() > deadline)
        throw new Error(`${spec.name} was not ready within ${STARTUP_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  };

  const signal = async (name: NodeJS.Signals) => {
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(name);
    await exited;
  };

  return {
    spec,
    pid: () => child?.pid,
    output: () => lines.join('\n'),
    start,
    ready,
    kill: () => signal('SIGKILL'),
    async stop() {
      await signal('SIGTERM');
      log.end();
    },
  };
}

/** Polls until the process is ready again; the time it took, in ms. */
export async function untilReady(service: ServiceProcess, timeoutMs = STARTUP_TIMEOUT_MS): Promise<number> {
  const started = performance.now();
  while (!(await service.ready())) {
    if (performance.now() - started > timeoutMs)
      throw new Error(`${service.spec.name} was not ready again within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
  return Math.round(performance.now() - started);
}
